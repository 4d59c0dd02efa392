package resources

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// A resource in state whose provisioner the set no longer has (its entry renamed or removed) fails
// its refresh, update, destroy and plan saying that it stays with that provisioner and how to go on.
// Before, the error only listed the set's provisioners, as for a typo in a new resource's
// provisioner_name, which still gets just that.
func TestAResourceWhoseProvisionerLeftTheSetSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	client := &Client{Set: map[string]provisioner.Provisioner{"pool-a": onePool(t)}, Default: "pool-a"}
	const advice = `Put "static-pool" back into the set`
	detail := func(diags diag.Diagnostics) string {
		t.Helper()
		if len(diags) != 1 || diags[0].Summary() != "Invalid provisioner" {
			t.Fatalf("want one Invalid provisioner, got %v", diags)
		}
		return diags[0].Detail()
	}

	var diags diag.Diagnostics
	if c := startCall(ctx, client, provisioner.ResourceTypeRuntime, "static-pool", "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11", operationTimeout{op: "read", d: time.Minute}, nil, &diags); c != nil {
		t.Fatal("a call to a provisioner the set does not have")
	}
	if d := detail(diags); !strings.Contains(d, advice) || !strings.Contains(d, "terraform state rm") {
		t.Errorf("refresh of a resource of a provisioner that left the set: %s", d)
	}

	resp := &resource.ModifyPlanResponse{}
	stateName := "static-pool"
	planProvisioner(client, provisioner.ResourceTypeRuntime, types.StringNull(), &stateName, resp)
	if d := detail(resp.Diagnostics); !strings.Contains(d, advice) {
		t.Errorf("plan (-refresh=false) of it: %s", d)
	}

	diags = nil
	startCall(ctx, client, provisioner.ResourceTypeRuntime, "static-pool", "", operationTimeout{op: "read", d: time.Minute}, nil, &diags) // a create
	resp = &resource.ModifyPlanResponse{}
	planProvisioner(client, provisioner.ResourceTypeRuntime, types.StringValue("static-pool"), nil, resp) // a new resource's typo
	for what, d := range map[string]string{"create": detail(diags), "plan of a new resource": detail(resp.Diagnostics)} {
		if strings.Contains(d, advice) {
			t.Errorf("%s naming an unknown provisioner got the advice for a resource in state: %s", what, d)
		}
	}
}

// The create of a rill_clickhouse naming a provisioner the set does not have (a provider configuration
// unknown at plan time skips the plan's check; a set changed between plan and apply) gets the plain
// error, as a rill_runtime's create does. Before, Create handed its new random ID to startCall, and the
// error told of a resource in state whose provisioner left the set: "its state records the
// provisioner", put it back, or `terraform state rm` it.
func TestAClickHouseCreateNamingAnUnknownProvisionerGetsThePlainError(t *testing.T) {
	ctx := context.Background()
	r := &ClickHouseResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{"pool-a": onePool(t)}, Default: "pool-a"}}}
	s := clickhouseSchemaV0(ctx)
	plan := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	if d := plan.SetAttribute(ctx, path.Root("provisioner_name"), "ch"); d.HasError() {
		t.Fatal(d)
	}
	resp := &resource.CreateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	r.Create(ctx, resource.CreateRequest{Plan: plan, Config: tfsdk.Config{Schema: s, Raw: plan.Raw}}, resp)
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary() != "Invalid provisioner" {
		t.Fatalf("want one Invalid provisioner, got %v", resp.Diagnostics)
	}
	if d := resp.Diagnostics[0].Detail(); !strings.Contains(d, `provisioner "ch" is not in the provider's provisioner set`) ||
		strings.Contains(d, "its state records the provisioner") || strings.Contains(d, "terraform state rm") {
		t.Errorf("a create naming an unknown provisioner got the advice for a resource in state: %s", d)
	}
}

// An import whose ID names a provisioner the set does not have (a typo, or the name of another
// configuration's set) fails at the import, saying what the ID's first part is. Before, the import
// passed and its Read failed with the advice for a resource in state whose provisioner left the set
// ("its state records the provisioner", put it back into the set, `terraform state rm` it).
func TestAnImportNamingAnUnknownProvisionerSaysWhatTheIDMustName(t *testing.T) {
	ctx := context.Background()
	client := &Client{Set: map[string]provisioner.Provisioner{"pool-a": onePool(t)}, Default: "pool-a"}
	for name, tc := range map[string]struct {
		r resource.ResourceWithImportState
		s schema.Schema
	}{
		"rill_runtime":    {&RuntimeResource{resourceBase{client: client}}, runtimeSchemaV0(ctx)},
		"rill_clickhouse": {&ClickHouseResource{resourceBase{client: client}}, clickhouseSchemaV0(ctx)},
	} {
		resp := &resource.ImportStateResponse{State: tfsdk.State{Schema: tc.s, Raw: tftypes.NewValue(tc.s.Type().TerraformType(ctx), nil)}}
		tc.r.ImportState(ctx, resource.ImportStateRequest{ID: "pool-b/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"}, resp)
		if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary() != "Invalid provisioner in import ID" {
			t.Fatalf("%s: want one Invalid provisioner in import ID, got %v", name, resp.Diagnostics)
		}
		if d := resp.Diagnostics[0].Detail(); !strings.Contains(d, `provisioner "pool-b" is not in the provider's provisioner set; known provisioners: pool-a`) ||
			!strings.Contains(d, `The import ID "pool-b/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11" starts with the name`) ||
			strings.Contains(d, "its state records the provisioner") || strings.Contains(d, "terraform state rm") {
			t.Errorf("%s: %s", name, d)
		}
	}
}

// An import ID whose ID part has spaces around it (copied from a padded table) is refused naming the
// ID to use. Before, a static pool looked it up as it was and said "not found" of a runtime its ledger
// holds, printing the ID so that the spaces did not show. A padded table's leading space is before the
// provisioner's name: the ID to use has none either (it was named with the space, which would then fail
// as a provisioner " pool" the set does not have, and one with only the leading space failed so).
func TestAnImportIDWithSpacesAroundTheIDSaysWhichIDToUse(t *testing.T) {
	ctx := context.Background()
	client := &Client{Set: map[string]provisioner.Provisioner{"pool": onePool(t)}, Default: "pool"}
	r, s := &RuntimeResource{resourceBase{client: client}}, runtimeSchemaV0(ctx)
	for _, id := range []string{"pool/ 3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11", "pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11\t",
		" pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11 ", " pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"} {
		resp := &resource.ImportStateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
		r.ImportState(ctx, resource.ImportStateRequest{ID: id}, resp)
		if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary() != "Invalid import ID" ||
			!strings.Contains(resp.Diagnostics[0].Detail(), `Try "pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"`) {
			t.Errorf("import of %q: want one Invalid import ID naming the ID without spaces, got %v", id, resp.Diagnostics)
		}
	}
	// A name of spaces alone is not trimmed away: "/<id>" is no ID to try.
	resp := &resource.ImportStateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	r.ImportState(ctx, resource.ImportStateRequest{ID: " /3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"}, resp)
	if !resp.Diagnostics.HasError() || strings.Contains(resp.Diagnostics[0].Detail(), `Try "/`) {
		t.Errorf(`import of " /<id>": want an error that does not offer "/<id>", got %v`, resp.Diagnostics)
	}
	// A set's provisioner whose name has the space keeps it.
	spaced := &RuntimeResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{" pool": onePool(t)}}}}
	resp = &resource.ImportStateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	spaced.ImportState(ctx, resource.ImportStateRequest{ID: " pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"}, resp)
	for _, d := range resp.Diagnostics {
		if strings.HasPrefix(d.Summary(), "Invalid") {
			t.Errorf("import through the provisioner \" pool\": %v", resp.Diagnostics)
		}
	}
}

// A read that failed (not "not found") keeps the state of a refresh; the read that follows an import
// has no state to keep, and says that nothing was imported instead.
func TestAFailedReadSaysWhatBecameOfTheState(t *testing.T) {
	unreachable := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	for _, tc := range []struct {
		importing bool
		want, not string
	}{
		{false, "(the state is kept unchanged)", "imported"},
		{true, "(nothing was imported)", "state is kept"},
	} {
		detail := readFailureDetail("pool", runtimeKind, "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11", unreachable, tc.importing)
		if !strings.Contains(detail, tc.want) || strings.Contains(detail, tc.not) || !strings.Contains(detail, "connection refused") {
			t.Errorf("importing %v: %s", tc.importing, detail)
		}
	}
}
