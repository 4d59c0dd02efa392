package resources_test

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// The secrets-out-of-state user story, through the real CLI: the provider's ledger_dsn and
// provisioner_set_json come from `ephemeral = true` variables, and rill_clickhouse's password from
// password_wo (an ephemeral variable too), against the stand-in ClickHouse (the real provisioner;
// see internal/clickhouse/README.md). After apply, a rotation (password_wo_version 1 -> 2) and a saved
// plan, neither the state file, nor `terraform show -json`, nor the plan file, nor TF_LOG=trace
// output holds the password, the ClickHouse admin password or the set; dsn and write_dsn are null
// and dsn_without_password is set; the stand-in's user has exactly the configured password (the
// rotation removed the old one), and the plan after each apply is empty. An import sets the
// configured password; switching to a generated password and back are in-place updates; a user and
// database dropped outside Terraform are planned for re-creation, and the user alone dropped is
// created again by an in-place update with the configured password.
//
// Write-only attributes need Terraform 1.11 (OpenTofu 1.11), ephemeral variables Terraform 1.10
// (OpenTofu 1.11): older CLIs skip, saying so (and fail under CI=true: acctest.RequireCLIVersion).
func TestAccClickHouse_writeOnlyPasswordAndEphemeralProviderInputsKeepSecretsOutOfState(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 11, "write-only attributes (password_wo) and ephemeral variables")

	const adminPassword = "Ephemeral-Adm1n-Pa55"
	set, fakeState := acctest.FakeClickHouseSet(t, adminPassword, true)
	passwords := []string{`Wr1te-0nly 'first' \ pw`, "Wr1te-0nly-second-pw"}
	dir := t.TempDir()
	t.Setenv("TF_VAR_ledger_dsn", "sqlite://"+filepath.Join(dir, "ledger.db"))
	t.Setenv("TF_VAR_provisioner_set_json", set)
	// The provider's inputs come as the documented example gives them (ephemeral variables).
	example, err := os.ReadFile(repoFile(t, "examples/provider/ephemeral.tf"))
	if err != nil {
		t.Fatal(err)
	}
	main := string(example) + `
variable "clickhouse_password" {
  type      = string
  ephemeral = true
}
variable "clickhouse_password_version" {
  type = number
}
resource "rill_clickhouse" "db" {
  provisioner_name    = "ch"
  annotations         = { organization_name = "acme", project_name = "web" }
  password_wo         = var.clickhouse_password
  password_wo_version = var.clickhouse_password_version
}
output "dsn_without_password" {
  value = rill_clickhouse.db.dsn_without_password
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	w := acctest.WorkspaceIn(t, dir, acctest.TraceLog)
	tf := w.Run
	var logs []string
	step := func(name string, args ...string) string {
		t.Helper()
		out, err := tf(args...)
		logs = append(logs, out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, acctest.Tail(out))
		}
		return out
	}
	secrets := func() map[string]string {
		return map[string]string{"first password": passwords[0], "second password": passwords[1], "admin password": adminPassword, "set": set}
	}
	noSecretIn := func(what, text string) {
		t.Helper()
		for name, secret := range secrets() {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the %s", what, name)
			}
		}
	}
	checkState := func(when string, version int) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
		if err != nil {
			t.Fatal(err)
		}
		noSecretIn("the state file "+when, string(raw))
		if private := w.PrivateStateWithout(secrets()); private["rill_clickhouse.db"]["provisioner_state"] == "" {
			t.Errorf("%s: rill_clickhouse.db has no provisioner state in its private state: %q", when, private)
		}
		shown := step("show -json", "show", "-json")
		noSecretIn("`terraform show -json` "+when, shown)
		attrs := stateAttributes(t, shown, "rill_clickhouse.db")
		if attrs["dsn"] != nil || attrs["write_dsn"] != nil || attrs["password_wo"] != nil {
			t.Errorf("%s: dsn %v, write_dsn %v, password_wo %v: want all null", when, attrs["dsn"], attrs["write_dsn"], attrs["password_wo"])
		}
		dsn, _ := attrs["dsn_without_password"].(string)
		if !regexp.MustCompile(`^clickhouse://rill_[0-9a-f_]+@ch\.fake:9000/rill_acme_web_[0-9a-f_]+$`).MatchString(dsn) ||
			!strings.HasPrefix(fmt.Sprint(attrs["write_dsn_without_password"]), "http://rill_") || attrs["password_wo_version"] != float64(version) {
			t.Errorf("%s: dsn_without_password %q, write_dsn_without_password %v, password_wo_version %v", when, dsn, attrs["write_dsn_without_password"], attrs["password_wo_version"])
		}
		// The stand-in ClickHouse: the user has the configured password, and only that one.
		var fake struct{ Users map[string][]string }
		if b, err := os.ReadFile(fakeState); err != nil || json.Unmarshal(b, &fake) != nil {
			t.Fatalf("reading the stand-in's state: %v", err)
		}
		user, _ := attrs["user"].(string)
		if got := fake.Users[user]; len(got) != 1 || got[0] != passwords[version-1] {
			t.Errorf("%s: the user %s has %d passwords; want exactly password %d", when, user, len(got), version)
		}
	}

	t.Setenv("TF_VAR_clickhouse_password", passwords[0])
	t.Setenv("TF_VAR_clickhouse_password_version", "1")
	step("apply", "apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })
	checkState("after the first apply", 1)
	if plan := step("second plan", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("second plan is not empty:\n%s", acctest.Tail(plan))
	}

	// Rotation: a new password and version; the plan shows an in-place update of the version only.
	t.Setenv("TF_VAR_clickhouse_password", passwords[1])
	t.Setenv("TF_VAR_clickhouse_password_version", "2")
	step("plan -out", "plan", "-no-color", "-out=tfplan")
	plan := step("show plan", "show", "-no-color", "tfplan")
	if !strings.Contains(plan, "rill_clickhouse.db will be updated in-place") || !strings.Contains(plan, "password_wo_version") {
		t.Fatalf("the rotation's plan:\n%s", acctest.Tail(plan))
	}
	noSecretIn("the saved plan file", planFileContents(t, filepath.Join(dir, "tfplan")))
	noSecretIn("`terraform show -json tfplan`", step("show -json plan", "show", "-json", "tfplan"))
	// Ephemeral variables are not in the plan file: the apply of a saved plan needs them again.
	step("apply the saved plan", "apply", "-no-color", "tfplan")
	checkState("after the rotation", 2)
	if plan := step("plan after the rotation", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the rotation is not empty:\n%s", acctest.Tail(plan))
	}

	// Import into a fresh state: nobody knows the password, and the configured one is set, without the
	// generated-password warning; the state still holds no secret.
	id := stateAttributes(t, step("show -json before import", "show", "-json"), "rill_clickhouse.db")["id"].(string)
	step("state rm", "state", "rm", "rill_clickhouse.db")
	step("import", "import", "-no-color", "rill_clickhouse.db", "ch/"+id)
	plan = step("plan after import", "plan", "-no-color")
	if !strings.Contains(plan, "rill_clickhouse.db will be updated in-place") || strings.Contains(plan, "gets a new password") {
		t.Fatalf("plan after import:\n%s", acctest.Tail(plan))
	}
	step("apply after import", "apply", "-no-color", "-auto-approve")
	checkState("after the import's apply", 2)

	// Switching modes is an in-place update each way: without password_wo the apply generates a
	// password and dsn carries it (in the state, as before write-only attributes); with it again,
	// dsn is null and the configured password is the only one.
	writeMain := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	generated := strings.Replace(strings.Replace(main, "  password_wo         = var.clickhouse_password\n", "", 1),
		"  password_wo_version = var.clickhouse_password_version\n", "", 1)
	writeMain(generated)
	if plan := step("plan to a generated password", "plan", "-no-color"); !strings.Contains(plan, "The ClickHouse user gets a new password") {
		t.Fatalf("plan to a generated password:\n%s", acctest.Tail(plan))
	}
	step("apply to a generated password", "apply", "-no-color", "-auto-approve")
	attrs := stateAttributes(t, step("show -json generated", "show", "-json"), "rill_clickhouse.db")
	dsn, _ := attrs["dsn"].(string)
	var fake map[string]json.RawMessage
	if raw, err := os.ReadFile(fakeState); err != nil || json.Unmarshal(raw, &fake) != nil {
		t.Fatalf("reading the stand-in's state: %v", err)
	}
	var users map[string][]string
	_ = json.Unmarshal(fake["users"], &users)
	if got := users[attrs["user"].(string)]; len(got) != 1 || !strings.Contains(dsn, ":"+got[0]+"@") || attrs["password_wo_version"] != nil {
		t.Fatalf("after the switch to a generated password: dsn set %v, %d passwords, version %v", dsn != "", len(got), attrs["password_wo_version"])
	}
	if plan := step("plan after the switch", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the switch to a generated password is not empty:\n%s", acctest.Tail(plan))
	}
	writeMain(main)
	step("apply back to password_wo", "apply", "-no-color", "-auto-approve")
	checkState("after switching back to password_wo", 2)
	if raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate")); err != nil || strings.Contains(string(raw), dsn) {
		t.Errorf("the state still holds the generated dsn after switching back to password_wo (%v)", err)
	}

	// The user alone dropped outside Terraform (or by a destroy killed before its DROP DATABASE): with
	// no DSN to log in with, refresh looks it up by name and keeps the resource; the plan is an
	// in-place update (the state has no password to replace, so no warning that it gets a new one),
	// whose apply creates the user again with the configured password, under the same ID.
	var dropped map[string]json.RawMessage
	if raw, err := os.ReadFile(fakeState); err != nil || json.Unmarshal(raw, &dropped) != nil {
		t.Fatalf("reading the stand-in's state: %v", err)
	}
	dropped["users"] = json.RawMessage(`{}`)
	if raw, err := json.Marshal(dropped); err != nil || os.WriteFile(fakeState, raw, 0o600) != nil {
		t.Fatalf("dropping the user in the stand-in: %v", err)
	}
	plan = step("plan after the user was dropped", "plan", "-no-color")
	if !strings.Contains(plan, "rill_clickhouse.db will be updated in-place") || !strings.Contains(plan, "is missing") ||
		strings.Contains(plan, "will be created") || strings.Contains(plan, "gets a new password") {
		t.Fatalf("plan after the user was dropped outside Terraform:\n%s", acctest.Tail(plan))
	}
	step("apply after the user was dropped", "apply", "-no-color", "-auto-approve")
	checkState("after the apply created the user again", 2)
	if got := stateAttributes(t, step("show -json after the user came back", "show", "-json"), "rill_clickhouse.db")["id"]; got != id {
		t.Fatalf("the apply that created the user again changed the ID from %s to %v", id, got)
	}
	if plan := step("plan after the user came back", "plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("plan after the user was created again is not empty:\n%s", acctest.Tail(plan))
	}

	// The user and database dropped outside Terraform: with no DSN to log in with, refresh looks them
	// up by name, finds both gone and plans re-creation (one of them alone is kept, above).
	if err := os.WriteFile(fakeState, []byte(`{"users": {}, "databases": {"default": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plan = step("plan after an outside drop", "plan", "-no-color")
	if !strings.Contains(plan, "rill_clickhouse.db will be created") {
		t.Fatalf("plan after the user and database were dropped outside Terraform:\n%s", acctest.Tail(plan))
	}

	step("destroy", "destroy", "-no-color", "-auto-approve")
	if left, err := os.ReadFile(fakeState); err != nil || strings.Contains(string(left), "rill_") {
		t.Fatalf("destroy left users or databases in the stand-in: %s (%v)", left, err)
	}
	for i, out := range logs {
		noSecretIn(fmt.Sprintf("the output (TF_LOG=trace) of CLI command %d", i+1), out)
	}
}

// stateAttributes returns the attributes of a resource in `terraform show -json` output.
func stateAttributes(t *testing.T, showJSON, address string) map[string]any {
	t.Helper()
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	// TF_LOG lines go to stderr, mixed into the output: the JSON document is the line that starts with "{".
	for _, line := range strings.Split(showJSON, "\n") {
		if strings.HasPrefix(line, `{"format_version"`) {
			if err := json.Unmarshal([]byte(line), &doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Address == address {
			return r.Values
		}
	}
	t.Fatalf("%s not in `terraform show -json`", address)
	return nil
}

// planFileContents returns every file in a saved plan (a zip archive), uncompressed, one after another.
func planFileContents(t *testing.T, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zr.Close() }()
	var all strings.Builder
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}
