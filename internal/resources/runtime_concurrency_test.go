package resources_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Two terraform processes applying to one static pool through one ledger never oversubscribe it: each
// asks for more than half the pool, so exactly the pool's slots get allocated, the losers fail with a
// capacity error, and both states together hold exactly what the ledger holds.
func TestAccRuntime_twoTerraformProcessesShareSQLiteLedger(t *testing.T) {
	requireAcc(t)
	ledger := sqliteLedger(t)
	runTwoProcesses(t, [2]string{ledger, ledger}, nil)
}

// On PostgreSQL the test proves that the two applies overlapped: it holds the ledger's allocation
// lock while both start, and releases it only once both processes (told apart by application_name)
// are waiting for it at the same time. Without the lock the processes never wait, and the test fails.
func TestAccRuntime_twoTerraformProcessesSharePostgresLedger(t *testing.T) {
	requireAcc(t)
	ledger := pgtest.Shared(t)
	var ledgers [2]string
	for i := range ledgers {
		ledgers[i] = withQueryParam(t, ledger, "application_name", fmt.Sprintf("rill-apply-%d", i))
	}
	runTwoProcesses(t, ledgers, func(done <-chan struct{}) (wait func() error) {
		return holdLedgerLockUntilBothWait(t, ledger, done, "rill-apply-0", "rill-apply-1")
	})
}

// allocateLockKey is the PostgreSQL ledger's allocation lock (internal/database's pgAllocateLockKey,
// the ASCII of "rill-alc"). Should it change there, the PostgreSQL test fails saying the processes
// never waited for it.
const allocateLockKey int64 = 0x72696c6c2d616c63

// holdLedgerLockUntilBothWait takes the ledger's allocation lock on a connection of its own; the
// returned wait releases it as soon as the named applications both wait for it, and reports an error
// when done closes (both applies ended) or three minutes pass before that.
func holdLedgerLockUntilBothWait(t *testing.T, dsn string, done <-chan struct{}, apps ...string) func() error {
	t.Helper()
	ctx := context.Background()
	// Two connections: one holds the lock in a transaction; the other watches, outside any transaction
	// (pg_stat_activity is read once per transaction and would never change inside one).
	conn, watch := pgConnect(t, dsn), pgConnect(t, dsn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", allocateLockKey); err != nil {
		t.Fatal(err)
	}
	return func() error {
		defer func() { _ = tx.Rollback(ctx) }() // releases the lock
		deadline := time.After(3 * time.Minute)
		for {
			var waiting []string
			err := watch.QueryRow(ctx, `
				SELECT coalesce(array_agg(DISTINCT a.application_name ORDER BY a.application_name), '{}')
				FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`).Scan(&waiting)
			if err != nil {
				return err
			}
			if all := strings.Join(waiting, ","); all == strings.Join(apps, ",") {
				t.Logf("both applies waited for the ledger's allocation lock at once (%s): they overlapped", all)
				return nil
			}
			select {
			case <-done:
				return fmt.Errorf("both applies ended without ever waiting for the ledger's allocation lock at the same time (last seen waiting: %v): they did not overlap, or Allocate does not take the lock", waiting)
			case <-deadline:
				return fmt.Errorf("after 3 minutes, %v wait for the ledger's allocation lock, not both of %v", waiting, apps)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

func pgConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// withQueryParam returns dsn with one more query parameter.
func withQueryParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

const (
	concurrencyHosts          = 2
	concurrencySlotsPerHost   = 4
	concurrencyRuntimesPerRun = 6 // two runs want 12 one-slot runtimes from a pool of 8 slots
)

// runTwoProcesses runs the two applies, process i with ledgers[i] (one ledger, maybe named apart).
// gate, when given, is started before the applies with a channel closed when both have ended; the
// wait it returns runs alongside them, and its error fails the test.
func runTwoProcesses(t *testing.T, ledgers [2]string, gate func(done <-chan struct{}) (wait func() error)) {
	tfPath := terraformCLI()
	ledger := ledgers[0]
	cliConfig := devOverrideCLIConfig(t)

	var hosts []string
	for i := 0; i < concurrencyHosts; i++ {
		hosts = append(hosts, fmt.Sprintf(`{"host": "http://shared-%d.test:9091", "slots": %d}`, i, concurrencySlotsPerHost))
	}
	set := fmt.Sprintf(`{"shared": {"type": "static", "spec": {"runtimes": [%s]}}}`, strings.Join(hosts, ", "))
	var body strings.Builder
	fmt.Fprintf(&body, "terraform {\n  required_providers {\n    rill = { source = \"rill-provisioner/rill\" }\n  }\n}\n")
	fmt.Fprintf(&body, "provider \"rill\" {\n  ledger_dsn = var.ledger\n  provisioner_set_json = %q\n}\nvariable \"ledger\" {}\n", set)
	for i := 0; i < concurrencyRuntimesPerRun; i++ {
		fmt.Fprintf(&body, "resource \"rill_runtime\" \"rt%d\" {\n  slots = 1\n}\n", i)
	}

	dirs := []string{t.TempDir(), t.TempDir()}
	for i, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "main.tf"), []byte(body.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "terraform.tfvars"), []byte(fmt.Sprintf("ledger = %q\n", ledgers[i])), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	run := func(dir string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tfPath, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	// Both applies at once.
	var wg sync.WaitGroup
	outputs := make([]string, len(dirs))
	errs := make([]error, len(dirs))
	done := make(chan struct{})
	var wait func() error
	if gate != nil {
		wait = gate(done)
	}
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outputs[i], errs[i] = run(d, "apply", "-auto-approve", "-no-color", "-parallelism=6")
		}()
	}
	go func() { wg.Wait(); close(done) }()
	var gateErr error
	if wait != nil {
		gateErr = wait()
	}
	<-done
	t.Cleanup(func() {
		for _, d := range dirs {
			if out, err := run(d, "destroy", "-auto-approve", "-no-color"); err != nil {
				t.Errorf("destroy in %s: %v\n%s", d, err, out)
			}
		}
		allocs, err := ledgerAllocations(t, ledger)
		if err != nil || len(allocs) != 0 {
			t.Errorf("after destroy the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})

	if gateErr != nil {
		t.Errorf("%v\n%s\n%s", gateErr, tail(outputs[0]), tail(outputs[1]))
	}
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if !wordsRegexp("no runtimes found with sufficient available slots").MatchString(outputs[i]) {
				t.Fatalf("apply %d failed without the capacity error:\n%s", i, outputs[i])
			}
		}
	}
	if failed == 0 {
		t.Fatalf("both applies succeeded, which needs %d slots from a pool of %d:\n%s\n%s",
			2*concurrencyRuntimesPerRun, concurrencyHosts*concurrencySlotsPerHost, outputs[0], outputs[1])
	}

	// The ledger holds exactly the pool's slots, no host above its capacity.
	allocs, err := ledgerAllocations(t, ledger)
	if err != nil {
		t.Fatal(err)
	}
	perHost := map[string]int{}
	total := 0
	for _, a := range allocs {
		perHost[a.Host] += a.Slots
		total += a.Slots
	}
	for h, used := range perHost {
		if used > concurrencySlotsPerHost {
			t.Errorf("host %s oversubscribed: %d of %d slots", h, used, concurrencySlotsPerHost)
		}
	}
	if want := concurrencyHosts * concurrencySlotsPerHost; total != want {
		t.Errorf("ledger holds %d slots, want exactly %d (the whole pool)", total, want)
	}

	// Both states together hold exactly the runtimes the ledger holds.
	inState := 0
	for _, d := range dirs {
		out, err := run(d, "state", "list")
		if err != nil {
			t.Fatalf("state list: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(line, "rill_runtime.") {
				inState++
			}
		}
	}
	if inState != len(allocs) {
		t.Errorf("the two states hold %d runtimes, the ledger %d allocations", inState, len(allocs))
	}
	t.Logf("ledger: %d slots allocated across %v; %d of 2 applies hit the capacity error", total, perHost, failed)
}

// devOverrideCLIConfig builds the provider binary once per test binary and returns a CLI config file
// that makes Terraform (or OpenTofu) use it, as a user's `dev_overrides` would.
func devOverrideCLIConfig(t *testing.T) string {
	t.Helper()
	bin, err := providerBinary()
	if err != nil {
		t.Fatalf("building the provider: %v", err)
	}
	cfg := filepath.Join(t.TempDir(), "terraformrc")
	content := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"rill-provisioner/rill\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(bin))
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var buildProvider struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// removeProviderBinary removes the directory providerBinary built into (TestMain calls it at exit).
func removeProviderBinary() {
	if buildProvider.dir != "" {
		_ = os.RemoveAll(buildProvider.dir)
	}
}

// providerBinDirPrefix names the directories providerBinary builds into, in the temp folder.
const providerBinDirPrefix = "rill-provider-bin-"

// sweepStaleProviderBinaries removes the builds of test binaries that could not clean up (killed, or
// timed out: go test's timeout exits without running TestMain's end), once they are older than any
// test run can be.
func sweepStaleProviderBinaries() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), providerBinDirPrefix+"*"))
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && time.Since(info.ModTime()) > 3*time.Hour {
			_ = os.RemoveAll(d)
		}
	}
}

func providerBinary() (string, error) {
	buildProvider.once.Do(func() {
		sweepStaleProviderBinaries()
		dir, err := os.MkdirTemp("", providerBinDirPrefix)
		if err != nil {
			buildProvider.err = err
			return
		}
		buildProvider.dir = dir
		out := filepath.Join(dir, "terraform-provider-rill")
		// The tag adds one provisioner type, "clickhouse-static-fake" (internal/clickhouse/
		// fakeserver_tagged.go): everything else is the production build.
		cmd := exec.Command("go", "build", "-tags", "rill_fake_clickhouse", "-o", out, ".")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildProvider.err = fmt.Errorf("%v: %s", err, b)
			return
		}
		buildProvider.path = out
	})
	return buildProvider.path, buildProvider.err
}
