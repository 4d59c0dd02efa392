package resources_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/silentserver"
)

// ledgerWorkspace writes main.tf with a provider block that names no ledger (the ledger comes from
// the environment of each run: RILL_LEDGER_DSN, or the default under XDG_DATA_HOME) and body.
func ledgerWorkspace(t *testing.T, set, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(acctest.CLIHeader("", set)+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const identityPool = `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://runtime-a.test:9091", "slots": 4}]}}}`

const twoRuntimes = `
resource "rill_runtime" "one" {
  slots = 1
}
resource "rill_runtime" "two" {
  slots = 1
}
`

// refusedPlan runs a plan, and then `terraform apply -refresh-only` (which would write the state),
// that must each fail with the identity error naming each of want, and checks that they read no
// runtime as gone and left the state file byte for byte as it was.
func refusedPlan(t *testing.T, dir string, tf func(args ...string) (string, error), want ...string) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plan", "-no-color"}, {"apply", "-refresh-only", "-auto-approve", "-no-color"}} {
		cmd := strings.Join(args[:len(args)-1], " ")
		out, err := tf(args...)
		if err == nil {
			t.Fatalf("%s against another ledger or cluster succeeded:\n%s", cmd, acctest.Tail(out))
		}
		for _, w := range append(want, "Runtime was provisioned in another ledger or cluster", "terraform state rm") {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", cmd, w, acctest.Tail(out))
			}
		}
		if strings.Contains(out, "removed outside Terraform") || strings.Contains(out, "to add") {
			t.Errorf("%s read the runtimes as gone:\n%s", cmd, acctest.Tail(out))
		}
		after, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("the refused %s changed the state file (%v)", cmd, err)
		}
	}
}

func ledgerID(t *testing.T, dsn string) string {
	t.Helper()
	db, err := database.OpenReadOnly(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	id, err := db.Identity(context.Background())
	if err != nil || id.ID == "" {
		t.Fatalf("identity of %s: %+v, %v", database.Redact(dsn), id, err)
	}
	return id.ID
}

// A new runner: the same configuration and state, but the default SQLite ledger of another
// XDG_DATA_HOME. A plan with nothing in state creates no ledger; after an apply, a plan against a
// data home without a ledger, or against another ledger, is refused with an error naming both ledgers
// and the fix, writes nothing to the state or to disk, and the runtimes stay in their own ledger,
// where the next plan is empty.
func TestAccRuntime_newRunnerWithAnotherDefaultLedgerIsRefused(t *testing.T) {
	acctest.RequireAcc(t)
	dir := ledgerWorkspace(t, identityPool, twoRuntimes)
	homeA, homeB, homeC := t.TempDir(), t.TempDir(), t.TempDir()
	a := acctest.WorkspaceIn(t, dir, acctest.TraceLog, "XDG_DATA_HOME="+homeA)
	tfA := a.Run
	ledgerA := "sqlite://" + filepath.Join(homeA, "terraform-provider-rill", "ledger.db")

	// Nothing in state: the plan plans two creates and creates no ledger.
	if out := a.Must("plan", "-no-color"); !strings.Contains(out, "Plan: 2 to add, 0 to change, 0 to destroy") {
		t.Fatalf("plan with nothing in state:\n%s", acctest.Tail(out))
	}
	checkEmptyDir(t, homeA)

	a.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tfA("destroy", "-no-color", "-auto-approve") })
	idA := ledgerID(t, ledgerA)

	// A data home without a ledger. The state names the runtimes' ledger by its identity: its path
	// was under the other runner's data home.
	inDefaultLedger := "ledger " + idA + ", the default SQLite ledger of the machine that applied it"
	refusedPlan(t, dir, acctest.WorkspaceIn(t, dir, acctest.TraceLog, "XDG_DATA_HOME="+homeB).Run, "ledger_dsn", inDefaultLedger,
		"the default ledger here, sqlite://"+filepath.Join(homeB, "terraform-provider-rill", "ledger.db")+", does not exist")
	checkEmptyDir(t, homeB)

	// A data home with another ledger.
	ledgerC := "sqlite://" + filepath.Join(homeC, "terraform-provider-rill", "ledger.db")
	ledgertest.Open(t, ledgerC)
	refusedPlan(t, dir, acctest.WorkspaceIn(t, dir, acctest.TraceLog, "XDG_DATA_HOME="+homeC).Run, "ledger_dsn", inDefaultLedger, ledgerID(t, ledgerC), ledgerC)
	if allocs, err := acctest.LedgerAllocations(ledgerC); err != nil || len(allocs) != 0 {
		t.Errorf("the other ledger got allocations: %v, %v", allocs, err)
	}

	// The runtimes' own ledger: nothing to do.
	if out := a.Must("plan", "-no-color", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan against the runtimes' own ledger:\n%s", acctest.Tail(out))
	}
	if allocs, err := acctest.LedgerAllocations(ledgerA); err != nil || len(allocs) != 2 {
		t.Errorf("the runtimes' ledger holds %d allocations (%v), want 2", len(allocs), err)
	}
}

// The same with PostgreSQL: a plan against an empty database (no ledger schema) creates no table and
// is refused, as is a plan against another migrated ledger.
func TestAccRuntime_anotherPostgresLedgerIsRefused(t *testing.T) {
	acctest.RequireAcc(t)
	dsnA, dsnB := pgtest.Shared(t), pgtest.Shared(t)
	dir := ledgerWorkspace(t, identityPool, twoRuntimes)
	a := acctest.WorkspaceIn(t, dir, acctest.TraceLog, envnames.LedgerDSN+"="+dsnA)
	tfA := a.Run
	a.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tfA("destroy", "-no-color", "-auto-approve") })
	idA := ledgerID(t, dsnA)

	tfB := acctest.WorkspaceIn(t, dir, acctest.TraceLog, envnames.LedgerDSN+"="+dsnB).Run
	refusedPlan(t, dir, tfB, "ledger_dsn", idA, database.Redact(dsnA), database.Redact(dsnB)+", which does not exist")
	if tables := pgtest.Tables(t, dsnB); len(tables) != 0 {
		t.Errorf("the plan created tables in the empty database: %v", tables)
	}

	ledgertest.Open(t, dsnB) // now a ledger of its own
	refusedPlan(t, dir, tfB, "ledger_dsn", idA, ledgerID(t, dsnB), database.Redact(dsnB))
	if allocs, err := acctest.LedgerAllocations(dsnB); err != nil || len(allocs) != 0 {
		t.Errorf("the other ledger got allocations: %v, %v", allocs, err)
	}
	if out := a.Must("plan", "-no-color"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan against the runtimes' own ledger:\n%s", acctest.Tail(out))
	}
}

// A PostgreSQL ledger that accepts TCP and never answers fails a plan of 50 runtimes with the
// connect error, after one connection attempt: the provider remembers the failure instead of waiting
// a connect timeout per runtime.
func TestAccRuntime_unresponsivePostgresFailsAPlanOfFiftyRuntimesAfterOneAttempt(t *testing.T) {
	acctest.RequireAcc(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://runtime-a.test:9091", "slots": 50}]}}}`
	dir := ledgerWorkspace(t, set, `
resource "rill_runtime" "rt" {
  count = 50
  slots = 1
}
`)
	sqliteDSN := "sqlite://" + filepath.Join(dir, "ledger.db")
	w := acctest.WorkspaceIn(t, dir, acctest.TraceLog, envnames.LedgerDSN+"="+sqliteDSN)
	tf := w.Run
	w.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })

	srv := silentserver.Start(t)
	silent := "postgres://rill:Silent-Pa55@" + srv.Addr + "/ledger"
	start := time.Now()
	out, err := acctest.WorkspaceIn(t, dir, acctest.TraceLog, envnames.LedgerDSN+"="+silent).Run("plan", "-no-color")
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("plan against a silent server succeeded:\n%s", acctest.Tail(out))
	}
	for _, w := range []string{"Reading the runtime failed", "connect (each attempt waits up to 10s", srv.Addr, "not tried again"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan output lacks %q:\n%s", w, acctest.Tail(out))
		}
	}
	if strings.Contains(out, "Silent-Pa55") {
		t.Error("plan output shows the ledger's password")
	}
	// sslmode=prefer may try TLS and then plain text on the one attempt.
	if n := srv.Accepted(); n < 1 || n > 2 {
		t.Errorf("the silent server saw %d connections for 50 runtimes, want one attempt", n)
	}
	t.Logf("plan of 50 runtimes against a silent PostgreSQL failed after %s with %d connection(s)", elapsed.Round(100*time.Millisecond), srv.Accepted())
}

// A SQLite ledger whose write lock another process holds (a stuck apply, a sqlite3 shell in a
// transaction): a create with `timeouts { create = "3s" }` fails at its timeout, well before
// database.LockWait (15 s without another writer's commit) would end the wait, with an error that
// says the ledger is locked by another writer, and leaves nothing in state.
func TestAccRuntime_lockedSQLiteLedgerFailsTheCreateWithinItsTimeoutAndSaysSo(t *testing.T) {
	acctest.RequireAcc(t)
	dir := ledgerWorkspace(t, identityPool, `
resource "rill_runtime" "rt" {
  slots = 1
  timeouts {
    create = "3s"
  }
}
`)
	path := filepath.Join(dir, "ledger.db")
	ledgertest.Open(t, "sqlite://"+path)
	tx := ledgertest.HoldSQLiteWriteLock(t, path)

	tf := acctest.WorkspaceIn(t, dir, acctest.TraceLog, envnames.LedgerDSN+"=sqlite://"+path).Run
	start := time.Now()
	out, err := tf("apply", "-no-color", "-auto-approve")
	took := time.Since(start)
	if err == nil {
		t.Fatalf("apply against a locked ledger succeeded:\n%s", acctest.Tail(out))
	}
	// A wait that LockWait ends (15 s without another writer's commit) says only how long it waited;
	// one the create's timeout ends names the deadline. No bound on the time: a loaded machine may
	// take long to start the CLI and the provider, and the message tells the two apart.
	if !strings.Contains(out, "deadline") {
		t.Errorf("the apply failed after %s (LockWait %s) without naming the create's deadline: the 3s create timeout did not end the wait:\n%s",
			took.Round(100*time.Millisecond), database.LockWait, acctest.Tail(out))
	}
	t.Logf("the apply failed after %s", took.Round(100*time.Millisecond))
	want := "ledger sqlite://" + path + " is locked by another writer (another terraform apply?)"
	if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("apply output lacks %q:\n%s", want, acctest.Tail(out))
	}
	quiet := acctest.WorkspaceIn(t, dir, acctest.TraceLog, "TF_LOG=").Run // the last value of a variable wins: no trace mixed into the list
	if list, err := quiet("state", "list"); err != nil || strings.TrimSpace(list) != "" {
		t.Errorf("state after the failed create: %q (%v)", list, err)
	}
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		t.Fatal(err)
	}
}

func checkEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("%s is not empty after a plan: %v (%v)", dir, entries, err)
	}
}

// A state written before ledgers had identities (the runtimes' private state without ledger_id):
// against a data home without a ledger the plan is refused all the same (an allocated runtime's ledger
// existed); against the runtimes' own ledger the plan is empty, and the next refresh records its
// identity. (Another existing ledger without the runtimes cannot be told apart for such a state: see
// DESIGN.md, "Ledger and cluster identity".)
func TestAccRuntime_stateFromBeforeIdentitiesAdoptsItsLedger(t *testing.T) {
	acctest.RequireAcc(t)
	dir := ledgerWorkspace(t, identityPool, twoRuntimes)
	home := t.TempDir()
	w := acctest.WorkspaceIn(t, dir, acctest.TraceLog, "XDG_DATA_HOME="+home)
	tf := w.Run
	w.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })
	id := ledgerID(t, "sqlite://"+filepath.Join(home, "terraform-provider-rill", "ledger.db"))

	statePath := filepath.Join(dir, "terraform.tfstate")
	// What a release from before identities stored: the host and what the provisioner observed, no ledger.
	editProvisionerStates(t, statePath, "rill_runtime", func(ps map[string]any) {
		delete(ps, "ledger_id")
		delete(ps, "ledger")
		ps["host"], ps["slots"], ps["version"], ps["hibernated"] = "http://a.test:9091", 1, "", false
	})

	refusedPlan(t, dir, acctest.WorkspaceIn(t, dir, acctest.TraceLog, "XDG_DATA_HOME="+t.TempDir()).Run, "ledger_dsn", "allocated in a ledger that existed then", "which does not exist")
	if out := w.Must("plan", "-no-color"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan of a state from before identities against its own ledger:\n%s", acctest.Tail(out))
	}
	w.Must("apply", "-refresh-only", "-no-color", "-auto-approve")
	var recorded []any
	editProvisionerStates(t, statePath, "rill_runtime", func(ps map[string]any) { recorded = append(recorded, ps["ledger_id"]) })
	if len(recorded) != 2 || recorded[0] != id || recorded[1] != id {
		t.Fatalf("after a refresh the runtimes record ledgers %v, want %s", recorded, id)
	}
}

// A Kubernetes runtime whose recorded cluster is not the one the kubeconfig reaches: the plan is
// refused naming both clusters, the namespace and the fix, and the state file stays as it was. The
// local control plane is the only cluster the tests have, so "another cluster" is made by pointing
// the runtime's recorded identity (private state, provisioner_state.cluster_id) at another UID, which
// is exactly what a kubeconfig switched to another cluster looks like to the provider. An API server
// that cannot be reached fails the plan too, and the runtime stays in state, unchanged. Back on the
// runtime's own cluster, the plan is empty.
func TestAccRuntimeKubernetes_anotherOrUnreachableClusterIsAnErrorNeverGone(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	body := acctest.RuntimeBlock("rt", 1)
	w := cliWorkspace(t, e.SetJSON(), body)
	dir, tf := w.Dir, w.Run
	w.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { _, _ = tf("destroy", "-no-color", "-auto-approve") })
	ks, err := e.Core.Namespaces().Get(e.Ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	statePath := filepath.Join(dir, "terraform.tfstate")
	original, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	const other = "6d0f7e1c-2b8a-4f3e-9c5d-1a2b3c4d5e6f"
	var recorded any
	editProvisionerStates(t, statePath, "rill_runtime", func(ps map[string]any) { recorded, ps["cluster_id"] = ps["cluster_id"], other })
	if recorded != string(ks.UID) {
		t.Fatalf("the runtime recorded cluster %q, want the kube-system UID %s", recorded, ks.UID)
	}
	refusedPlan(t, dir, tf, other, string(ks.UID), "namespace "+e.NS, "kubeconfig_path "+e.Cluster.Kubeconfig)
	if err := os.WriteFile(statePath, original, 0o600); err != nil {
		t.Fatal(err)
	}

	// Unreachable: a kubeconfig whose server is a loopback port nothing listens on.
	main := w.Read("main.tf")
	w.Write("main.tf", strings.Replace(main, e.Cluster.Kubeconfig, e.KubeconfigWithClosedPort(), 1))
	out, err := tf("plan", "-no-color")
	if err == nil || !acctest.WordsRegexp("Reading the runtime failed").MatchString(out) || !acctest.WordsRegexp("the state is kept unchanged").MatchString(out) {
		t.Errorf("plan against an unreachable API server: err %v\n%s", err, acctest.Tail(out))
	}
	if after, err := os.ReadFile(statePath); err != nil || !bytes.Equal(after, original) {
		t.Errorf("the failed plan changed the state file (%v)", err)
	}
	w.Write("main.tf", main)

	if out := w.Must("plan", "-no-color"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan against the runtime's own cluster:\n%s", acctest.Tail(out))
	}
}

// editProvisionerStates calls edit with the provisioner state (private state "provisioner_state") of
// each instance of each resource of type typ in a local state file, and writes back what edit left.
func editProvisionerStates(t *testing.T, statePath, typ string, edit func(ps map[string]any)) {
	t.Helper()
	editPrivateStates(t, statePath, typ, func(keys map[string][]byte) {
		var ps map[string]any
		if err := json.Unmarshal(keys["provisioner_state"], &ps); err != nil {
			t.Fatal(err)
		}
		edit(ps)
		var err error
		if keys["provisioner_state"], err = json.Marshal(ps); err != nil {
			t.Fatal(err)
		}
	})
}

// editPrivateStates calls edit with the private state (key -> JSON value) of each instance of each
// resource of type typ in a local state file, and writes back what edit left.
func editPrivateStates(t *testing.T, statePath, typ string, edit func(keys map[string][]byte)) {
	t.Helper()
	raw, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range st["resources"].([]any) {
		res := r.(map[string]any)
		if res["type"] != typ {
			continue
		}
		for _, i := range res["instances"].([]any) {
			inst := i.(map[string]any)
			// private is base64 of the framework's JSON object of keys to base64 values.
			private, err := base64.StdEncoding.DecodeString(inst["private"].(string))
			if err != nil {
				t.Fatal(err)
			}
			var keys map[string][]byte
			if err := json.Unmarshal(private, &keys); err != nil {
				t.Fatal(err)
			}
			edit(keys)
			if private, err = json.Marshal(keys); err != nil {
				t.Fatal(err)
			}
			inst["private"] = base64.StdEncoding.EncodeToString(private)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no %s in %s", typ, statePath)
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitedForTheSharedRead is what the warning of a resource says whose plan check ended while it waited
// for the capacity read another resource of the plan started.
const waitedForTheSharedRead = "for the read of provisioner \"pool\"'s free slots that another resource of this plan started, until the operation's deadline"

// A plan of 30 new runtimes (three waves of Terraform's -parallelism=10) against a PostgreSQL ledger
// that accepts TCP and never answers, where the plan-time capacity check is the only ledger read. The
// whole plan waits for one connection attempt, not one per runtime or per wave: the server sees one
// connection (which also shows that the plan opened no write handle, a second connection), whether
// the DSN's connect_timeout or the plan check's 30 s ends it. Each runtime's plan warns that the
// pool's room was not checked, naming the ledger and what ended the wait; the plan succeeds and
// writes no state. Before, with a connect_timeout above 30 s, each wave connected again and waited
// 30 s again (3 connections, 90 s); and an attempt that the 2 s connect_timeout ended was said to
// have run out of the plan check's 30 s.
func TestAccRuntime_unresponsivePostgresWarnsAPlanOfThirtyNewRuntimesAfterOneAttempt(t *testing.T) {
	acctest.RequireAcc(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://runtime-a.test:9091", "slots": 50}]}}}`
	for _, tc := range []struct {
		connectTimeout string
		want, not      []string // in every warning's detail
	}{
		{"2", []string{"could not read its ledger to check", "each attempt waits up to 2s, the DSN's connect_timeout"}, []string{"within 30s"}},
		{"60", []string{"could not read its ledger within 30s to check", "for the ledger to answer, until the operation's deadline"}, nil},
	} {
		t.Run("connect_timeout="+tc.connectTimeout, func(t *testing.T) {
			dir := ledgerWorkspace(t, set, `
resource "rill_runtime" "rt" {
  count = 30
  slots = 1
}
`)
			srv := silentserver.Start(t)
			// sslmode=disable: one attempt is one connection (prefer may try TLS, then plain text).
			silent := "postgres://rill:Silent-Pa55@" + srv.Addr + "/ledger?sslmode=disable&connect_timeout=" + tc.connectTimeout
			out, err := acctest.WorkspaceIn(t, dir, envnames.LedgerDSN+"="+silent).Run("plan", "-json")
			if err != nil {
				t.Fatalf("plan against a silent server failed (%v):\n%s", err, acctest.Tail(out))
			}
			if n := srv.Accepted(); n != 1 {
				t.Errorf("the silent server saw %d connections for a plan of 30 new runtimes, want one attempt", n)
			}
			warned := map[string]bool{}
			for _, line := range strings.Split(out, "\n") {
				var ev struct {
					Type       string
					Diagnostic struct{ Severity, Summary, Detail, Address string }
				}
				if json.Unmarshal([]byte(line), &ev) != nil || ev.Type != "diagnostic" || ev.Diagnostic.Address == "" {
					continue // not a resource's (the CLI's own: dev_overrides are in effect)
				}
				d := ev.Diagnostic
				if d.Severity != "warning" || d.Summary != "Pool capacity not checked before the create" {
					t.Errorf("%s: unexpected %s %q: %s", d.Address, d.Severity, d.Summary, d.Detail)
					continue
				}
				warned[d.Address] = true
				want := append(tc.want, srv.Addr)
				if strings.Contains(d.Detail, waitedForTheSharedRead) {
					// A resource whose check began just before the one that reads ends its own 30 s
					// first, still waiting for that read: it names the read it waited for.
					want = []string{"within 30s"}
				}
				for _, w := range want {
					if !strings.Contains(d.Detail, w) {
						t.Errorf("%s: the warning lacks %q: %s", d.Address, w, d.Detail)
					}
				}
				for _, w := range append(tc.not, "Silent-Pa55") {
					if strings.Contains(d.Detail, w) {
						t.Errorf("%s: the warning says %q: %s", d.Address, w, d.Detail)
					}
				}
			}
			if len(warned) != 30 {
				t.Errorf("%d of 30 new runtimes were warned that the pool's room was not checked:\n%s", len(warned), acctest.Tail(out))
			}
			if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the plan wrote a state (%v)", err)
			}
		})
	}
}
