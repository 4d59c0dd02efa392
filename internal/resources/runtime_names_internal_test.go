package resources

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// The plan of a new named runtime that a static pool holds already says that the apply adopts it
// (another workspace's runtime of that name would then be managed by two states, and destroyed by
// either) instead of warning that no host has room, which an adoption needs none of. Before, a full
// pool warned "No host has room" and said nothing of the adoption. Once the command applies, it reads
// nothing.
func TestPlanOfANamedRuntimeAllocatedAlreadySaysTheApplyAdoptsIt(t *testing.T) {
	ctx := context.Background()
	pool := onePool(t) // one slot, taken by "web"; the real static pool, not the counting wrapper, answers ResourceExists
	if _, err := pool.Provision(ctx, &provisioner.Resource{ID: provisioner.NamedResourceID("pool", "web"), Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap(), Name: "web"}); err != nil {
		t.Fatal(err)
	}
	s := runtimeSchemaV0(ctx)
	plan := func(r *RuntimeResource, name string) []string {
		t.Helper()
		m := runtimeModels()["fresh plan"]
		m.Name = types.StringValue(name)
		var raw tftypes.Value
		if d := runtimeCodec.set(ctx, &raw, &m); d.HasError() {
			t.Fatal(d)
		}
		req := resource.ModifyPlanRequest{Plan: tfsdk.Plan{Schema: s, Raw: raw}, Config: tfsdk.Config{Schema: s, Raw: raw},
			State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
		resp := &resource.ModifyPlanResponse{Plan: req.Plan}
		r.ModifyPlan(ctx, req, resp)
		var summaries []string
		for _, d := range resp.Diagnostics {
			summaries = append(summaries, d.Summary())
		}
		return summaries
	}
	r := &RuntimeResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{"pool": pool.Provisioner}, Default: "pool"}}}
	for name, want := range map[string][]string{
		"web": {"Named runtime exists already: the apply adopts it"},
		"api": {"No host has room for this runtime"},
	} {
		if got := plan(r, name); !reflect.DeepEqual(got, want) {
			t.Errorf("plan of a new runtime named %q: %q, want %q", name, got, want)
		}
	}
	r.client.capacity.applying()
	if got := plan(r, "web"); len(got) != 0 {
		t.Errorf("an apply walk's plan: %q, want nothing", got)
	}
}
