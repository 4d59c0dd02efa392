package database

import (
	"context"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// troubleshootingGuide is where users read the query that finds who holds a PostgreSQL ledger's
// write lock.
const troubleshootingGuide = "../../docs-templates/guides/troubleshooting.md.tmpl"

// The troubleshooting guide's query for the session that holds a PostgreSQL ledger's write lock
// lists that session alone, and the guide says to end what it lists. It matched every granted
// advisory lock on the server, and so listed the session of Terraform's `pg` state backend (an
// advisory lock too, on the same server as the GitOps guide suggests) of another pipeline still
// running: ending it releases that pipeline's state lock (found by a walkthrough of the guides).
// Here: the holder of the ledger's lock, a session holding another advisory key in the ledger's
// database (a state lock), a session holding the ledger's key in another database (another ledger's
// writer), and an allocation waiting for the lock.
func TestTroubleshootingQueryListsOnlyTheHolderOfTheLedgersWriteLock(t *testing.T) {
	raw, err := os.ReadFile(troubleshootingGuide)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(SELECT [^`]*locktype = 'advisory'[^`]*)`").FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s has no query on advisory locks", troubleshootingGuide)
	}
	query := string(m[1])
	ctx := testContext(t)
	dsn, otherLedger := pgtest.Shared(t), pgtest.Shared(t)
	db := mustOpen(t, dsn)
	holder := holdAdvisoryLock(ctx, t, dsn, pgAllocateLockKey)
	holdAdvisoryLock(ctx, t, dsn, 0x5465727261666f72) // another key: a state backend's lock
	holdAdvisoryLock(ctx, t, otherLedger, pgAllocateLockKey)
	waiting, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := db.Allocate(waiting, "r1", fixed("h1", 1))
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err == nil {
			t.Error("the allocation went through while another session held the ledger's write lock")
		}
	}()
	reader := mustConnectPG(ctx, t, dsn)
	for n := 0; n == 0; time.Sleep(100 * time.Millisecond) { // until the allocation waits: the query must leave it out
		if err := reader.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n); err != nil {
			t.Fatalf("waiting for the allocation to wait for the lock: %v", err)
		}
	}
	rows, err := reader.Query(ctx, query)
	if err != nil {
		t.Fatalf("the guide's query fails: %v\n%s", err, query)
	}
	pids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int32, error) {
		vals, err := r.Values()
		if err != nil {
			return 0, err
		}
		pid, _ := vals[0].(int32)
		return pid, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int32{holder}) {
		t.Errorf("the guide's query lists sessions %v, want only %d, the holder of the ledger's write lock:\n%s", pids, holder, query)
	}
}

// holdAdvisoryLock holds an advisory lock in a transaction of a connection of its own, until the test
// ends, and returns that session's pid.
func holdAdvisoryLock(ctx context.Context, t *testing.T, dsn string, key int64) int32 {
	t.Helper()
	conn := mustConnectPG(ctx, t, dsn)
	var pid int32
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_xact_lock($1)) AS locked`, key).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

func mustConnectPG(ctx context.Context, t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
