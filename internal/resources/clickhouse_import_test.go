package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
)

// Import of rill_clickhouse, through the real CLI, against a real ClickHouse (chDB's 26.7 engine,
// internal/testutil/chdbtest): `terraform import` adopts the existing user and database by name and
// leaves the dsn null (ClickHouse keeps only a hash of the password); the next plan is an in-place
// update that says the user gets a new password, and writes nothing; an ID with nothing behind it
// cannot be imported, and the error says where to look (it was Terraform's bare "Cannot import
// non-existent remote object"). chDB cannot store users by SQL, so the apply that would set the password is
// refused before any statement, with the reason, and the state is kept. No password appears in
// TF_LOG=trace output or in the plan.
func TestAccClickHouse_importAdoptsTheUserAndDatabaseAndPlansANewPassword(t *testing.T) {
	acctest.RequireAcc(t)
	id := uuid.NewString()
	idPart := strings.ReplaceAll(id, "-", "_")
	user, db := "rill_"+idPart, "rill_acme_web_"+idPart
	const tenantPassword = "Tenant-0ld-Pa55w0rd"
	srv := chdbtest.Start(t, chdbtest.User{Name: user, Password: tenantPassword})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := srv.Query(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
		t.Fatal(err)
	}

	set := fmt.Sprintf(`{"ch": {"type": "clickhouse-static", "spec": {"dsn": %q}}}`, srv.AdminDSN)
	tf := cliWorkspace(t, set, clickhouseBlock).Run

	// Nothing behind the ID: refused, saying what was looked for and where to look.
	if out, err := tf("import", "-no-color", "rill_clickhouse.db", "ch/"+uuid.NewString()); err == nil ||
		!acctest.WordsRegexp(`ClickHouse database to import was not found`).MatchString(out) || !acctest.WordsRegexp(`provisioner_resources table`).MatchString(out) {
		t.Fatalf("import of an ID with nothing behind it: err %v\n%s", err, acctest.Tail(out))
	}

	out, err := tf("import", "-no-color", "rill_clickhouse.db", "ch/"+id)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, acctest.Tail(out))
	}
	t.Cleanup(func() { _, _ = tf("state", "rm", "rill_clickhouse.db") })
	shown, err := tf("state", "show", "-no-color", "rill_clickhouse.db")
	if err != nil {
		t.Fatalf("state show: %v\n%s", err, shown)
	}
	for _, want := range []string{`database         = "` + db + `"`, `user             = "` + user + `"`, `id               = "` + id + `"`} {
		if !strings.Contains(shown, want) {
			t.Errorf("imported state lacks %s:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, "dsn ") && !strings.Contains(shown, "(sensitive value)") {
		t.Errorf("imported state shows a dsn:\n%s", shown)
	}

	plan, err := tf("plan", "-no-color")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, acctest.Tail(plan))
	}
	for _, want := range []string{"rill_clickhouse.db will be updated in-place", "The ClickHouse user gets a new password", "Plan: 0 to add, 1 to change, 0 to destroy"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, acctest.Tail(plan))
		}
	}
	// The plan wrote nothing: the database is still the only one of the resource, and nothing else.
	if dbs, err := srv.Query(ctx, "SELECT name FROM system.databases WHERE name LIKE 'rill%' ORDER BY name"); err != nil || strings.TrimSpace(dbs) != db {
		t.Errorf("databases after the plan: %q (%v)", dbs, err)
	}

	apply, err := tf("apply", "-no-color", "-auto-approve")
	if err == nil || !strings.Contains(apply, "cannot manage users by SQL") || !strings.Contains(apply, "no writable user directory") {
		t.Fatalf("apply on chDB should be refused with the reason; err %v\n%s", err, acctest.Tail(apply))
	}
	if list, err := tf("state", "list"); err != nil || !strings.Contains(list, "rill_clickhouse.db") {
		t.Errorf("the refused apply dropped the resource from state: %q (%v)", list, err)
	}

	for name, text := range map[string]string{"import": out, "plan": plan, "apply": apply} {
		for _, secret := range []string{chdbtest.AdminPassword, tenantPassword} {
			if strings.Contains(text, secret) {
				t.Errorf("%s output (TF_LOG=trace) contains a password", name)
			}
		}
	}
}

// clickhouseBlock is a rill_clickhouse on provisioner "ch" named for organization acme, project web.
const clickhouseBlock = `
resource "rill_clickhouse" "db" {
  provisioner_name = "ch"
  annotations      = { organization_name = "acme", project_name = "web" }
}
`

// The whole rill_clickhouse lifecycle through the CLI, with the real clickhouse-static provisioner
// talking to a stand-in for ClickHouse (the provider is built with -tags rill_fake_clickhouse; no
// ClickHouse that can create users runs on these machines): apply, a second plan that is empty (its
// refresh logs in with the generated DSN), an import that sets a new password, a user and database
// dropped outside Terraform (planned for re-creation, with the reason), and destroy. The
// generated password and DSN never appear in TF_LOG=trace output, plan output or `terraform show`.
func TestAccClickHouse_fakeServerLifecycleKeepsGeneratedSecretsOutOfLogsAndPlans(t *testing.T) {
	acctest.RequireAcc(t)
	const adminPassword = "Fake-Adm1n-Pa55"
	set, standIn := acctest.FakeClickHouseSet(t, adminPassword, true)
	tf := cliWorkspace(t, set, clickhouseBlock+`
output "dsn" {
  value     = rill_clickhouse.db.dsn
  sensitive = true
}
output "write_dsn" {
  value     = rill_clickhouse.db.write_dsn
  sensitive = true
}
output "dsn_without_password" {
  value = rill_clickhouse.db.dsn_without_password
}
`).Run
	logs := map[string]string{}
	step := func(name string, args ...string) string {
		t.Helper()
		out, err := tf(args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, acctest.Tail(out))
		}
		logs[name] = out
		return out
	}
	output := func(name string) string {
		t.Helper()
		out, err := tf("output", "-raw", name)
		if err != nil {
			t.Fatalf("output %s: %v", name, err)
		}
		// TF_LOG lines go to stderr, mixed into out; the value is the last line.
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		return lines[len(lines)-1]
	}

	step("apply", "apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })
	dsn, writeDSN := output("dsn"), output("write_dsn")
	password := passwordOf(t, dsn)
	if !strings.HasPrefix(dsn, "clickhouse://rill_") || !strings.Contains(dsn, "@ch.fake:9000/rill_acme_web_") ||
		!strings.HasPrefix(writeDSN, "http://rill_") || passwordOf(t, writeDSN) != password || len(password) < 32 {
		t.Fatalf("dsn %q, write_dsn %q", dsn, writeDSN)
	}
	if got := output("dsn_without_password"); got != strings.Replace(dsn, ":"+password+"@", "@", 1) {
		t.Fatalf("dsn_without_password %q", got)
	}
	if plan := step("second plan", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("second plan is not empty:\n%s", acctest.Tail(plan))
	}
	step("show", "show", "-no-color")

	// Import into a fresh state: the user and database are adopted, and the apply sets a new password.
	id := step("state show", "state", "show", "-no-color", "rill_clickhouse.db")
	m := regexp.MustCompile(`id\s+=\s+"([0-9a-f-]{36})"`).FindStringSubmatch(id)
	if m == nil {
		t.Fatalf("no id in:\n%s", id)
	}
	step("state rm", "state", "rm", "rill_clickhouse.db")
	step("import", "import", "-no-color", "rill_clickhouse.db", "ch/"+m[1])
	// The annotations come back from the database's comment: the configuration the resource came
	// from (or one generated from the import) plans no change of them.
	if shown := step("state show after import", "state", "show", "-no-color", "rill_clickhouse.db"); !strings.Contains(shown, `"organization_name" = "acme"`) {
		t.Fatalf("the import restored no annotations:\n%s", shown)
	}
	if plan := step("plan after import", "plan", "-no-color"); !strings.Contains(plan, "The ClickHouse user gets a new password") || strings.Contains(plan, "+ annotations") {
		t.Fatalf("plan after import:\n%s", acctest.Tail(plan))
	}
	step("apply after import", "apply", "-no-color", "-auto-approve")
	newDSN := output("dsn")
	newPassword := passwordOf(t, newDSN)
	if newPassword == password || strings.Replace(newDSN, newPassword, password, 1) != dsn {
		t.Fatalf("after the import's apply: dsn %q, was %q", newDSN, dsn)
	}
	if got := output("dsn_without_password"); got != strings.Replace(newDSN, ":"+newPassword+"@", "@", 1) {
		t.Fatalf("dsn_without_password after the import's apply: %q", got)
	}
	if plan := step("plan after the new password", "plan", "-no-color"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the new password is not empty:\n%s", acctest.Tail(plan))
	}

	// The user and database dropped outside Terraform: the refresh says so and the plan re-creates them.
	if err := os.WriteFile(standIn, []byte(`{"users": {}, "databases": {"default": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plan := step("plan after an outside drop", "plan", "-no-color")
	for _, want := range []string{"ClickHouse database no longer exists", "rill_clickhouse.db will be created", "Plan: 1 to add, 0 to change, 0 to destroy"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan after an outside drop lacks %q:\n%s", want, acctest.Tail(plan))
		}
	}
	step("apply after an outside drop", "apply", "-no-color", "-auto-approve")
	if recreated := output("dsn"); recreated == newDSN || !strings.Contains(recreated, "/rill_acme_web_") {
		t.Fatalf("re-created dsn %q", recreated)
	}
	step("destroy", "destroy", "-no-color", "-auto-approve")
	left, err := os.ReadFile(standIn)
	if err != nil || strings.Contains(string(left), "rill_") {
		t.Fatalf("destroy left users or databases in the stand-in: %s (%v)", left, err)
	}

	// The logs are there to be searched: the provisioner's own lines reach TF_LOG through the bridge.
	if !strings.Contains(logs["apply"], "provisioned a ClickHouse database and user") || !strings.Contains(logs["apply"], "[TRACE]") {
		t.Fatalf("the apply's TF_LOG=trace output lacks the provisioner's lines:\n%s", acctest.Tail(logs["apply"]))
	}
	for name, text := range logs {
		for what, secret := range map[string]string{"password": password, "new password": newPassword, "admin password": adminPassword, "dsn": dsn} {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("%s output (TF_LOG=trace) contains the %s near %q", name, what, text[max(0, i-120):i])
			}
		}
	}
}

func passwordOf(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		t.Fatalf("not a DSN with credentials: %q", dsn)
	}
	pw, _ := u.User.Password()
	return pw
}

// cliWorkspace is a workspace (TF_LOG=trace) whose main.tf holds the provider (a SQLite ledger in the
// workspace, the given set) and body.
func cliWorkspace(t *testing.T, set, body string) *acctest.Workspace {
	t.Helper()
	w := acctest.NewWorkspace(t, acctest.TraceLog)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db")), set)+body)
	return w
}

// An import of an ID whose database (or user) alone is on the server (say, one whose state was lost)
// adopts the half that is left, and the apply creates the missing one under the same ID (CREATE ...
// IF NOT EXISTS). (A resource still in state in that condition needs no import: the refresh keeps
// it, TestAccClickHouse_destroyKilledBetweenItsTwoDropsIsFinishedByTheNextDestroy.)
// That apply's result must match its plan: the missing name is unknown until then, not the state's
// empty string ("Provider produced inconsistent result after apply" before). Its plan's warning names
// the missing half, not "the user and its database are kept".
func TestAccClickHouse_importOfAHalfDroppedResourceRecreatesTheMissingHalf(t *testing.T) {
	acctest.RequireAcc(t)
	set, state := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)
	tf := cliWorkspace(t, set, clickhouseBlock).Run
	step := func(name string, args ...string) string {
		t.Helper()
		out, err := tf(args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, acctest.Tail(out))
		}
		return out
	}
	step("apply", "apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })
	shown := step("state show", "state", "show", "-no-color", "rill_clickhouse.db")
	id := regexp.MustCompile(`id\s+=\s+"([0-9a-f-]{36})"`).FindStringSubmatch(shown)
	if id == nil {
		t.Fatalf("no id in:\n%s", shown)
	}
	for _, drop := range []string{"databases", "users"} {
		var server map[string]map[string]any
		raw, err := os.ReadFile(state)
		if err == nil {
			err = json.Unmarshal(raw, &server)
		}
		if err != nil {
			t.Fatal(err)
		}
		for name := range server[drop] {
			if strings.HasPrefix(name, "rill_") {
				delete(server[drop], name)
			}
		}
		if raw, err = json.Marshal(server); err != nil || os.WriteFile(state, raw, 0o600) != nil {
			t.Fatal(err)
		}
		step("state rm", "state", "rm", "rill_clickhouse.db")
		step("import with its "+drop+" dropped", "import", "-no-color", "rill_clickhouse.db", "ch/"+id[1])
		// The plan says what the apply makes again: before, the import's reason came first and said
		// "the user and its database are kept, with their data" of a database the apply creates empty.
		plan := step("plan after the import", "plan", "-no-color")
		want := map[string]string{"databases": "its database is missing on the server", "users": "its user is missing on the server"}[drop]
		if !strings.Contains(plan, want) || strings.Contains(plan, "the user and its database are kept") {
			t.Errorf("with its %s dropped: the plan lacks %q, or says both are kept:\n%s", drop, want, acctest.Tail(plan))
		}
		step("apply after the import", "apply", "-no-color", "-auto-approve")
		if plan := step("plan after the apply", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
			t.Fatalf("with its %s dropped: plan after the import's apply is not empty:\n%s", drop, acctest.Tail(plan))
		}
		raw, err = os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		idPart := strings.ReplaceAll(id[1], "-", "_")
		if !strings.Contains(string(raw), `"rill_`+idPart+`"`) || !strings.Contains(string(raw), `"rill_acme_web_`+idPart+`"`) {
			t.Fatalf("with its %s dropped: the apply did not restore the user and database of ID %s: %s", drop, id[1], raw)
		}
	}
}
