package resources_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// A rill_clickhouse of which one half is still on the server is not gone, through the real CLI and
// the real clickhouse-static provisioner against the stand-in ClickHouse (no ClickHouse that can
// create users runs here):
//
//   - its database dropped by hand: the plan is an in-place update naming the missing database (not a
//     re-creation under a new ID, which would leave the user behind), and the apply creates it again
//     under the same ID and name; the next plan is empty.
//   - a `terraform destroy` killed (kill -9) between its DROP USER and DROP DATABASE (the stand-in
//     holds DROP DATABASE until the kill): the next plan keeps the resource and names the missing
//     user, and a plain re-run of `terraform destroy` drops the database that is left, with its data:
//     nothing stays on the server or in the state. Before, the refresh called the resource gone and
//     dropped it from the state, so the re-run destroyed nothing and the database stayed, managed by
//     nothing.
func TestAccClickHouse_destroyKilledBetweenItsTwoDropsIsFinishedByTheNextDestroy(t *testing.T) {
	acctest.RequireAcc(t)
	set, standIn := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)
	w := cliWorkspace(t, set, clickhouseBlock)
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })
	edit := func(change func(st *standInState)) {
		t.Helper()
		editStandIn(t, standIn, change)
	}
	planShows := func(when string, want ...string) {
		t.Helper()
		plan := w.Must("plan", "-no-color")
		for _, s := range append([]string{"rill_clickhouse.db will be updated in-place", "Plan: 0 to add, 1 to change, 0 to destroy",
			"ClickHouse resource changed outside Terraform"}, want...) {
			if !strings.Contains(plan, s) {
				t.Fatalf("%s: the plan lacks %q:\n%s", when, s, acctest.Tail(plan))
			}
		}
		if strings.Contains(plan, "no longer exists") || strings.Contains(plan, "will be created") {
			t.Fatalf("%s: the plan calls the resource gone:\n%s", when, acctest.Tail(plan))
		}
	}

	w.Must("apply", "-no-color", "-auto-approve")
	id, _, attrs := clickhouseInStateFile(t, w)
	user, db := attrs["user"].(string), attrs["database"].(string)

	// The database dropped by hand: the apply creates it again under the same ID.
	edit(func(st *standInState) { delete(st.Databases, db) })
	planShows("database dropped", "database `"+db+"` of user `"+user+"` is missing", "its database is missing on the server")
	w.Must("apply", "-no-color", "-auto-approve")
	newID, status, attrs := clickhouseInStateFile(t, w)
	st := readStandIn(t, standIn)
	if newID != id || status != "" || attrs["database"] != db || attrs["user"] != user || !st.Databases[db] ||
		len(st.Users[user]) != 1 || st.Users[user][0] != passwordOf(t, attrs["dsn"].(string)) {
		t.Fatalf("after the apply: id %q (was %q), status %q, database %v, user %v, databases %v; want the same resource, its database back and the dsn's password the user's",
			newID, id, status, attrs["database"], attrs["user"], st.Databases)
	}
	if plan := w.Must("plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("the plan after the repair is not empty:\n%s", acctest.Tail(plan))
	}

	// A destroy killed between its two drops: DROP USER ran, DROP DATABASE never answers.
	edit(func(st *standInState) { st.Faults = map[string]string{"DROP DATABASE": "hang"} })
	// Cleanups run last first: a test that stops before the fault is lifted lifts it before the
	// cleanup's destroy, which would otherwise wait on it for its whole timeout.
	t.Cleanup(func() { edit(func(st *standInState) { st.Faults = nil }) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, out, exited := startTerraform(ctx, t, w, "destroy")
	var providers []int
	for {
		select {
		case err := <-exited:
			t.Fatalf("the destroy ended before the kill (%v):\n%s", err, acctest.Tail(out.String()))
		case <-ctx.Done():
			t.Fatalf("the destroy did not drop the user:\n%s", acctest.Tail(out.String()))
		case <-time.After(50 * time.Millisecond):
		}
		providers = childrenNamed(cmd.Process.Pid, "terraform-provider-rill")
		if _, ok := readStandIn(t, standIn).Users[user]; !ok && len(providers) > 0 {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("the destroy succeeded after the kill:\n%s", acctest.Tail(out.String()))
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("terraform did not exit after kill -9")
	}
	for _, pid := range providers {
		if !proc.GoneWithin(pid, 10*time.Second) {
			t.Fatalf("provider process %d still runs 10 s after terraform was killed", pid)
		}
	}
	edit(func(st *standInState) { st.Faults = nil })
	if st := readStandIn(t, standIn); st.Users[user] != nil || !st.Databases[db] {
		t.Fatalf("after the killed destroy the stand-in holds users %v, databases %v; want database %s without its user", st.Users, st.Databases, db)
	}
	if killedID, _, _ := clickhouseInStateFile(t, w); killedID != id {
		t.Fatalf("after the killed destroy the state holds ID %q, want %q", killedID, id)
	}

	planShows("destroy killed", "user `"+user+"` of database `"+db+"` is missing")
	destroyed := w.Must("destroy", "-no-color", "-auto-approve")
	if !strings.Contains(destroyed, "Destroy complete! Resources: 1 destroyed.") {
		t.Fatalf("the second destroy:\n%s", acctest.Tail(destroyed))
	}
	st = readStandIn(t, standIn)
	for name := range st.Users {
		t.Errorf("the second destroy left user %s on the server", name)
	}
	for name := range st.Databases {
		if name != "default" {
			t.Errorf("the second destroy left database %s on the server", name)
		}
	}
	if state := w.Read("terraform.tfstate"); strings.Contains(state, `"rill_clickhouse"`) {
		t.Fatalf("the state after the second destroy still holds the resource:\n%s", state)
	}
}
