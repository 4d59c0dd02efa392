package resources_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
)

// Import of rill_clickhouse, through the real CLI, against a real ClickHouse (chDB's 26.7 engine,
// internal/testutil/chdbtest): `terraform import` adopts the existing user and database by name and
// leaves the dsn null (ClickHouse keeps only a hash of the password); the next plan is an in-place
// update that says the user gets a new password, and writes nothing; an ID with nothing behind it
// cannot be imported. chDB cannot store users by SQL, so the apply that would set the password is
// refused before any statement, with the reason, and the state is kept. No password appears in
// TF_LOG=trace output or in the plan.
func TestAccClickHouse_importAdoptsTheUserAndDatabaseAndPlansANewPassword(t *testing.T) {
	requireAcc(t)
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

	dir := t.TempDir()
	set := fmt.Sprintf(`{"ch": {"type": "clickhouse-static", "spec": {"dsn": %q}}}`, srv.AdminDSN)
	cfg := fmt.Sprintf(`
terraform {
  required_providers {
    rill = { source = "rill-provisioner/rill" }
  }
}
provider "rill" {
  ledger_dsn           = "sqlite://%s/ledger.db"
  provisioner_set_json = %q
}
resource "rill_clickhouse" "db" {
  provisioner_name = "ch"
  annotations      = { organization_name = "acme", project_name = "web" }
}
`, dir, set)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tf := cliRunner(t, dir)

	// Nothing behind the ID: refused.
	if out, err := tf("import", "-no-color", "rill_clickhouse.db", "ch/"+uuid.NewString()); err == nil || !strings.Contains(out, "Cannot import non-existent remote object") {
		t.Fatalf("import of an ID with nothing behind it: err %v\n%s", err, tail(out))
	}

	out, err := tf("import", "-no-color", "rill_clickhouse.db", "ch/"+id)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, tail(out))
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
		t.Fatalf("plan: %v\n%s", err, tail(plan))
	}
	for _, want := range []string{"rill_clickhouse.db will be updated in-place", "The ClickHouse user gets a new password", "Plan: 0 to add, 1 to change, 0 to destroy"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, tail(plan))
		}
	}
	// The plan wrote nothing: the database is still the only one of the resource, and nothing else.
	if dbs, err := srv.Query(ctx, "SELECT name FROM system.databases WHERE name LIKE 'rill%' ORDER BY name"); err != nil || strings.TrimSpace(dbs) != db {
		t.Errorf("databases after the plan: %q (%v)", dbs, err)
	}

	apply, err := tf("apply", "-no-color", "-auto-approve")
	if err == nil || !strings.Contains(apply, "cannot manage users by SQL") || !strings.Contains(apply, "no writable user directory") {
		t.Fatalf("apply on chDB should be refused with the reason; err %v\n%s", err, tail(apply))
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

// cliRunner returns a function that runs the Terraform (or OpenTofu) CLI of TF_ACC_TERRAFORM_PATH in
// dir against this checkout's provider (dev_overrides), with TF_LOG=trace.
func cliRunner(t *testing.T, dir string) func(args ...string) (string, error) {
	tfPath := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tfPath == "" {
		tfPath = "terraform"
	}
	cliConfig := devOverrideCLIConfig(t)
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tfPath, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_LOG=trace", "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
}
