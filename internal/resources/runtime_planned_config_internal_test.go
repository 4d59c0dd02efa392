package resources

import (
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// notAConfigPlanner hides a provisioner's provisioner.ConfigPlanner.
type notAConfigPlanner struct{ provisioner.Provisioner }

// The plan of a kubernetes runtime in state says the host and audience its update's Provision
// reports: its URL under the spec's host pattern as it is now, also when the state, not refreshed
// (-refresh=false), has the URL under an earlier pattern; the pattern changed alone is then a planned
// change. A provisioner that cannot plan them (the static pool, which keeps them on an update) plans
// the state's. Before, every update planned the state's, and the apply after a new pattern failed
// ("Provider produced inconsistent result after apply" for host and audience).
func TestThePlanOfAnUpdateSaysTheHostTheProvisionerGivesIt(t *testing.T) {
	set, err := provisioner.NewSet(`{"k8s": {"type": "kubernetes", "spec": {"host": "https://*.moved.rill.test", "kubeconfig_path": "`+
		filepath.Join(t.TempDir(), "absent")+`"}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set["k8s"].Close() })
	r := &RuntimeResource{resourceBase{client: &Client{Set: set, Default: "k8s"}}}

	state := runtimeModels()["full state"]
	state.Provisioner, state.Drift = types.StringValue("k8s"), types.ListValueMust(types.StringType, nil)
	pid := strings.ReplaceAll(state.ID.ValueString(), "-", "")
	state.Host, state.Audience = types.StringValue("https://"+pid+".rill.test"), types.StringValue("https://"+pid+".rill.test")
	args := provisioner.RuntimeArgs{Slots: 3, OverrideDiskGB: state.DiskGB.ValueInt64()}
	state.StorageBytes = types.Int64Value(args.StorageBytes())
	grown := state
	grown.Slots = types.NumberValue(big.NewFloat(4))
	want := "https://" + pid + ".moved.rill.test"
	for name, plan := range map[string]runtimeModel{"an update": grown, "a plan with the same arguments": state} {
		got, d := modifyRuntimePlan(t, r, &state, plan)
		if d.HasError() || got.Host.ValueString() != want || got.Audience.ValueString() != want {
			t.Errorf("%s after the host pattern changed: host %s, audience %s, %v; want %s", name, got.Host, got.Audience, d, want)
		}
	}
	planned := state
	planned.Host, planned.Audience = types.StringValue(want), types.StringValue(want)
	if got, d := modifyRuntimePlan(t, r, &planned, planned); d.HasError() || !got.Host.Equal(planned.Host) || !got.Audience.Equal(planned.Audience) {
		t.Errorf("a plan after the refresh: host %s, audience %s, %v; want %s", got.Host, got.Audience, d, want)
	}

	set["k8s"] = notAConfigPlanner{set["k8s"]}
	if got, d := modifyRuntimePlan(t, r, &state, grown); d.HasError() || !got.Host.Equal(state.Host) || !got.Audience.Equal(state.Audience) {
		t.Errorf("an update by a provisioner that is no ConfigPlanner: host %s, audience %s, %v; want the state's %s", got.Host, got.Audience, d, state.Host)
	}
}
