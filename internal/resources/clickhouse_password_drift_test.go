package resources_test

import (
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A password changed outside Terraform (ALTER USER ... IDENTIFIED by hand) while the user and database
// stay is drift of the password, not a deletion: through the real CLI and the real clickhouse-static
// provisioner against the stand-in ClickHouse (no ClickHouse that can create users runs here), the
// refresh finds the resource, the plan is an in-place update that says the user gets a new password
// and why (not a re-creation under a new ID that would leave the user and database behind), the apply
// sets a new password on the same user, keeps the ID and the database, and the next plan is empty.
// No password (the generated ones, the one set by hand) reaches the CLI's output or TF_LOG=trace.
func TestAccClickHouse_passwordChangedOutsideTerraformIsAnUpdateNotARecreation(t *testing.T) {
	acctest.RequireAcc(t)
	const adminPassword, byHand = "Fake-Adm1n-Pa55", "Changed-By-Hand-Pa55w0rd"
	set, standIn := acctest.FakeClickHouseSet(t, adminPassword, false)
	w := cliWorkspace(t, set, clickhouseBlock)
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })
	logs := map[string]string{}
	step := func(name string, args ...string) string {
		t.Helper()
		out, err := w.Run(args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, acctest.Tail(out))
		}
		logs[name] = out
		return out
	}

	step("apply", "apply", "-no-color", "-auto-approve")
	id, _, attrs := clickhouseInStateFile(t, w)
	user, db := attrs["user"].(string), attrs["database"].(string)
	generated := passwordOf(t, attrs["dsn"].(string))

	// The password changed by hand.
	st := readStandIn(t, standIn)
	if len(st.Users[user]) != 1 || st.Users[user][0] != generated || !st.Databases[db] {
		t.Fatalf("after the apply the stand-in holds users %v, databases %v", st.Users, st.Databases)
	}
	editStandIn(t, standIn, func(st *standInState) { st.Users[user] = []string{byHand} })

	plan := step("plan", "plan", "-no-color")
	for _, want := range []string{"rill_clickhouse.db will be updated in-place", "Plan: 0 to add, 1 to change, 0 to destroy",
		"The ClickHouse user gets a new password", "it was changed outside Terraform"} {
		if !acctest.WordsRegexp(want).MatchString(plan) {
			t.Fatalf("the plan lacks %q:\n%s", want, acctest.Tail(plan))
		}
	}
	if strings.Contains(plan, "ClickHouse database no longer exists") {
		t.Fatalf("the plan calls the resource gone:\n%s", acctest.Tail(plan))
	}

	step("apply the new password", "apply", "-no-color", "-auto-approve")
	newID, status, attrs := clickhouseInStateFile(t, w)
	newPassword := passwordOf(t, attrs["dsn"].(string))
	st = readStandIn(t, standIn)
	if newID != id || status != "" || attrs["user"] != user || attrs["database"] != db {
		t.Fatalf("after the apply: id %q (was %q), status %q, user %v, database %v; want the same resource", newID, id, status, attrs["user"], attrs["database"])
	}
	if len(st.Users) != 1 || len(st.Users[user]) != 1 || st.Users[user][0] != newPassword || newPassword == byHand || newPassword == generated || !st.Databases[db] || len(st.Databases) != 2 {
		t.Fatalf("after the apply the stand-in holds %d users, databases %v; want user %s with only the new password, and database %s kept",
			len(st.Users), st.Databases, user, db)
	}
	if plan := step("plan after", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("the plan after the apply is not empty:\n%s", acctest.Tail(plan))
	}
	for name, text := range logs {
		for what, secret := range map[string]string{"generated password": generated, "new password": newPassword, "password set by hand": byHand, "admin password": adminPassword} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s output (TF_LOG=trace) contains the %s", name, what)
			}
		}
	}
}
