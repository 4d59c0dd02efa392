package database

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// TestPostgresPrivilegesOfAPlanAndAnApply holds pgPrivilegesHint to the grants that work. Once the
// schema is in place: a role that may only SELECT the three tables the hint names reads everything a
// plan reads (through a read-only handle, and through a write handle, which migrates nothing); its
// writes are refused with the hint, and with INSERT, UPDATE and DELETE on allocations granted too
// (no CREATE on the schema, nothing on host_usage) it allocates and frees. On a new database, such a
// role cannot create the schema, and the refusal says that too.
func TestPostgresPrivilegesOfAPlanAndAnApply(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	admin := mustOpen(t, dsn)
	if _, err := admin.Allocate(ctx, "r0", fixed("h1", 2)); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("ledger_user_%d", os.Getpid())
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT SELECT ON allocations, ledger_meta, schema_migrations TO ` + role,
	} {
		rawExec(t, admin, q)
	}
	t.Cleanup(func() {
		p := admin.(*postgresDB).pool
		_, _ = p.Exec(ctx, `DROP OWNED BY `+role)
		_, _ = p.Exec(ctx, `DROP ROLE `+role)
	})
	asRole := func(dsn string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		return u.String()
	}
	refusedWithHint := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), pgPrivilegesHint) {
			t.Errorf("%s as a role without the privilege: %v, want the refusal and the hint", what, err)
		}
	}

	id, err := admin.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []DB{mustOpenReadOnly(t, asRole(dsn)), mustOpen(t, asRole(dsn))} {
		if got, err := db.Identity(ctx); err != nil || got.ID != id.ID {
			t.Errorf("%s: identity %v, %v; want %v", db.Driver(), got, err, id)
		}
		if list, err := db.ListAllocations(ctx); err != nil || len(list) != 1 {
			t.Errorf("list: %v, %v", list, err)
		}
		if used, err := db.UsedSlotsByHost(ctx); err != nil || used["h1"] != 2 {
			t.Errorf("used slots: %v, %v", used, err)
		}
		if a, err := db.FindAllocation(ctx, "r0"); err != nil || a.Slots != 2 {
			t.Errorf("find: %v, %v", a, err)
		}
	}
	selectOnly := mustOpen(t, asRole(dsn))
	_, err = selectOnly.Allocate(ctx, "r1", fixed("h1", 1))
	refusedWithHint("allocate", err)
	_, err = selectOnly.DeleteAllocation(ctx, "r0")
	refusedWithHint("delete", err)

	rawExec(t, admin, `GRANT INSERT, UPDATE, DELETE ON allocations TO `+role)
	db := mustOpen(t, asRole(dsn))
	if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.DeleteAllocation(ctx, "r1"); err != nil || !ok {
		t.Fatalf("DeleteAllocation = %v, %v", ok, err)
	}

	// A database no provider has used: the role may connect, not create the ledger's tables.
	fresh := asRole(pgtest.Shared(t))
	_, err = Open(ctx, fresh, nil)
	refusedWithHint("the first open of a new database", err)
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

// A runner that vanishes while it holds the ledger's write lock (a preempted VM, a SIGSTOPped
// process: no FIN reaches the server), here an Allocate whose place does not return, leaves its
// transaction idle on the server. The server ends that session after PostgresIdleTimeout, so the lock
// is free again: another Allocate succeeds, and the vanished writer's allocation was never written
// (its own Allocate fails when it wakes). Before, the session held the lock until TCP keepalive
// noticed (about 2 hours): every Allocate failed with a LockedError after LockWait.
func TestPostgresAVanishedWritersLockIsFreedAfterTheIdleTimeout(t *testing.T) {
	setLockWait(t, 500*time.Millisecond) // an idle timeout of 2 s
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	frozen, other := mustOpen(t, dsn), mustOpen(t, dsn)
	place := func(id string) PlaceFunc {
		return func(*Allocation, map[string]int) (*Allocation, error) {
			return &Allocation{ResourceID: id, Host: "http://a", Slots: 1}, nil
		}
	}
	held, wake, frozenErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var woken sync.Once
	wakeUp := func() { woken.Do(func() { close(wake) }) }
	t.Cleanup(wakeUp) // before the handles close (cleanups run last first): Close waits for its connection
	go func() {
		_, err := frozen.Allocate(ctx, "frozen", func(current *Allocation, used map[string]int) (*Allocation, error) {
			close(held) // the advisory lock is held: place runs inside the transaction
			<-wake
			return place("frozen")(current, used)
		})
		frozenErr <- err
	}()
	<-held
	start := time.Now()
	tries := 0
	for {
		tries++
		_, err := other.Allocate(ctx, "other", place("other"))
		if err == nil {
			break
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Allocate behind a vanished writer: %v; want a LockedError until the server frees the lock", err)
		}
		if time.Since(start) > PostgresIdleTimeout()+10*time.Second {
			t.Fatalf("Allocate behind a vanished writer still fails %s after it vanished (idle timeout %s): %v", time.Since(start), PostgresIdleTimeout(), err)
		}
	}
	t.Logf("Allocate succeeded %s after the writer vanished, at try %d", time.Since(start).Round(100*time.Millisecond), tries)
	if tries == 1 {
		t.Fatalf("the first Allocate got the lock: the vanished writer did not hold it")
	}
	if took := time.Since(start); took < PostgresIdleTimeout()-LockWait {
		t.Errorf("the lock was free %s after the writer vanished, before the idle timeout %s", took, PostgresIdleTimeout())
	}
	wakeUp()
	err := <-frozenErr
	if err == nil {
		t.Fatalf("the vanished writer's Allocate succeeded after the server ended its session")
	}
	t.Logf("the vanished writer's error: %v", err)
	if want := "nothing was written: re-run"; !strings.Contains(err.Error(), want) {
		t.Errorf("the vanished writer's error lacks %q: %v", want, err)
	}
	if a, err := other.FindAllocation(ctx, "frozen"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the vanished writer's allocation = %+v, %v; want none", a, err)
	}
}
