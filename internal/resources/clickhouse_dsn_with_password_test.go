package resources_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// The user story of provider::rill::dsn_with_password, through the real CLI: a rill_clickhouse
// whose password comes from password_wo (never stored) hands its client a whole DSN: the function
// puts the configured password into dsn_without_password (and write_dsn_without_password), and the
// ClickHouse client reads from the result the user, password and database the stand-in has. The
// result keeps its argument's marks: from a sensitive password an output must say sensitive, from an
// ephemeral one no output may hold it. A DSN that names no user is refused at plan time, naming the
// argument and without quoting the password.
//
// Provider functions need Terraform 1.8 (OpenTofu 1.7), write-only attributes 1.11 (OpenTofu 1.11).
func TestAccClickHouse_dsnWithPasswordGivesAWriteOnlyPasswordsClientItsWholeDSN(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 11, "provider functions and write-only attributes (password_wo)")

	const password = `Wh0le-DSN p@ss:w/rd`
	set, standIn := acctest.FakeClickHouseSet(t, "Fn-Adm1n-Pa55", true)
	w := acctest.NewWorkspace(t)
	header := acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db")), set)
	const database = `
variable "clickhouse_password" {
  type      = string
  sensitive = true
}
resource "rill_clickhouse" "db" {
  provisioner_name    = "ch"
  annotations         = { organization_name = "acme", project_name = "web" }
  password_wo         = var.clickhouse_password
  password_wo_version = 1
}
`
	const outputs = `
output "dsn" {
  value     = provider::rill::dsn_with_password(rill_clickhouse.db.dsn_without_password, var.clickhouse_password)
  sensitive = true
}
output "write_dsn" {
  value     = provider::rill::dsn_with_password(rill_clickhouse.db.write_dsn_without_password, var.clickhouse_password)
  sensitive = true
}
`
	t.Setenv("TF_VAR_clickhouse_password", password)
	w.Write("main.tf", header+database+outputs)
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve") })

	fake, err := readFakeServer(standIn)
	if err != nil {
		t.Fatal(err)
	}
	user := strings.TrimSpace(w.Must("state", "show", "-no-color", "rill_clickhouse.db"))
	for _, name := range []string{"dsn", "write_dsn"} {
		dsn := w.Must("output", "-raw", name)
		opts, err := clickhouse.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("output %s: the ClickHouse client refuses it: %v", name, err)
		}
		if got := fake.Users[opts.Auth.Username]; len(got) != 1 || got[0] != password || opts.Auth.Password != password {
			t.Errorf("output %s: the client logs in as %q with the configured password %v; the stand-in has %d passwords for that user",
				name, opts.Auth.Username, opts.Auth.Password == password, len(got))
		}
		if !fake.Databases[opts.Auth.Database] || !strings.Contains(user, `"`+opts.Auth.Database+`"`) || !strings.Contains(user, `"`+opts.Auth.Username+`"`) {
			t.Errorf("output %s: database %q and user %q are not the resource's:\n%s", name, opts.Auth.Database, opts.Auth.Username, user)
		}
	}
	if plan := w.Must("plan", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", acctest.Tail(plan))
	}

	// The marks: a sensitive password makes a sensitive result, an ephemeral one an ephemeral result.
	w.Write("main.tf", header+database+strings.Replace(outputs, "  sensitive = true\n", "", 1))
	if out, err := w.Run("plan"); err == nil || !strings.Contains(out, "Output refers to sensitive values") {
		t.Errorf("an output of the result without sensitive = true: %v\n%s", err, acctest.Tail(out))
	}
	ephemeral := strings.Replace(database, "  sensitive = true\n", "  ephemeral = true\n", 1)
	w.Write("main.tf", header+ephemeral+strings.ReplaceAll(outputs, "  sensitive = true\n", ""))
	// Terraform says "Ephemeral value not allowed", OpenTofu "Output does not allow ephemeral value".
	if out, err := w.Run("plan"); err == nil || !regexp.MustCompile(`(?i)ephemeral value not allowed|does not allow ephemeral value`).MatchString(out) {
		t.Errorf("an output of the result of an ephemeral password: %v\n%s", err, acctest.Tail(out))
	}

	// A bad argument is refused by the plan, naming it (each argument's errors: internal/functions).
	call := `provider::rill::dsn_with_password("https://ch.fake:8443/db", var.clickhouse_password)`
	w.Write("main.tf", header+database+"output \"dsn\" {\n  value     = "+call+"\n  sensitive = true\n}\n")
	out, err := w.Run("plan")
	if want := `Invalid value for "dsn" parameter: dsn names no user`; err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("%s: %v, want an error with %q\n%s", call, err, want, acctest.Tail(out))
	}
	if strings.Contains(out, password) {
		t.Errorf("%s: the error quotes the password", call)
	}
}
