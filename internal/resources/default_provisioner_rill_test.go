package resources_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// Rill's admin service's environment, pasted as it is: RILL_ADMIN_PROVISIONER_SET_JSON with its
// runtime pool and a clickhouse-static provisioner, and RILL_ADMIN_DEFAULT_PROVISIONER naming the
// pool (Rill uses the default for runtimes: admin/deployments.go; a ClickHouse resource gets a
// provisioner of the set that supports the type, whatever the default: admin/server/provision.go).
// A rill_runtime and a rill_clickhouse that name no provisioner land where Rill puts them: the runtime
// in the pool, the database on the ClickHouse provisioner. Before, the database's plan failed with
// `provisioner "pool" (type static) cannot provision clickhouse resources`.
func TestAccClickHouse_rillsEnvironmentAsItIsGivesTheDatabaseItsClickHouseProvisioner(t *testing.T) {
	acctest.RequireAcc(t)
	chSet, _ := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)
	var set map[string]any
	if err := json.Unmarshal([]byte(chSet), &set); err != nil {
		t.Fatal(err)
	}
	set["pool"] = map[string]any{"type": "static", "spec": map[string]any{
		"runtimes": []any{map[string]any{"host": "http://localhost:9091", "slots": 50, "data_dir": "/mnt/data", "audience_url": "http://localhost:8081"}},
	}}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewWorkspace(t, "RILL_ADMIN_PROVISIONER_SET_JSON="+string(b), "RILL_ADMIN_DEFAULT_PROVISIONER=pool")
	w.Write("main.tf", `terraform {
  required_providers {
    rill = { source = "rill-provisioner/rill" }
  }
}
provider "rill" {
  ledger_dsn = `+strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db"))+`
}
resource "rill_runtime" "rt" {
  slots = 1
}
resource "rill_clickhouse" "db" {
  annotations = { organization_name = "acme", project_name = "web" }
}
`)
	t.Cleanup(func() { _, _ = w.Run("destroy", "-no-color", "-auto-approve") })
	if out, err := w.Run("apply", "-no-color", "-auto-approve"); err != nil {
		t.Fatalf("apply: %v\n%s", err, acctest.Tail(out))
	}
	if _, _, attrs := clickhouseInStateFile(t, w); attrs["provisioner_name"] != "ch" {
		t.Errorf("rill_clickhouse.db: provisioner_name %v, want ch", attrs["provisioner_name"])
	}
	if got := w.RuntimeAttributeInState("provisioner_name")["rill_runtime.rt"]; got != "pool" {
		t.Errorf("rill_runtime.rt: provisioner_name %v, want pool", got)
	}
	if out, err := w.Run("plan", "-no-color", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after the apply is not empty: %v\n%s", err, acctest.Tail(out))
	}
}
