package resources_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Secrets pushed on purpose through every place a user puts one: a PostgreSQL ledger DSN with a
// password (RILL_LEDGER_DSN), a ClickHouse admin DSN with a password (dsn_env in provisioner_set_json),
// and a Kubernetes bearer token (in the kubeconfig a kubernetes provisioner reads). Provisioning goes on with them (a runtime placed through the
// PostgreSQL ledger) and fails with them (ClickHouse and the API server refuse connections), and none
// of them appears in TF_LOG=trace output, in diagnostics, in `terraform show` of the plan or in
// `terraform show -json` of the plan and the state. (Terraform itself writes a secret given in main.tf
// into a saved plan: a literal in the plan's configuration section, a sensitive variable's value in its
// variables section, whatever the provider does; environment variables, or variables with
// `ephemeral = true` on Terraform 1.10 and later, keep them out.)
func TestAcc_secretsStayOutOfLogsAndPlans(t *testing.T) {
	acctest.RequireAcc(t)
	const (
		adminPassword  = "Adm1n-S3cret-Pa55"
		ledgerPassword = "L3dger-S3cret-Pa55"
		kubeToken      = "k8s-T0ken-S3cret-0123456789abcdef"
	)
	ledger := withPassword(t, pgtest.Shared(t), ledgerPassword) // trust authentication: any password works
	closed := freeport.For(t)                                   // nothing listens there
	kubeconfig := k8stest.WriteKubeconfig(t, "", fmt.Sprintf("https://127.0.0.1:%d", closed), kubeToken)
	t.Setenv(envnames.LedgerDSN, ledger)
	t.Setenv("RILL_TEST_CLICKHOUSE_ADMIN_DSN", fmt.Sprintf("clickhouse://admin:%s@127.0.0.1:%d/default", adminPassword, closed))
	set := fmt.Sprintf(`{
  "ch": {"type": "clickhouse-static", "spec": {"dsn_env": "RILL_TEST_CLICKHOUSE_ADMIN_DSN"}},
  "k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": %q, "timeout_seconds": 10}},
  "pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}
}`, kubeconfig)
	w := secretsWorkspace(t, "", set, `
resource "rill_runtime" "rt" {
  provisioner_name = "pool"
  slots            = 1
}
resource "rill_runtime" "on_k8s" {
  provisioner_name = "k8s"
  slots            = 1
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
	run := w.Run

	outputs := map[string]string{}
	mustRun := func(name string, args ...string) {
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%s failed: %v\n%s", name, err, acctest.Tail(out))
		}
		outputs[name] = out
	}
	mustRun("plan (TF_LOG=trace)", "plan", "-no-color", "-out=tfplan")
	mustRun("show plan", "show", "-no-color", "tfplan")
	mustRun("show -json plan", "show", "-json", "tfplan")
	apply, applyErr := run("apply", "-no-color", "-auto-approve")
	outputs["apply (TF_LOG=trace)"] = apply
	t.Cleanup(func() { _, _ = run("destroy", "-no-color", "-auto-approve") })
	mustRun("show -json state", "show", "-json")

	if applyErr == nil || !strings.Contains(apply, "Provisioning the ClickHouse database failed") || !strings.Contains(apply, "Provisioning the runtime failed") {
		t.Fatalf("apply against closed ClickHouse and API server ports should fail both; err=%v\n%s", applyErr, acctest.Tail(apply))
	}
	// The secrets were used, not ignored: the runtime went through the PostgreSQL ledger, and the
	// failures are the connections the ClickHouse DSN and the kubeconfig point at.
	if !strings.Contains(outputs["show -json state"], `"rill_runtime.rt"`) || !strings.Contains(apply, "placing runtime") {
		t.Errorf("the static runtime was not placed through the PostgreSQL ledger:\n%s", acctest.Tail(apply))
	}
	if !strings.Contains(apply, fmt.Sprintf("127.0.0.1:%d", closed)) {
		t.Errorf("the failures do not name the address the DSN and kubeconfig point at:\n%s", acctest.Tail(apply))
	}
	if !strings.Contains(outputs["plan (TF_LOG=trace)"], "[TRACE]") || !strings.Contains(apply, "@module=rill.provisioner") {
		t.Fatalf("TF_LOG=trace output lacks the provider's and the provisioners' lines:\n%s", acctest.Tail(apply))
	}
	secrets := map[string]string{"ClickHouse admin password": adminPassword, "ledger password": ledgerPassword, "Kubernetes token": kubeToken}
	// The static runtime's private state names its ledger (so that a refresh can tell another
	// ledger): by its DSN without the password.
	if ledgerName := w.PrivateStateWithout(secrets)["rill_runtime.rt"]["provisioner_state"]; !strings.Contains(ledgerName, `"ledger":"postgres://`) {
		t.Errorf("rill_runtime.rt's private state does not name its PostgreSQL ledger: %q", ledgerName)
	}
	for name, out := range outputs {
		for what, secret := range secrets {
			if i := strings.Index(out, secret); i >= 0 {
				t.Errorf("%s output contains the %s near: %q", name, what, out[max(0, i-200):min(len(out), i+50)])
			}
		}
	}
	if !strings.Contains(outputs["show plan"], "(sensitive value)") {
		t.Errorf("plan output does not mark the DSN as sensitive:\n%s", outputs["show plan"])
	}
}

// A ledger that cannot be reached fails the apply with an error that names it without its password.
func TestAcc_unreachableLedgerErrorHidesItsPassword(t *testing.T) {
	acctest.RequireAcc(t)
	const ledgerPassword = "Unr3achable-L3dger-Pa55"
	ledger := fmt.Sprintf("postgres://rill:%s@127.0.0.1:%d/ledger?sslmode=disable&connect_timeout=5", ledgerPassword, freeport.For(t))
	run := secretsWorkspace(t, fmt.Sprintf("%q", ledger), `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}}`, `
resource "rill_runtime" "rt" {
  slots = 1
}
`).Run
	apply, err := run("apply", "-no-color", "-auto-approve")
	if err == nil || !strings.Contains(apply, "Provisioning the runtime failed") || !strings.Contains(apply, "127.0.0.1") {
		t.Fatalf("apply with an unreachable ledger should fail naming it; err=%v\n%s", err, acctest.Tail(apply))
	}
	if i := strings.Index(apply, ledgerPassword); i >= 0 {
		t.Fatalf("the output contains the ledger password near: %q", apply[max(0, i-200):min(len(apply), i+50)])
	}
}

// secretsWorkspace writes a main.tf with the given ledger_dsn expression (none when empty) and set in
// a workspace whose CLI runs with TF_LOG=trace.
func secretsWorkspace(t *testing.T, ledger, set, body string) *acctest.Workspace {
	t.Helper()
	w := acctest.NewWorkspace(t, acctest.TraceLog)
	w.Write("main.tf", acctest.CLIHeader(ledger, set)+body)
	return w
}

// withPassword returns dsn with a password for its user.
func withPassword(t *testing.T, dsn, password string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// A set or a ledger DSN written as a literal in the provider block is not printed with the
// diagnostics about it: Terraform prints the source lines of the expression an attribute's
// diagnostic points at, and a set pasted from Rill's, with its ClickHouse admin password, showed it
// once per diagnostic (33 times in a walkthrough's plan). The diagnostics still name the attribute.
func TestAcc_aLiteralSetOrDSNIsNotPrintedWithItsDiagnostics(t *testing.T) {
	acctest.RequireAcc(t)
	const secret = "Secr3tPw"
	for name, tc := range map[string]struct{ ledger, set, want string }{
		"set": {strconv.Quote(acctest.SQLiteLedger(t)),
			`{"p": {"type": "static", "spec": {"dsn": "postgres://u:` + secret + `@h.test/db", "runtimes": [{"host": "http://h.test:9091", "slots": -1}]}}}`,
			`provisioner_set_json: provisioner "p": spec.runtimes[0].slots: must be between`},
		"ledger_dsn": {strconv.Quote("postgres://u:" + secret + "@127.0.0.1:1/db?sslmode=bogus"), `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}}`, `Invalid ledger DSN`},
	} {
		t.Run(name, func(t *testing.T) {
			w := acctest.NewWorkspace(t)
			w.Write("main.tf", acctest.CLIHeader(tc.ledger, tc.set)+"resource \"rill_runtime\" \"rt\" {\n  slots = 1\n}\n")
			out, err := w.Run("plan")
			if err == nil || !acctest.WordsRegexp(tc.want).MatchString(out) {
				t.Fatalf("the plan should fail saying %q (err %v):\n%s", tc.want, err, acctest.Tail(out))
			}
			if strings.Contains(out, secret) {
				t.Errorf("the plan's output shows the password:\n%s", out)
			}
		})
	}
}
