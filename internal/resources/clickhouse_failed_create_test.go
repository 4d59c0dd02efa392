package resources_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A failed rill_clickhouse create leaves nothing that no state knows of, through the real CLI and the
// real clickhouse-static provisioner against the stand-in ClickHouse (faults injected into it):
//
//   - Provision runs out of its create timeout (the stand-in does not answer a GRANT): the undo still
//     drops the user and database Provision had made, with a context of its own, and the resource is
//     not in state.
//   - Provision fails (the GRANT is refused) and so does the undo (DROP USER is refused): the resource
//     is kept in state, tainted, with its ID and nothing unknown, and the error says so. With the
//     faults gone, the next plan replaces it, and the apply drops what the failed create had made
//     and creates it again.
func TestAccClickHouse_failedCreateLeavesNothingUntracked(t *testing.T) {
	acctest.RequireAcc(t)
	set, standIn := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)
	w := cliWorkspace(t, set, strings.Replace(clickhouseBlock, "\n}\n", "\n  timeouts {\n    create = \"5s\"\n  }\n}\n", 1))
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })

	// The fault kinds are the stand-in's (internal/clickhouse/fakeserver_tagged.go, a test build only).
	fault := func(faults map[string]string) {
		t.Helper()
		editStandIn(t, standIn, func(st *standInState) { st.Faults = faults })
	}
	applyFails := func(when string, want ...string) string {
		t.Helper()
		out, err := w.Run("apply", "-no-color", "-auto-approve")
		if err == nil {
			t.Fatalf("%s: the apply succeeded", when)
		}
		for _, s := range want {
			if !acctest.WordsRegexp(s).MatchString(out) {
				t.Fatalf("%s: the output lacks %q:\n%s", when, s, acctest.Tail(out))
			}
		}
		return out
	}

	fault(map[string]string{"GRANT": "hang"})
	out := applyFails("create timeout", "Provisioning the ClickHouse database failed", "context deadline exceeded")
	if strings.Contains(out, "kept in state") {
		t.Fatalf("create timeout: the undo failed:\n%s", acctest.Tail(out))
	}
	if st := readStandIn(t, standIn); len(st.Users) != 0 || len(st.Databases) != 1 {
		t.Fatalf("create timeout: the undo left users %v, databases %v", st.Users, st.Databases)
	}
	if list, _ := w.Run("state", "list"); strings.Contains(list, "rill_clickhouse.db") {
		t.Fatalf("create timeout: the resource is in state:\n%s", list)
	}

	fault(map[string]string{"GRANT": "refuse", "DROP USER": "refuse"})
	applyFails("failed undo", "Provisioning the ClickHouse database failed", "granting user",
		"Undoing what it may have made failed too, so rill_clickhouse", "is kept in state as tainted", "dropping user")
	id, status, attrs := clickhouseInStateFile(t, w)
	if status != "tainted" || !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(id) || attrs["provisioner_name"] != "ch" {
		t.Fatalf("failed undo: state holds id %q, status %q, attributes %v; want a tainted resource with its ID", id, status, attrs)
	}
	user, db := "rill_"+strings.ReplaceAll(id, "-", "_"), "rill_acme_web_"+strings.ReplaceAll(id, "-", "_")
	if st := readStandIn(t, standIn); st.Users[user] == nil || !st.Databases[db] {
		t.Fatalf("failed undo: the stand-in lacks what the failed create made (user %s, database %s): %v %v", user, db, st.Users, st.Databases)
	}

	fault(nil)
	plan := w.Must("plan", "-no-color")
	for _, s := range []string{"rill_clickhouse.db is tainted, so", "destroy and then create replacement", "Plan: 1 to add, 0 to change, 1 to destroy"} {
		if !acctest.WordsRegexp(s).MatchString(plan) {
			t.Fatalf("plan after the failed undo lacks %q:\n%s", s, acctest.Tail(plan))
		}
	}
	w.Must("apply", "-no-color", "-auto-approve")
	newID, status, _ := clickhouseInStateFile(t, w)
	st := readStandIn(t, standIn)
	if status != "" || newID == id || st.Users[user] != nil || st.Databases[db] || len(st.Users) != 1 || len(st.Databases) != 2 {
		t.Fatalf("after the replacement: id %q (was %q), status %q, users %v, databases %v; want only the new resource's", newID, id, status, st.Users, st.Databases)
	}
}

// standInState is the stand-in ClickHouse's state file (internal/clickhouse/fakeserver_tagged.go).
type standInState struct {
	Users     map[string][]string `json:"users"`
	Databases map[string]bool     `json:"databases"`
	Faults    map[string]string   `json:"faults,omitempty"`
	// DefaultDatabases are the users' DEFAULT DATABASE (Rill's admin service sets it).
	DefaultDatabases map[string]string `json:"default_databases,omitempty"`
}

// editStandIn changes the stand-in's state file, replacing it by a rename, so that the stand-in (a
// provider running a statement meanwhile) never reads it half written.
func editStandIn(t *testing.T, path string, change func(st *standInState)) {
	t.Helper()
	st := readStandIn(t, path)
	change(&st)
	b, err := json.Marshal(st)
	if err == nil {
		tmp := path + ".test.tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func readStandIn(t *testing.T, path string) standInState {
	t.Helper()
	st := standInState{Users: map[string][]string{}, Databases: map[string]bool{"default": true}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return st
	}
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// clickhouseInStateFile is rill_clickhouse.db in the workspace's state file: its ID, status ("" or
// "tainted") and attributes; it fails the test when the state does not hold it.
func clickhouseInStateFile(t *testing.T, w *acctest.Workspace) (id, status string, attrs map[string]any) {
	t.Helper()
	var state struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Status     string         `json:"status"`
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(w.Read("terraform.tfstate")), &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Resources {
		if r.Type == "rill_clickhouse" && r.Name == "db" && len(r.Instances) == 1 {
			in := r.Instances[0]
			id, _ := in.Attributes["id"].(string)
			return id, in.Status, in.Attributes
		}
	}
	t.Fatalf("rill_clickhouse.db is not in the state:\n%s", w.Read("terraform.tfstate"))
	return "", "", nil
}

// A failed create kept in state (its undo failed too) whose user and database are dropped by hand
// before the next plan is gone, as any resource of ours would be: the plan creates it again. It is no
// import, so the refresh does not look for what Rill's admin service made for its ID: with a database
// of Rill's on the server whose name was cut to 63 characters before the ID (a long org and project
// name: a name Rill's rule could give any ID), that lookup made every plan fail with "its database
// cannot be told from its name", and the resource could leave the state only by `terraform state rm`.
func TestAccClickHouse_failedCreateWhoseObjectsAreGoneIsGoneBesideRillsDatabases(t *testing.T) {
	acctest.RequireAcc(t)
	set, standIn := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)
	w := cliWorkspace(t, set, clickhouseBlock)
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })

	rills := "rill_" + strings.Repeat("o", 28) + "_" + strings.Repeat("p", 28) // Rill's, cut before its ID
	editStandIn(t, standIn, func(st *standInState) {
		st.Databases[rills] = true
		st.Faults = map[string]string{"GRANT": "refuse", "DROP USER": "refuse"}
	})
	if out, err := w.Run("apply", "-no-color", "-auto-approve"); err == nil || !strings.Contains(out, "is kept in state as tainted") {
		t.Fatalf("want a failed create kept in state:\n%s", acctest.Tail(out))
	}
	id, status, _ := clickhouseInStateFile(t, w)
	if status != "tainted" {
		t.Fatalf("state holds %q, status %q", id, status)
	}
	editStandIn(t, standIn, func(st *standInState) {
		st.Faults = nil
		st.Users = map[string][]string{}
		st.Databases = map[string]bool{"default": true, rills: true}
	})

	plan := w.Must("plan", "-no-color")
	for _, s := range []string{"ClickHouse database no longer exists", "Plan: 1 to add, 0 to change, 0 to destroy"} {
		if !acctest.WordsRegexp(s).MatchString(plan) {
			t.Fatalf("the plan lacks %q:\n%s", s, acctest.Tail(plan))
		}
	}
	if strings.Contains(plan, "Rill") {
		t.Fatalf("the plan of a resource of ours speaks of Rill's admin service:\n%s", acctest.Tail(plan))
	}
	w.Must("apply", "-no-color", "-auto-approve")
	if st := readStandIn(t, standIn); !st.Databases[rills] || len(st.Databases) != 3 {
		t.Fatalf("after the re-creation the stand-in holds databases %v; want Rill's untouched, and the new one", st.Databases)
	}
}
