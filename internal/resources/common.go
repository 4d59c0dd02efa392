package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// clientFrom takes the provider's data in a resource's or data source's Configure.
func clientFrom(data any, diags *diag.Diagnostics) *Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *resources.Client, got %T; this is a bug in the provider", data))
		return nil
	}
	return client
}

// configured reports (as a diagnostic) a provider whose configuration is not known yet.
func configured(client *Client, diags *diag.Diagnostics) bool {
	if client == nil || client.Unknown {
		diags.AddError("Provider not configured",
			"The rill provider's configuration is not known yet (it depends on values computed during apply). Apply the resources it depends on first.")
		return false
	}
	return true
}

// planProvisioner resolves a resource's provisioner_name at plan time: the configured name, else the
// one in state, else the provider's default. A bad name fails the plan on the attribute; a change of
// provisioner forces replacement.
func planProvisioner(ctx context.Context, client *Client, rt provisioner.ResourceType, configured types.String, stateName *string, resp *resource.ModifyPlanResponse) {
	name := configured.ValueString()
	if configured.IsNull() && stateName != nil {
		name = *stateName
	}
	resolved, _, err := client.Resolve(name, rt)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("provisioner_name"), "Invalid provisioner", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("provisioner_name"), resolved)...)
	if stateName != nil && *stateName != resolved {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("provisioner_name"))
	}
}
