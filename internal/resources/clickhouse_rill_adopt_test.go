package resources_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// Taking over ClickHouse resources that Rill's admin service provisioned, through the real CLI and the
// real clickhouse-static provisioner against the stand-in ClickHouse (docs/guides/migrating-from-rill-admin.md):
// the stand-in holds two resources as Rill makes them (user rill_<ID without dashes> with DEFAULT
// DATABASE rill_<org>_<project>_<ID without dashes>, the second one's name cut to 63 characters), with
// Rill's passwords. One is adopted by `terraform import` and gets a generated password, the other by an
// `import` block with password_wo set to Rill's password, which it keeps. The plan warns what happens
// to the password Rill's deployment uses and writes nothing; the apply keeps Rill's names (no object
// under ours appears), the next plan is empty, no password reaches any output or TF_LOG=trace, and
// the destroy leaves nothing on the server, Rill's names included. Before, the import said "Cannot
// import non-existent remote object": it looked for our names only.
func TestAccClickHouse_importOfResourcesMadeByRillsAdminServiceKeepsTheirNames(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 11, "write-only attributes (password_wo), to keep Rill's password")
	const (
		idA, idB             = "0b7e6c5a-3f1d-4c2b-9a8e-7d6c5b4a3f2e", "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
		alnumA, alnumB       = "0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e", "5d4c3b2a1f0e4d9c8b7a6f5e4d3c2b1a"
		rillPasswordA        = "1Rr!a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
		rillPasswordB        = "1Rr!f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0"
		userA, userB         = "rill_" + alnumA, "rill_" + alnumB
		dbA                  = "rill_acme_web_" + alnumA
		dbB                  = "rill_organization_projectnames1_5d4c3b2a1f0e4d9c8b7a6f5e4d3c2b1" // cut to 63
		adminPassword        = "Fake-Adm1n-Pa55"
		rillWarning          = "Adopting, under Rill's names, what Rill's admin service made for this resource"
		generatedPasswordEnd = "@ch.fake:9000/" + dbA
	)
	if len(dbB) != 63 {
		t.Fatalf("dbB is %d characters", len(dbB))
	}
	set, standIn := acctest.FakeClickHouseSet(t, adminPassword, false)
	editStandIn(t, standIn, func(st *standInState) {
		st.Users = map[string][]string{userA: {rillPasswordA}, userB: {rillPasswordB}}
		st.DefaultDatabases = map[string]string{userA: dbA, userB: dbB}
		st.Databases = map[string]bool{"default": true, dbA: true, dbB: true}
	})
	t.Setenv("TF_VAR_rill_password_b", rillPasswordB)
	w := cliWorkspace(t, set, fmt.Sprintf(`
variable "rill_password_b" {
  type      = string
  ephemeral = true
}
resource "rill_clickhouse" "a" {
  provisioner_name = "ch"
  annotations      = { organization_name = "Acme", project_name = "Web" }
}
import {
  to = rill_clickhouse.b
  id = "ch/%s"
}
resource "rill_clickhouse" "b" {
  provisioner_name    = "ch"
  annotations         = { organization_name = "Organization", project_name = "Project-Names1" }
  password_wo         = var.rill_password_b
  password_wo_version = 1
}
output "dsn_a" {
  value     = rill_clickhouse.a.dsn
  sensitive = true
}
`, idB))
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })
	var outputs []string
	run := func(args ...string) string {
		t.Helper()
		out := w.Must(args...)
		outputs = append(outputs, out)
		return out
	}

	imported := run("import", "-no-color", "rill_clickhouse.a", "ch/"+idA)
	if !strings.Contains(imported, rillWarning) {
		t.Errorf("the import does not say it adopts Rill's objects:\n%s", acctest.Tail(imported))
	}
	before := fileText(t, standIn)
	plan := run("plan", "-no-color")
	for _, want := range []string{
		"rill_clickhouse.a will be updated in-place", "rill_clickhouse.b will be updated in-place", "Plan: 1 to import, 0 to add, 2 to change, 0 to destroy",
		rillWarning + ": user `" + userA + "` and database `" + dbA + "`",
		rillWarning + ": user `" + userB + "` and database `" + dbB + "`",
		"the running Rill deployment", "set password_wo to the password in Rill's DSN",
		"The ClickHouse user gets a new password",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, acctest.Tail(plan))
		}
	}
	if after := fileText(t, standIn); after != before {
		t.Fatalf("the plan changed the server:\n%s\nwas\n%s", after, before)
	}

	run("apply", "-no-color", "-auto-approve")
	st := readStandIn(t, standIn)
	dsnA := w.Must("output", "-raw", "dsn_a")
	dsnA = dsnA[strings.LastIndex(dsnA, "\n")+1:] // TF_LOG lines come first
	passwordA := passwordOf(t, dsnA)
	if !strings.HasPrefix(dsnA, "clickhouse://"+userA+":") || !strings.HasSuffix(dsnA, generatedPasswordEnd) || passwordA == rillPasswordA ||
		len(st.Users[userA]) != 1 || st.Users[userA][0] != passwordA {
		t.Errorf("rill_clickhouse.a: dsn user/database not Rill's, or its password not the user's only one (users %d passwords)", len(st.Users[userA]))
	}
	if len(st.Users[userB]) != 1 || st.Users[userB][0] != rillPasswordB {
		t.Errorf("rill_clickhouse.b: user %s has %d passwords; want exactly Rill's (password_wo)", userB, len(st.Users[userB]))
	}
	if len(st.Users) != 2 || len(st.Databases) != 3 || !st.Databases[dbA] || !st.Databases[dbB] ||
		st.DefaultDatabases[userA] != dbA || st.DefaultDatabases[userB] != dbB {
		t.Errorf("after the apply the server holds users %v, databases %v, default databases %v; want Rill's names only", keysOf(st.Users), st.Databases, st.DefaultDatabases)
	}
	if plan := run("plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") || strings.Contains(plan, rillWarning) {
		t.Errorf("the plan after the adoption is not empty:\n%s", acctest.Tail(plan))
	}
	// The state holds A's generated dsn (no password_wo), never Rill's passwords.
	for _, secret := range []string{rillPasswordA, rillPasswordB, adminPassword} {
		if strings.Contains(w.Read("terraform.tfstate"), secret) {
			t.Error("the state holds one of Rill's passwords or the admin password")
		}
	}
	for _, out := range outputs {
		for name, secret := range map[string]string{"Rill's password of A": rillPasswordA, "Rill's password of B": rillPasswordB, "A's new password": passwordA, "the admin password": adminPassword} {
			if strings.Contains(out, secret) {
				t.Errorf("%s is in the output or state:\n%s", name, acctest.Tail(out))
			}
		}
	}

	if out := w.Must("destroy", "-no-color", "-auto-approve"); !strings.Contains(out, "Resources: 2 destroyed") {
		t.Fatalf("destroy:\n%s", acctest.Tail(out))
	}
	st = readStandIn(t, standIn)
	if len(st.Users) != 0 || len(st.Databases) != 1 || !st.Databases["default"] {
		t.Fatalf("the destroy left users %v, databases %v", keysOf(st.Users), st.Databases)
	}
}

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
