package resources_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// gitopsGuidePath is the guide whose "Testing a module with `terraform test`" section this test follows.
var gitopsGuidePath = filepath.Join("..", "..", "docs-templates", "guides", "gitops.md.tmpl")

// The GitOps guide's module test, through the real CLI's `terraform test` (`tofu test`): the guide's
// module, its test file and its helper module, as written there, with the provider configured from
// the environment as the guide says. The test's state lives only in the test process, so the story
// starts where the guide's advice matters: a runtime of the module's name that a killed test run left
// in the ledger and in no state. The test's runs adopt it (the ledger holds one runtime of that name,
// grown to 2 slots, not a second one), and its teardown frees it: the ledger is empty afterwards.
func TestAccRuntime_terraformTestOfAModuleAdoptsAKilledRunsRuntimeAndFreesIt(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 6, "terraform test and its run blocks' module")
	ledger := acctest.SQLiteLedger(t)
	w := acctest.NewWorkspace(t, "RILL_LEDGER_DSN="+ledger,
		`RILL_ADMIN_PROVISIONER_SET_JSON={"test-pool": {"type": "static", "spec": {"runtimes": [{"host": "http://test-pool.test:9091", "slots": 4}]}}}`)
	w.Write("main.tf", guideBlock(t, gitopsGuidePath, "terraform", `resource "rill_runtime" "app"`))
	if err := os.MkdirAll(filepath.Join(w.Dir, "tests", "ledger"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Write(filepath.Join("tests", "runtime.tftest.hcl"), guideBlock(t, gitopsGuidePath, "terraform", `run "creates"`))
	w.Write(filepath.Join("tests", "ledger", "main.tf"), guideBlock(t, gitopsGuidePath, "terraform", `data "rill_allocations" "pool"`))

	// What a test run killed before its teardown leaves: the runtime in the ledger, in no state.
	w.Must("apply", "-auto-approve", "-var", "name_prefix=test")
	if err := os.Remove(filepath.Join(w.Dir, "terraform.tfstate")); err != nil {
		t.Fatal(err)
	}
	left, err := acctest.LedgerAllocations(ledger)
	if err != nil || len(left) != 1 {
		t.Fatalf("the killed run's runtime should be in the ledger: %v %v", left, err)
	}
	t.Cleanup(func() {
		// Whatever the test left: an apply adopts the named runtime, and the destroy frees it.
		if out, err := w.Run("apply", "-auto-approve", "-var", "name_prefix=test"); err != nil {
			t.Errorf("cleanup: %v\n%s", err, out)
		}
		if out, err := w.Run("destroy", "-auto-approve", "-var", "name_prefix=test"); err != nil {
			t.Errorf("cleanup: %v\n%s", err, out)
		}
	})

	w.Must("get")
	out := w.Must("test")
	for _, run := range []string{"plans_without_writing", "creates", "grows", "ledger_holds_it"} {
		if !regexp.MustCompile(`run "` + run + `"\.\.\. pass`).MatchString(out) {
			t.Errorf("run %q did not pass:\n%s", run, acctest.Tail(out))
		}
	}
	after, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 0 {
		t.Errorf("the test's teardown should have freed the killed run's runtime; the ledger holds %v", after)
	}
}
