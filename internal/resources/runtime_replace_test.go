package resources_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A named runtime that is tainted (by hand, or by a create whose runtime did not become ready) is
// replaced at the same ID: Terraform plans the new instance from nothing, so its plan sees no state
// and the ledger's row at the name's ID is this state's own runtime. The plan must not warn that the
// apply adopts a runtime another state may manage (a false alarm about workspaces); the apply then
// frees the runtime and allocates it again, and the state and the ledger agree. Before, every plan of
// a tainted named runtime on a static pool warned "Named runtime exists already: the apply adopts
// it".
func TestAccRuntime_taintedNamedRuntimeIsNotAnAdoption(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://tainted.test:9091", "slots": 2}]}}}`
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+`
resource "rill_runtime" "orders" {
  name  = "orders"
  slots = 1
}
`)
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { w.Must("destroy", "-auto-approve") })
	w.Must("taint", "rill_runtime.orders")
	out := w.Must("plan")
	if !acctest.WordsRegexp(`rill_runtime.orders is tainted`).MatchString(out) || !acctest.WordsRegexp(`must be replaced`).MatchString(out) {
		t.Fatalf("the plan does not replace the tainted runtime:\n%s", acctest.Tail(out))
	}
	if acctest.WordsRegexp(`Named runtime exists already`).MatchString(out) {
		t.Errorf("the plan of a tainted runtime warns of an adoption of its own runtime:\n%s", acctest.Tail(out))
	}
	w.Must("apply", "-auto-approve")
	w.CheckStateEqualsLedger(ledger, 1)
}

// A runtime moved to another provisioner while the provider's configuration is not known at plan
// (ledger_dsn from another resource's attribute, changed in the same run; a plan with
// -refresh=false, as the refresh of an unconfigured provider fails) is planned for
// replacement, as the apply's plan (with the provider configured) has it, and replaced: Terraform
// refuses an apply whose plan changes from an update to a replacement. Before, ModifyPlan did
// nothing with an unconfigured provider, the plan said "update in-place", and the apply failed with
// "Provider produced inconsistent final plan".
func TestAccRuntime_aNewProvisionerIsAReplacementWhileTheProviderIsUnconfigured(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"a": {"type": "static", "spec": {"runtimes": [{"host": "http://unconfigured-a.test:9091", "slots": 2}]}},` +
		` "b": {"type": "static", "spec": {"runtimes": [{"host": "http://unconfigured-b.test:9091", "slots": 2}]}}}`
	w := acctest.NewWorkspace(t)
	config := func(round int, pool string) string {
		// The ledger's DSN goes through terraform_data, whose output is unknown at plan whenever its
		// input changes: the provider is configured only in the apply.
		return acctest.CLIHeader(`replace(terraform_data.ledger.output, "/#.*$/", "")`, set) + fmt.Sprintf(`
resource "terraform_data" "ledger" {
  input = "%s#%d"
}
resource "rill_runtime" "orders" {
  provisioner_name = %q
  slots            = 1
}
`, ledger, round, pool)
	}
	w.Write("main.tf", config(1, "a"))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { w.Must("destroy", "-auto-approve") })
	first := w.RuntimeAttributeInState("host")["rill_runtime.orders"]

	// Without -refresh=false the refresh stops first ("Provider not configured"): only a plan that
	// does not refresh reaches ModifyPlan with an unconfigured provider.
	w.Write("main.tf", config(2, "b"))
	if plan := w.Must("plan", "-refresh=false"); !strings.Contains(plan, "rill_runtime.orders must be replaced") {
		t.Errorf("the plan of a new provisioner_name with an unconfigured provider:\n%s", acctest.Tail(plan))
	}
	w.Must("apply", "-auto-approve", "-refresh=false")
	if got := w.RuntimeAttributeInState("host")["rill_runtime.orders"]; got != "http://unconfigured-b.test:9091" || first != "http://unconfigured-a.test:9091" {
		t.Errorf("the runtime is on %v, then %v: want pool a's host, then pool b's", first, got)
	}
	w.CheckStateEqualsLedger(ledger, 1)
}
