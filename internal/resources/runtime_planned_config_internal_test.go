package resources

import (
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// movedHostPattern is a set of one kubernetes provisioner "k8s" whose host pattern is now
// https://*.moved.rill.test (its kubeconfig absent: nothing here calls the cluster), and the state of
// a runtime of it refreshed under the earlier pattern https://*.rill.test, with pid its provision ID.
func movedHostPattern(t *testing.T) (set map[string]provisioner.Provisioner, state runtimeModel, pid string) {
	t.Helper()
	set, err := provisioner.NewSet(`{"k8s": {"type": "kubernetes", "spec": {"host": "https://*.moved.rill.test", "kubeconfig_path": "`+
		filepath.Join(t.TempDir(), "absent")+`"}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set["k8s"].Close() })
	state = runtimeModels()["full state"]
	state.Provisioner, state.Drift = types.StringValue("k8s"), types.ListValueMust(types.StringType, nil)
	pid = strings.ReplaceAll(state.ID.ValueString(), "-", "")
	state.Host, state.Audience = types.StringValue("https://"+pid+".rill.test"), types.StringValue("https://"+pid+".rill.test")
	args := provisioner.RuntimeArgs{Slots: 3, OverrideDiskGB: state.DiskGB.ValueInt64()}
	state.StorageBytes = types.Int64Value(args.StorageBytes())
	return set, state, pid
}

// notAConfigPlanner hides a provisioner's provisioner.ConfigPlanner.
type notAConfigPlanner struct{ provisioner.Provisioner }

// The plan of a kubernetes runtime in state says the host and audience its update's Provision
// reports: its URL under the spec's host pattern as it is now, also when the state, not refreshed
// (-refresh=false), has the URL under an earlier pattern; the pattern changed alone is then a planned
// change. A provisioner that cannot plan them (the static pool, which keeps them on an update) plans
// the state's. Before, every update planned the state's, and the apply after a new pattern failed
// ("Provider produced inconsistent result after apply" for host and audience).
func TestThePlanOfAnUpdateSaysTheHostTheProvisionerGivesIt(t *testing.T) {
	set, state, pid := movedHostPattern(t)
	r := &RuntimeResource{resourceBase{client: &Client{Set: set, Default: "k8s"}}}
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

// A plan made while the provider's configuration is not known (ledger_dsn, rill_version or
// default_provisioner from another resource's attribute, or the set itself; a plan with
// -refresh=false, as the refresh of an unconfigured provider fails) asks no provisioner for a
// runtime's host: the update of a runtime whose provisioner plans it (kubernetes, whose host pattern
// may have changed in the same run) leaves host and audience to the apply, whose plan, with the
// provider configured, says them. Before, the plan kept the state's, and after a new pattern
// Terraform failed the apply ("Provider produced inconsistent final plan": the apply's plan may turn
// an unknown value known, never a known one into another). An update by a provisioner of a known set
// that plans nothing (a static pool), and a plan of no change, keep the state's.
func TestAnUpdatePlannedWhileTheProviderIsUnconfiguredLeavesTheHostToTheApply(t *testing.T) {
	set, state, pid := movedHostPattern(t)
	configured := &RuntimeResource{resourceBase{client: &Client{Set: set, Default: "k8s"}}}
	// What the framework hands ModifyPlan for new slots: the computed attributes unknown, host and
	// audience the state's (UseStateForUnknown).
	grown := state
	grown.Slots = types.NumberValue(big.NewFloat(4))
	grown.CPU, grown.MemoryGB, grown.StorageBytes, grown.Drift = types.Int64Unknown(), types.Int64Unknown(), types.Int64Unknown(), types.ListUnknown(types.StringType)

	applyWalk, d := modifyRuntimePlan(t, configured, &state, grown)
	if d.HasError() || applyWalk.Host.ValueString() != "https://"+pid+".moved.rill.test" {
		t.Fatalf("the apply's plan: host %s, %v", applyWalk.Host, d)
	}
	for name, client := range map[string]*Client{
		"the set not known":                 {Unknown: true},
		"the set known, its ledger not yet": {Unknown: true, ConfigPlanners: map[string]bool{"k8s": true}},
	} {
		unconfigured := &RuntimeResource{resourceBase{client: client}}
		planned, d := modifyRuntimePlan(t, unconfigured, &state, grown)
		if d.HasError() {
			t.Fatalf("%s: %v", name, d)
		}
		for attr, v := range map[string][2]types.String{"host": {planned.Host, applyWalk.Host}, "audience": {planned.Audience, applyWalk.Audience}} {
			if !v[0].IsUnknown() && !v[0].Equal(v[1]) {
				t.Errorf("%s: the plan says %s %s, the apply's plan %s (Provider produced inconsistent final plan)", name, attr, v[0], v[1])
			}
		}
		if got, d := modifyRuntimePlan(t, unconfigured, &state, state); d.HasError() || !got.Host.Equal(state.Host) || !got.Audience.Equal(state.Audience) {
			t.Errorf("%s: a plan of no change: host %s, audience %s, %v; want the state's", name, got.Host, got.Audience, d)
		}
	}
	static := &RuntimeResource{resourceBase{client: &Client{Unknown: true, ConfigPlanners: map[string]bool{}}}}
	if got, d := modifyRuntimePlan(t, static, &state, grown); d.HasError() || !got.Host.Equal(state.Host) || !got.Audience.Equal(state.Audience) {
		t.Errorf("an update by a provisioner that plans nothing, of a known set: host %s, audience %s, %v; want the state's", got.Host, got.Audience, d)
	}
}
