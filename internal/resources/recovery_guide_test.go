package resources_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// guidePath is the guide this test follows.
var guidePath = filepath.Join("..", "..", "docs-templates", "guides", "recovering-orphaned-runtimes.md.tmpl")

// recoveryConfig is the recover.tf of the guide: its `terraform` code block that declares the orphans.
func recoveryConfig(t *testing.T) string {
	t.Helper()
	return guideBlock(t, guidePath, "terraform", `resource "rill_runtime" "orphan"`)
}

// The guide "Recovering orphaned runtimes", step by step: two unnamed runtimes that an interrupted
// apply left in no state fill the pool, so the next apply fails; another configuration's unnamed
// runtime shares the pool. The guide's recover.tf refuses to run without saved states, then finds the
// orphans through rill_allocations and imports them -- and not the other configuration's runtime,
// whose state is saved beside -- its destroy frees them, and the plain apply that follows converges
// to state == ledger. A saved state may be empty (a configuration whose first apply was the one
// interrupted): the guide's recover.tf failed on it with "Call to function "jsondecode" failed: EOF".
func TestAccRuntime_recoveringOrphanedRuntimesGuide(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	acctest.RequireCLIVersion(t, 1, 7, "the guide's import blocks with for_each")
	w := acctest.NewWorkspace(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://guide.test:9091", "slots": 4}]}}}`
	// Everything below, the other configuration's runtime included, is allocated from now on: only the
	// saved states keep that runtime out of the recovery.
	started := time.Now().UTC()
	// Another configuration (repository, workspace) that uses the same pool.
	other := acctest.NewWorkspace(t)
	other.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+`
resource "rill_runtime" "other" {
  slots = 1
}
`)
	other.Must("apply", "-auto-approve")
	otherDestroyed := false
	t.Cleanup(func() {
		if otherDestroyed {
			return
		}
		if out, err := other.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy the other configuration: %v\n%s", err, out)
		}
	})
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+`
resource "rill_runtime" "app" {
  count       = 3
  slots       = 1
  environment = "prod"
}
`)
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() {
		w.Write("recover.tf", "")
		if out, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
	})
	// What an interrupted apply leaves: allocations that no state records.
	w.Must("state", "rm", "rill_runtime.app[1]", "rill_runtime.app[2]")
	if out, err := w.Run("apply", "-auto-approve"); err == nil || !acctest.WordsRegexp("no runtimes found with sufficient available slots").MatchString(out) {
		t.Fatalf("with two orphans filling the pool the apply should fail for capacity (%v):\n%s", err, out)
	}

	// Without saved states the recovery refuses: it would take every unnamed runtime for an orphan.
	recoverTF := regexp.MustCompile(`interrupted_after = "[^"]*"`).ReplaceAllString(recoveryConfig(t),
		`interrupted_after = "`+started.Add(-time.Second).Format(time.RFC3339)+`"`)
	w.Write("recover.tf", recoverTF)
	if out, err := w.Run("plan", "-target=rill_runtime.orphan"); err == nil || !acctest.WordsRegexp("Save the state of every configuration").MatchString(out) {
		t.Fatalf("with no saved states the recovery should refuse (%v):\n%s", err, out)
	}

	// Step 1 and 2 of the guide: every state that uses the pool, this one and the other.
	if err := os.MkdirAll(filepath.Join(w.Dir, "states"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Another configuration's state alone is not enough: without this one's, the recovery would take
	// this configuration's own unnamed runtimes for orphans, and step 3 would destroy them.
	w.Write(filepath.Join("states", "other.json"), other.Must("state", "pull"))
	if out, err := w.Run("plan", "-target=rill_runtime.orphan"); err == nil || !acctest.WordsRegexp("this one's as states/this.json").MatchString(out) {
		t.Fatalf("without this configuration's saved state the recovery should refuse (%v):\n%s", err, out)
	}
	w.Write(filepath.Join("states", "this.json"), w.Must("state", "pull"))
	// A third configuration whose first apply was interrupted: no state yet, so its pull is empty.
	// (Written as pulled: w.Write would remove the file for an empty body.)
	pulled := acctest.NewWorkspace(t).Must("state", "pull")
	if err := os.WriteFile(filepath.Join(w.Dir, "states", "first-apply-killed.json"), []byte(pulled), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := w.Must("plan", "-target=rill_runtime.orphan")
	if !strings.Contains(plan, "2 to import") {
		t.Fatalf("the guide's review plan should list the 2 orphans for import:\n%s", plan)
	}
	w.Must("apply", "-target=rill_runtime.orphan", "-auto-approve")
	inState := w.RuntimesInState()
	orphans := 0
	for addr := range inState {
		if strings.HasPrefix(addr, "rill_runtime.orphan[") {
			orphans++
		}
	}
	if orphans != 2 || len(inState) != 3 {
		t.Fatalf("after the guide's import the state holds %v, want app[0] and 2 orphans", inState)
	}
	for addr, id := range inState {
		if id == other.RuntimesInState()["rill_runtime.other"] {
			t.Fatalf("the recovery imported the other configuration's runtime as %s", addr)
		}
	}
	// The rest compares this state with the whole ledger: the other configuration leaves the pool.
	other.Must("destroy", "-auto-approve")
	otherDestroyed = true
	w.CheckStateEqualsLedger(ledger, 3)
	if out, err := w.Run("plan", "-target=rill_runtime.orphan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the imported orphans plan a change (%v):\n%s", err, out)
	}

	// Step 3: free them, then the plain apply converges.
	w.Must("destroy", "-target=rill_runtime.orphan", "-auto-approve")
	w.Write("recover.tf", "")
	if err := os.RemoveAll(filepath.Join(w.Dir, "states")); err != nil {
		t.Fatal(err)
	}
	w.Must("apply", "-auto-approve")
	w.CheckStateEqualsLedger(ledger, 3)
	if got := w.RuntimesInState(); len(got) != 3 || got["rill_runtime.app[2]"] == "" {
		t.Fatalf("after recovery the state holds %v", got)
	}
}
