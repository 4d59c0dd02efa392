package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// nameValidator checks rill_runtime's `name` at plan time (provisioner.ValidateName).
type nameValidator struct{}

var _ validator.String = nameValidator{}

func (nameValidator) Description(context.Context) string {
	return fmt.Sprintf("%s, at most %d characters", provisioner.NameRule, provisioner.NameMaxLength)
}

func (v nameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (nameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := provisioner.ValidateName(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid runtime name", "The name "+err.Error()+".")
	}
}

// conflictDetail says what holds a runtime's ID or name, and how to take it over: Terraform prints the
// resource's address with the diagnostic; the import ID is exact.
func conflictDetail(provisionerName string, c *provisioner.IDConflictError) string {
	id := importID(c.Provisioner, c.ID)
	detail := fmt.Sprintf("Provisioner %q: %v.\n\nNothing was changed. If that runtime is this one (for example left by an "+
		"earlier apply), import it under this resource's address (shown above) and give the resource the same name:\n\n"+
		"  terraform import <address> %s\n\nor, in the configuration (Terraform 1.5+):\n\n  import {\n    to = <address>\n    id = %q\n  }",
		provisionerName, c, id, id)
	if c.Provisioner != provisionerName {
		detail += fmt.Sprintf("\n\nThe import needs `provisioner_name = %q`, its owner.", c.Provisioner)
	}
	return detail + "\nOtherwise choose another name."
}

// importMarkKey is a private-state key that ImportState sets and the Read that follows clears: that
// Read checks the runtime's owner and restores what the provisioner recorded.
const importMarkKey = "importing"

func setImportMark(ctx context.Context, private privateState) diag.Diagnostics {
	return private.SetKey(ctx, importMarkKey, []byte("true"))
}

// importMarked reports whether this Read follows an import, leaving the mark in place.
func importMarked(ctx context.Context, private privateState) bool {
	if private == nil {
		return false
	}
	raw, diags := private.GetKey(ctx, importMarkKey)
	return !diags.HasError() && len(raw) > 0
}

// takeImportMark reports whether this Read follows an import, and clears the mark.
func takeImportMark(ctx context.Context, req, resp privateState) (bool, diag.Diagnostics) {
	if req == nil || resp == nil {
		return false, nil
	}
	raw, diags := req.GetKey(ctx, importMarkKey)
	if diags.HasError() || len(raw) == 0 {
		return false, diags
	}
	diags.Append(resp.SetKey(ctx, importMarkKey, nil)...)
	return true, diags
}

// adoptImported checks that an imported runtime belongs to the provisioner it was imported through,
// and restores the arguments the provisioner recorded (name, environment, annotations; version and
// hibernated come with every refresh), so that generated configuration plans no change.
func adoptImported(ctx context.Context, m *runtimeModel, provisionerName string, res *provisioner.Resource) diag.Diagnostics {
	var diags diag.Diagnostics
	o := provisioner.NewRuntimeObservation(res.State)
	if o.Owner != "" && o.Owner != provisionerName {
		diags.AddAttributeError(path.Root("provisioner_name"), "Runtime belongs to another provisioner",
			fmt.Sprintf("Runtime %s was allocated by provisioner %q, not %q. Importing it through %q would let this configuration "+
				"resize or free another pool's runtime. If it is meant to be managed here, import it as %q with "+
				"`provisioner_name = %q`.", res.ID, o.Owner, provisionerName, provisionerName, o.Owner+"/"+res.ID, o.Owner))
		return diags
	}
	if o.Name != "" {
		m.Name = types.StringValue(o.Name)
	}
	if o.Environment != "" {
		m.Environment = types.StringValue(o.Environment)
	}
	if len(o.Annotations) > 0 {
		v, d := types.MapValueFrom(ctx, types.StringType, o.Annotations)
		diags.Append(d...)
		m.Annotations = v
	}
	return diags
}
