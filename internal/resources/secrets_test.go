package resources_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
)

// Secrets in the provider block (a ClickHouse admin password in the set, a PostgreSQL ledger password)
// never reach TF_LOG=trace output, plan output or error messages, even when provisioning fails while
// connecting with them.
func TestAcc_secretsStayOutOfLogsAndPlans(t *testing.T) {
	requireAcc(t)

	const adminPassword = "Adm1n-S3cret-Pa55"
	closed := freeport.For(t) // nothing listens there
	set := fmt.Sprintf(`{
  "ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:%s@127.0.0.1:%d/default"}},
  "pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}
}`, adminPassword, closed)
	_, run := cliWorkspace(t, set, "pool", `
resource "rill_runtime" "rt" {
  slots = 1
}
resource "rill_clickhouse" "db" {
  provisioner_name = "ch"
  annotations      = { organization_name = "acme", project_name = "secrets" }
  timeouts {
    create = "20s"
  }
}
output "dsn" {
  value     = rill_clickhouse.db.dsn
  sensitive = true
}
`)

	plan, err := run("plan", "-no-color", "-out=tfplan")
	if err != nil {
		t.Fatalf("plan failed: %v\n%s", err, tail(plan))
	}
	show, err := run("show", "-no-color", "tfplan")
	if err != nil {
		t.Fatalf("show failed: %v\n%s", err, tail(show))
	}
	apply, applyErr := run("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = run("destroy", "-no-color", "-auto-approve") })

	if applyErr == nil || !strings.Contains(apply, "Provisioning the ClickHouse database failed") {
		t.Fatalf("apply against a closed ClickHouse port should fail provisioning; err=%v\n%s", applyErr, tail(apply))
	}
	if !strings.Contains(plan, "provisioner") || !strings.Contains(plan, "[TRACE]") {
		t.Fatalf("TF_LOG=trace output is missing provider lines:\n%s", tail(plan))
	}
	// The static provisioner's zap lines reach TF_LOG through the bridge, with its decision and reason.
	if !strings.Contains(apply, "placing runtime") || !strings.Contains(apply, "@module=rill.provisioner") || !strings.Contains(apply, "placement spread") {
		t.Errorf("TF_LOG output lacks the provisioner's placement decision (zap -> tflog bridge)")
	}
	for name, out := range map[string]string{"plan (TF_LOG=trace)": plan, "show": show, "apply (TF_LOG=trace)": apply} {
		if strings.Contains(out, adminPassword) {
			i := strings.Index(out, adminPassword)
			t.Errorf("%s output contains the admin password near: %q", name, out[max(0, i-200):min(len(out), i+50)])
		}
	}
	if !strings.Contains(show, "(sensitive value)") {
		t.Errorf("plan output does not mark the set or the DSN as sensitive:\n%s", show)
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "...\n" + s[len(s)-4000:]
	}
	return s
}
