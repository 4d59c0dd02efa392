package database

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// TestPostgresLeastPrivilege: once the schema is in place, a role that may only read and write the
// ledger's rows (no CREATE on the schema) can open and use it.
func TestPostgresLeastPrivilege(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	admin := mustOpen(t, dsn)
	role := fmt.Sprintf("ledger_user_%d", os.Getpid())
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON allocations TO ` + role,
		`GRANT SELECT ON schema_migrations, ledger_meta TO ` + role,
	} {
		rawExec(t, admin, q)
	}
	t.Cleanup(func() {
		p := admin.(*postgresDB).pool
		_, _ = p.Exec(ctx, `DROP OWNED BY `+role)
		_, _ = p.Exec(ctx, `DROP ROLE `+role)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db := mustOpen(t, u.String())
	if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.DeleteAllocation(ctx, "r1"); err != nil || !ok {
		t.Fatalf("DeleteAllocation = %v, %v", ok, err)
	}
}

// ledgerCall is a ledger operation of a test, by the name its errors give it.
type ledgerCall struct {
	op   string
	db   DB // the handle it goes through
	call func(ctx context.Context) error
}

// lockedLedgerCalls opens a ledger holding one allocation, r1, whose tables another session then
// locks until the test ends (a stuck transaction on another runner). It returns the write handle and
// the calls a plan and a destroy make, through a read-only handle and the write handle.
func lockedLedgerCalls(t *testing.T) (dsn string, ctx context.Context, writer DB, calls []ledgerCall) {
	t.Helper()
	dsn = pgtest.Shared(t)
	ctx = testContext(t)
	writer = mustOpen(t, dsn)
	if _, err := writer.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	reader, err := OpenReadOnly(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	pgtest.LockTables(t, dsn, "allocations", "host_usage")
	return dsn, ctx, writer, []ledgerCall{
		{"list allocations", reader, func(ctx context.Context) error { _, err := reader.ListAllocations(ctx); return err }},
		{"used slots", reader, func(ctx context.Context) error { _, err := reader.UsedSlotsByHost(ctx); return err }},
		{`find allocation "r1"`, writer, func(ctx context.Context) error { _, err := writer.FindAllocation(ctx, "r1"); return err }},
		{`delete allocation "r1"`, writer, func(ctx context.Context) error { _, err := writer.DeleteAllocation(ctx, "r1"); return err }},
	}
}

// A ledger call queued behind a lock that another session holds (another terraform apply on another
// runner, stuck in its transaction) ends at its context's deadline, on the read-only handle a plan
// uses and on the write handle alike, with an error that says it waited for the ledger, how long, and
// why it stopped; and the server stops waiting with it: no statement of ours stays queued for the lock.
func TestPostgresLockedLedgerEndsAtTheDeadline(t *testing.T) {
	dsn, ctx, writer, calls := lockedLedgerCalls(t)
	calls = append(calls, ledgerCall{`allocate "r2"`, writer, func(ctx context.Context) error { _, err := writer.Allocate(ctx, "r2", fixed("h1", 1)); return err }})
	for _, c := range calls {
		t.Run(c.op, func(t *testing.T) {
			opCtx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.call(opCtx) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s has not returned a minute after its 1s deadline", c.op)
			}
			var waited *WaitError
			if !errors.As(err, &waited) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s on a locked ledger: got %v, want a *WaitError wrapping the deadline", c.op, err)
			}
			// The wait is rounded to 100 ms, and a loaded machine may wake the waiter any time after the
			// second: no upper bound, which would flake.
			want := regexp.MustCompile("^" + regexp.QuoteMeta(fmt.Sprintf("ledger %s: %s: waited ", Redact(dsn), c.op)) + `[1-9][0-9]*(\.[0-9])?s` +
				regexp.QuoteMeta(" for the ledger to answer, until the operation's deadline "+
					"(a lock that another session holds, such as another terraform apply, or a server that stopped answering)"))
			if !want.MatchString(err.Error()) {
				t.Errorf("the error\n%s\ndoes not match\n%s", err, want)
			}
		})
	}
	// The server gave up with the client: no backend of the ledger's still waits for the lock.
	admin := mustOpen(t, dsn).(*postgresDB)
	var waiting int
	for range 100 {
		if err := admin.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'terraform-provider-rill' AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%d statements of the ledger's still wait for the lock after their callers gave up", waiting)
}

// Every statement of the provider waits LockWait at most for a lock another session holds, not only
// an allocation's: a plan's reads and a destroy's delete, queued behind a table that a stuck session
// locked (a migration on another runner, a psql session left in LOCK TABLE), give up after LockWait
// with a LockedError saying what they waited for, well before their own context's deadline. Before,
// they waited for the operation's timeout (5 minutes for a read, 10 for a delete): a plan of 15
// runtimes took 600 s to fail.
func TestPostgresReadsAndDeletesGiveUpOnAStuckSessionsLockAfterLockWait(t *testing.T) {
	setLockWait(t, time.Second) // before the handles open: their sessions take it then
	dsn, ctx, _, calls := lockedLedgerCalls(t)
	for _, c := range calls {
		t.Run(c.op, func(t *testing.T) {
			c.db.(*postgresDB).gaveUpAfter.Store(0) // the first of its command to meet the lock (see the next test)
			err := c.call(ctx)                      // the test's context: a minute
			var locked *LockedError
			if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) || ctx.Err() != nil {
				t.Fatalf("%s on a table a stuck session locked: got %v, want a LockedError after LockWait", c.op, err)
			}
			want := regexp.MustCompile("^" + regexp.QuoteMeta(fmt.Sprintf("postgres ledger %s: %s: ledger %s is %v: waited ", Redact(dsn), c.op, Redact(dsn), ErrLocked)) +
				`[1-9][0-9]*(\.[0-9])?s for a row or table lock that another session holds \(.*lock timeout.*\)$`)
			if !want.MatchString(err.Error()) {
				t.Errorf("the error\n%s\ndoes not match\n%s", err, want)
			}
		})
	}
}

// Once a read has given up on a stuck lock after LockWait, the next reads and deletes through the
// same handle wait for it only briefly (stuckLockRecheck), saying that an earlier one gave up and
// after how long; once the lock is let go they get through, and a later stuck lock gets its LockWait
// again. Before, Terraform's reads, started -parallelism at a time, waited LockWait per wave: a
// plan of 200 runtimes behind a stuck lock failed after 5 minutes instead of 15 s.
func TestPostgresReadsAfterOneGaveUpOnAStuckLockRecheckItBriefly(t *testing.T) {
	setLockWait(t, 2*time.Second)
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	db := mustOpen(t, dsn)
	if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	find := func() (time.Duration, *LockedError) {
		start := time.Now()
		_, err := db.FindAllocation(ctx, "r1")
		var locked *LockedError
		if err != nil && !errors.As(err, &locked) {
			t.Fatalf("find on a locked ledger: %v, want a LockedError", err)
		}
		return time.Since(start), locked
	}

	release := pgtest.LockTables(t, dsn, "allocations", "host_usage")
	if took, locked := find(); locked == nil || locked.Earlier != 0 || took < LockWait-100*time.Millisecond {
		t.Fatalf("the first read behind the lock: %v after %s; want a LockedError after LockWait (%s)", locked, took, LockWait)
	}
	for wave := range 5 {
		took, locked := find()
		if locked == nil || took > time.Second || locked.Earlier < LockWait-100*time.Millisecond {
			t.Fatalf("read %d after one gave up: %v after %s; want a LockedError within a second that names the earlier %s", wave+2, locked, took, LockWait)
		}
		if want := "which an earlier read or delete gave up on after 2s"; !strings.Contains(locked.Error(), want) {
			t.Errorf("the error %q does not say %q", locked, want)
		}
	}
	release()
	if _, locked := find(); locked != nil {
		t.Fatalf("a read once the lock was let go: %v", locked)
	}
	pgtest.LockTables(t, dsn, "allocations", "host_usage")
	if took, locked := find(); locked == nil || locked.Earlier != 0 || took < LockWait-100*time.Millisecond {
		t.Errorf("a read behind a new stuck lock, after one got through: %v after %s; want a LockedError after LockWait again", locked, took)
	}
}

// Operations queued behind a stuck lock share one wait: one that waited for a connection of the
// provider's pool (the others busy waiting for the same lock) waits for the lock only what is left of
// LockWait, and its error says how long it waited in all. Before, each waited LockWait more once it
// had a connection, and said so: 10 creates behind a stuck writer's advisory lock took 45 s (three
// waves of four connections), each saying "waited 15s"; reads behind a table lock did the same.
func TestPostgresOperationsQueuedBehindAStuckLockShareOneWait(t *testing.T) {
	t.Run("allocations behind the write lock", func(t *testing.T) {
		ctx, db := stuckLedger(t, pgtest.Shared(t), 2*time.Second)
		checkQueuedShareOneWait(t, db, func(i int) error {
			_, err := db.Allocate(ctx, fmt.Sprintf("q%d", i), fixed("h1", 1))
			return err
		})
	})
	t.Run("reads behind a table lock", func(t *testing.T) {
		setLockWait(t, 2*time.Second)
		_, ctx, db, _ := lockedLedgerCalls(t)
		checkQueuedShareOneWait(t, db, func(int) error { _, err := db.FindAllocation(ctx, "r1"); return err })
	})
}

// checkQueuedShareOneWait runs four times as many calls at once as db's pool has connections, and
// wants each to fail with a LockedError saying how long it took, the last after about LockWait.
func checkQueuedShareOneWait(t *testing.T, db DB, call func(i int) error) {
	t.Helper()
	n := 4 * int(db.(*postgresDB).pool.Config().MaxConns) // four waves before
	type result struct {
		took time.Duration
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			start := time.Now()
			err := call(i)
			results <- result{time.Since(start), err}
		}()
	}
	var longest time.Duration
	for range n {
		r := <-results
		var locked *LockedError
		if !errors.As(r.err, &locked) {
			t.Fatalf("a queued call: %v, want a LockedError", r.err)
		}
		if d := r.took - locked.Waited; d > time.Second || d < -time.Second {
			t.Errorf("a call took %s and says it waited %s: %v", r.took, locked.Waited, r.err)
		}
		longest = max(longest, r.took)
	}
	if longest > 3*LockWait {
		t.Errorf("the last of %d queued calls returned after %s; want about LockWait (%s), not a LockWait per wave", n, longest, LockWait)
	}
}

// The provider's sessions keep the server's (or the role's, or the DSN's) lock_timeout: LockWait is
// set per transaction (SET LOCAL), never for the session nor as a startup parameter, which PgBouncer
// refuses ("unsupported startup parameter: lock_timeout", in every pool mode) and which, as a
// session setting behind a transaction-pooling PgBouncer, would reach other clients' transactions.
// 47c0026 sent it at startup, found by a review that put PgBouncer 1.18 in front of the ledger.
func TestPostgresSessionsKeepTheServersLockTimeout(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	for d, want := range map[string]string{dsn: "0", dsn + "&options=-c%20lock_timeout%3D7s": "7s"} {
		db := mustOpen(t, d).(*postgresDB)
		if _, err := db.ListAllocations(ctx); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.pool.QueryRow(ctx, `SHOW lock_timeout`).Scan(&got); err != nil || got != want {
			t.Errorf("%s: a session of the pool has lock_timeout %q (%v), want %q", Redact(d), got, err, want)
		}
	}
}
