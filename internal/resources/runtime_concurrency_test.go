package resources_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Two terraform processes applying to one static pool through one ledger never oversubscribe it: each
// asks for more than half the pool, so exactly the pool's slots get allocated, the losers fail with a
// capacity error, and both states together hold exactly what the ledger holds.
//
// The test proves that the two applies overlapped: it holds the ledger file's write lock (BEGIN
// IMMEDIATE, as another process's writer) while both start, and releases it only once both provider
// processes have logged that they wait for it. Nothing else writes the ledger before the release (the
// test creates and migrates it up front), so each process's first wait is for the test's lock, in the
// write its apply starts with. Without the lock the processes never wait, and the test fails.
func TestAccRuntime_twoTerraformProcessesShareSQLiteLedger(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	ledgertest.Open(t, ledger) // created and migrated now: the applies' first writes are allocations
	runTwoProcesses(t, [2]string{ledger, ledger}, func(done <-chan struct{}, logs [2]string) (wait func() error) {
		return holdSQLiteLockUntilBothWait(t, strings.TrimPrefix(ledger, "sqlite://"), done, logs)
	})
}

// On PostgreSQL the test proves that the two applies overlapped: it holds the ledger's allocation
// lock while both start, and releases it only once both processes (told apart by application_name)
// are waiting for it at the same time. Without the lock the processes never wait, and the test fails.
func TestAccRuntime_twoTerraformProcessesSharePostgresLedger(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := pgtest.Shared(t)
	var ledgers [2]string
	for i := range ledgers {
		ledgers[i] = withQueryParam(t, ledger, "application_name", applyName(i))
	}
	runTwoProcesses(t, ledgers, func(done <-chan struct{}, _ [2]string) (wait func() error) {
		return holdLedgerLockUntilBothWait(t, ledger, done)
	})
}

// applyName tells the two applies apart in what the tests observe of them.
func applyName(i int) string { return fmt.Sprintf("rill-apply-%d", i) }

// allocateLockKey is the PostgreSQL ledger's allocation lock (internal/database's pgAllocateLockKey,
// the ASCII of "rill-alc"). Should it change there, the PostgreSQL test fails saying the processes
// never waited for it.
const allocateLockKey int64 = 0x72696c6c2d616c63

// holdLedgerLockUntilBothWait takes the ledger's allocation lock on a connection of its own; the
// returned wait releases it as soon as both applies (by application_name) wait for it.
func holdLedgerLockUntilBothWait(t *testing.T, dsn string, done <-chan struct{}) func() error {
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
		return untilBothWait(t, done, "the ledger's allocation lock", func() ([]string, error) {
			var waiting []string
			err := watch.QueryRow(ctx, `
				SELECT coalesce(array_agg(DISTINCT a.application_name ORDER BY a.application_name), '{}')
				FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`).Scan(&waiting)
			return waiting, err
		})
	}
}

// sqliteBusyLogLine is what the SQLite ledger logs (at debug level, internal/database's retryBusy)
// each time it found the file's write lock taken. Should it change there, the SQLite test fails
// saying the processes never waited for the lock.
const sqliteBusyLogLine = "ledger busy, retrying"

// holdSQLiteLockUntilBothWait takes the SQLite ledger file's write lock on a connection of its own;
// the returned wait releases it as soon as both applies' provider logs (logs[i] is apply i's) say they
// wait for it. SQLite keeps no list of waiters, so the waiters' own word is the evidence.
func holdSQLiteLockUntilBothWait(t *testing.T, path string, done <-chan struct{}, logs [2]string) func() error {
	t.Helper()
	tx := ledgertest.HoldSQLiteWriteLock(t, path)
	return func() error {
		defer func() { _ = tx.Rollback() }() // releases the lock
		return untilBothWait(t, done, "the ledger file's write lock", func() ([]string, error) {
			var waiting []string
			for i, log := range logs {
				b, err := os.ReadFile(log)
				if err != nil && !os.IsNotExist(err) { // the CLI creates its log when it starts
					return nil, err
				}
				if bytes.Contains(b, []byte(sqliteBusyLogLine)) {
					waiting = append(waiting, applyName(i))
				}
			}
			return waiting, nil
		})
	}
}

// untilBothWait polls waiting (the names of the applies that wait for what) until it names both
// applies at once, and fails when done closes (both applies ended) or three minutes pass before that.
func untilBothWait(t *testing.T, done <-chan struct{}, what string, waiting func() ([]string, error)) error {
	t.Helper()
	both := []string{applyName(0), applyName(1)}
	deadline := time.After(3 * time.Minute)
	for {
		w, err := waiting()
		if err != nil {
			return err
		}
		slices.Sort(w)
		if slices.Equal(w, both) {
			t.Logf("both applies waited for %s at once (%s): they overlapped", what, strings.Join(w, ","))
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("both applies ended without ever waiting for %s at the same time (last seen waiting: %v): they did not overlap, or Allocate does not take the lock", what, w)
		case <-deadline:
			return fmt.Errorf("after 3 minutes, %v wait for %s, not both of %v", w, what, both)
		case <-time.After(20 * time.Millisecond):
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

// runTwoProcesses runs the two applies, process i with ledgers[i] (one ledger, maybe named apart) and
// its provider's debug log in logs[i]. gate is started before the applies with a channel closed when
// both have ended and the logs' paths; the wait it returns runs alongside them, and its error fails
// the test.
func runTwoProcesses(t *testing.T, ledgers [2]string, gate func(done <-chan struct{}, logs [2]string) (wait func() error)) {
	ledger := ledgers[0]
	var hosts []string
	for i := 0; i < concurrencyHosts; i++ {
		hosts = append(hosts, fmt.Sprintf(`{"host": "http://shared-%d.test:9091", "slots": %d}`, i, concurrencySlotsPerHost))
	}
	set := fmt.Sprintf(`{"shared": {"type": "static", "spec": {"runtimes": [%s]}}}`, strings.Join(hosts, ", "))
	body := acctest.CLIHeader("var.ledger", set) + "variable \"ledger\" {}\n"
	for i := 0; i < concurrencyRuntimesPerRun; i++ {
		body += fmt.Sprintf("resource \"rill_runtime\" \"rt%d\" {\n  slots = 1\n}\n", i)
	}
	var logs [2]string
	var dirs []*acctest.Workspace
	for i := range logs {
		dir := t.TempDir()
		logs[i] = filepath.Join(dir, "provider.log")
		dirs = append(dirs, acctest.WorkspaceIn(t, dir, "TF_LOG_PROVIDER=debug", "TF_LOG_PATH="+logs[i]))
	}
	for i, w := range dirs {
		w.Write("main.tf", body)
		w.Write("terraform.tfvars", fmt.Sprintf("ledger = %q\n", ledgers[i]))
	}

	// Both applies at once.
	var wg sync.WaitGroup
	outputs := make([]string, len(dirs))
	errs := make([]error, len(dirs))
	done := make(chan struct{})
	wait := gate(done, logs)
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outputs[i], errs[i] = d.Run("apply", "-auto-approve", "-parallelism=6")
		}()
	}
	go func() { wg.Wait(); close(done) }()
	gateErr := wait()
	<-done
	t.Cleanup(func() {
		for _, d := range dirs {
			if out, err := d.Run("destroy", "-auto-approve"); err != nil {
				t.Errorf("destroy in %s: %v\n%s", d.Dir, err, out)
			}
		}
		allocs, err := acctest.LedgerAllocations(ledger)
		if err != nil || len(allocs) != 0 {
			t.Errorf("after destroy the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})

	if gateErr != nil {
		t.Errorf("%v\n%s\n%s", gateErr, acctest.Tail(outputs[0]), acctest.Tail(outputs[1]))
	}
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if !acctest.WordsRegexp("no runtimes found with sufficient available slots").MatchString(outputs[i]) {
				t.Fatalf("apply %d failed without the capacity error:\n%s", i, outputs[i])
			}
		}
	}
	if failed == 0 {
		t.Fatalf("both applies succeeded, which needs %d slots from a pool of %d:\n%s\n%s",
			2*concurrencyRuntimesPerRun, concurrencyHosts*concurrencySlotsPerHost, outputs[0], outputs[1])
	}

	// The ledger holds exactly the pool's slots, no host above its capacity.
	allocs, err := acctest.LedgerAllocations(ledger)
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
		out, err := d.Run("state", "list")
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
