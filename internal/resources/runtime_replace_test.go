package resources_test

import (
	"strconv"
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
