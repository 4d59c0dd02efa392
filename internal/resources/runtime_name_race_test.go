package resources_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// Two pipelines create the runtime named "orders" of pool "pool" at the same instant, through one
// SQLite ledger: one creates it, the other finds it at the name's ID, adopts it and then fails (its
// pool's spec, an older one, lists another host, so it cannot resize the runtime to the slots it asks
// for). The failed create must not undo the runtime: the other apply created it, reported it created
// and keeps it in its state. Nothing lost, nothing leaked: a failed create undoes only what it
// created itself.
//
// The overlap is proven as in TestAccRuntime_twoTerraformProcessesShareSQLiteLedger: the test holds
// the ledger file's write lock until both providers log that they wait for it, so both creates have
// done whatever they do before claiming the ID (a check that nothing is there, say) before either
// claims it. A create that decides from such a check whether it may undo the runtime undoes the
// winner's.
//
// It is a CLI test, not a unit test of Create: Create stores the provisioner's state in the
// framework's private state, which only the framework's server can make.
func TestAccRuntime_twoAppliesCreatingOneNameAtOnceLeaveTheWinnersRuntime(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	ledgertest.Open(t, ledger) // created and migrated now: the applies' first writes are the claims
	hosts := [2]string{"http://race-0.test:9091", "http://race-1.test:9091"}
	var logs [2]string
	var dirs [2]*acctest.Workspace
	for i := range dirs {
		dir := t.TempDir()
		logs[i] = filepath.Join(dir, "provider.log")
		dirs[i] = acctest.WorkspaceIn(t, dir, "TF_LOG_PROVIDER=debug", "TF_LOG_PATH="+logs[i])
		set := fmt.Sprintf(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": %q, "slots": 4}]}}}`, hosts[i])
		dirs[i].Write("main.tf", acctest.CLIHeader(fmt.Sprintf("%q", ledger), set)+acctest.RuntimeBlock("orders", i+1, `name = "orders"`))
	}

	var wg sync.WaitGroup
	var outputs [2]string
	var errs [2]error
	done := make(chan struct{})
	wait := holdSQLiteLockUntilBothWait(t, strings.TrimPrefix(ledger, "sqlite://"), done, logs)
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outputs[i], errs[i] = d.Run("apply", "-auto-approve")
		}()
	}
	go func() { wg.Wait(); close(done) }()
	gateErr := wait()
	<-done
	if gateErr != nil {
		t.Fatalf("%v\n%s\n%s", gateErr, acctest.Tail(outputs[0]), acctest.Tail(outputs[1]))
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			if out, err := d.Run("destroy", "-auto-approve"); err != nil {
				t.Errorf("destroy in %s: %v\n%s", d.Dir, err, out)
			}
		}
	})

	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("want exactly one apply to fail (the one that adopted the other's runtime); errors %v\n%s\n%s", errs, outputs[0], outputs[1])
	}
	winner, loser := 0, 1
	if errs[0] != nil {
		winner, loser = 1, 0
	}
	// The winner's runtime is in the ledger as the winner made it, and in the winner's state only.
	id := provisioner.NamedResourceID("pool", "orders")
	allocs, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := allocs[id]
	if !ok || len(allocs) != 1 {
		t.Fatalf("the ledger holds %v, want the winner's runtime %s alone: the failed create undid the winner's runtime", allocs, id)
	}
	if a.Host != hosts[winner] || a.Slots != winner+1 {
		t.Errorf("the runtime is on %s with %d slot(s), want the winner's %s with %d", a.Host, a.Slots, hosts[winner], winner+1)
	}
	if !acctest.WordsRegexp("was not created by this apply").MatchString(outputs[loser]) ||
		!acctest.WordsRegexp("so it was not deprovisioned").MatchString(outputs[loser]) {
		t.Fatalf("the apply that lost the race failed without saying it left the runtime alone:\n%s", outputs[loser])
	}
	if got := dirs[winner].RuntimesInState(); got["rill_runtime.orders"] != id {
		t.Errorf("the winner's state holds %v, want rill_runtime.orders = %s", got, id)
	}
	if got := dirs[loser].RuntimesInState(); len(got) != 0 {
		t.Errorf("the loser's state holds %v, want nothing: it created nothing", got)
	}
}
