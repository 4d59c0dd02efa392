package resources

import (
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// countingProvisionChecker is a real provisioner that counts its CheckProvision calls.
type countingProvisionChecker struct {
	provisioner.Provisioner
	checks atomic.Int32
}

func (c *countingProvisionChecker) CheckProvision(r *provisioner.Resource, opts *provisioner.ResourceOptions) ([]string, error) {
	c.checks.Add(1)
	return c.Provisioner.(provisioner.ProvisionChecker).CheckProvision(r, opts)
}

// A runtime whose own data a template refuses fails its plan with the template's message, whether it
// is created or updated, and before any apply; a plan that changes nothing checks nothing, nor does
// one with data not known yet. Before, such a runtime's plan was clean and its apply failed.
func TestThePlanChecksTheProvisionOfTheRuntimesOwnData(t *testing.T) {
	dir := t.TempDir()
	tmpl, err := os.ReadFile("../../templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deployment := filepath.Join(dir, "deployment.yaml")
	if err := os.WriteFile(deployment, append([]byte(`{{ if gt .Slots 4 }}{{ fail "at most 4 slots on this cluster" }}{{ end }}`+"\n"), tmpl...), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := provisioner.NewSet(`{"k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": "`+
		filepath.Join(dir, "absent")+`", "template_paths": {"deployment": "`+deployment+`"}}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set["k8s"].Close() })
	checker := &countingProvisionChecker{Provisioner: set["k8s"]}
	set["k8s"] = checker
	r := &RuntimeResource{resourceBase{client: &Client{Set: set, Default: "k8s"}}}
	slots := func(m runtimeModel, n int64) runtimeModel {
		m.Slots = types.NumberValue(big.NewFloat(float64(n)))
		return m
	}
	refused := func(d diag.Diagnostics) bool {
		for _, e := range d.Errors() {
			if e.Summary() == "Runtime cannot be provisioned with these arguments" && strings.Contains(e.Detail(), `Provisioner "k8s", `) &&
				strings.Contains(e.Detail(), "deployment.yaml:1:") && strings.Contains(e.Detail(), "at most 4 slots on this cluster") {
				return true
			}
		}
		return false
	}

	fresh := runtimeModels()["fresh plan"]
	fresh.Provisioner = types.StringNull()
	if d := planRuntime(t, r, nil, slots(fresh, 5)); !refused(d) {
		t.Fatalf("create with 5 slots: want the template's error, got %v", d)
	}
	if d := planRuntime(t, r, nil, slots(fresh, 4)); d.HasError() {
		t.Fatalf("create with 4 slots: %v", d)
	}

	state := runtimeModels()["full state"]
	state.Provisioner = types.StringValue("k8s")
	state.Drift = types.ListValueMust(types.StringType, nil)
	state = slots(state, 2)
	args := provisioner.RuntimeArgs{Slots: 2, OverrideDiskGB: state.DiskGB.ValueInt64()}
	cpu, mem, _ := provisioner.NewRuntimeSizes(2)
	state.CPU, state.MemoryGB, state.StorageBytes = types.Int64Value(int64(cpu)), types.Int64Value(int64(mem)), types.Int64Value(args.StorageBytes())
	if d := planRuntime(t, r, &state, slots(state, 8)); !refused(d) || !strings.Contains(d.Errors()[0].Detail(), "runtime "+state.ID.ValueString()+":") {
		t.Fatalf("update to 8 slots: want the template's error naming the runtime, got %v", d)
	}
	// A new name replaces the runtime. Terraform shows the warnings of this first plan only, not of
	// the create it plans next with no prior state, so the replacement is checked here, as a create.
	renamed := slots(state, 8)
	renamed.Name = types.StringValue("web2")
	if d := planRuntime(t, r, &state, renamed); !refused(d) || !strings.Contains(d.Errors()[0].Detail(), `the new runtime named "web2":`) {
		t.Fatalf("renamed with 8 slots: want the template's error naming the new runtime, got %v", d)
	}
	before := checker.checks.Load()
	if d := planRuntime(t, r, &state, state); d.HasError() || checker.checks.Load() != before {
		t.Fatalf("a plan without changes: %v, %d checks", d, checker.checks.Load()-before)
	}
	unknown := slots(state, 8)
	unknown.Version = types.StringUnknown()
	if d := planRuntime(t, r, &state, unknown); d.HasError() || checker.checks.Load() != before {
		t.Fatalf("a plan with an unknown version: %v, %d checks", d, checker.checks.Load()-before)
	}
	r.client.capacity.applying() // the apply walk's plans were checked in the plan walk
	if d := planRuntime(t, r, &state, slots(state, 8)); d.HasError() || checker.checks.Load() != before {
		t.Fatalf("a plan in an apply: %v, %d checks", d, checker.checks.Load()-before)
	}
}
