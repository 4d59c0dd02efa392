package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// A ledger gets its identity once, when it is created; every handle, read-only ones included, sees
// the same one, and another ledger has another.
func TestIdentityIsCreatedOnceAndSharedByEveryHandle(t *testing.T) {
	const password = "Identity-Pa55"
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		if u, err := url.Parse(dsn); err == nil && u.Scheme != "sqlite" {
			// A password (the test cluster trusts any), so that the location, which the provider
			// keeps in private state, must be the DSN without it.
			u.User = url.UserPassword(u.User.Username(), password)
			dsn = u.String()
		}
		a := mustOpen(t, dsn)
		id, err := a.Identity(ctx)
		if err != nil || !uuidRE.MatchString(id.ID) {
			t.Fatalf("Identity = %+v, %v; want a random UUID", id, err)
		}
		if id.Location != Redact(dsn) || strings.Contains(id.Location, password) {
			t.Errorf("Location = %q, want the redacted DSN %q", id.Location, Redact(dsn))
		}
		b := mustOpen(t, dsn)
		ro := mustOpenReadOnly(t, dsn)
		for name, db := range map[string]DB{"second handle": b, "read-only handle": ro} {
			if got, err := db.Identity(ctx); err != nil || got.ID != id.ID {
				t.Errorf("%s: Identity = %+v, %v; want %s", name, got, err, id.ID)
			}
		}
		other := mustOpen(t, backendOf(t, a.Driver()).newDSN(t))
		if got, err := other.Identity(ctx); err != nil || got.ID == id.ID || !uuidRE.MatchString(got.ID) {
			t.Errorf("another ledger: Identity = %+v, %v; want another UUID than %s", got, err, id.ID)
		}
	})
}

// OpenReadOnly of a ledger that does not exist creates nothing: no directory, file, table or row.
// The handle reads as an empty ledger, says the ledger does not exist, and refuses writes.
func TestOpenReadOnlyOfAMissingLedgerCreatesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		if strings.HasPrefix(dsn, "sqlite://") {
			dsn = "sqlite://" + filepath.Join(t.TempDir(), "no", "such", "dir", "ledger.db")
		}
		db := mustOpenReadOnly(t, dsn)
		id, err := db.Identity(ctx)
		if !errors.Is(err, ErrNoLedger) || id.ID != "" || id.Location != Redact(dsn) || !strings.Contains(err.Error(), Redact(dsn)) {
			t.Fatalf("Identity of a missing ledger = %+v, %v; want ErrNoLedger naming %s", id, err, Redact(dsn))
		}
		if _, err := db.FindAllocation(ctx, "r1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("FindAllocation = %v, want ErrNotFound", err)
		}
		if list, err := db.ListAllocations(ctx); err != nil || len(list) != 0 {
			t.Errorf("ListAllocations = %v, %v", list, err)
		}
		if used, err := db.UsedSlotsByHost(ctx); err != nil || len(used) != 0 {
			t.Errorf("UsedSlotsByHost = %v, %v", used, err)
		}
		if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Allocate = %v, want ErrReadOnly", err)
		}
		if _, err := db.DeleteAllocation(ctx, "r1"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("DeleteAllocation = %v, want ErrReadOnly", err)
		}
		if path, ok := strings.CutPrefix(dsn, "sqlite://"); ok {
			for p := path; p != filepath.Dir(filepath.Dir(filepath.Dir(path))); p = filepath.Dir(p) {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after a read-only open: %v", p, err)
				}
			}
			return
		}
		if tables := pgtest.Tables(t, dsn); len(tables) != 0 {
			t.Errorf("tables after a read-only open: %v", tables)
		}
	})
}

// An empty SQLite file (as an earlier provider's `terraform plan` left behind) is no ledger either,
// and stays untouched.
func TestOpenReadOnlyOfAnEmptySQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db := mustOpenReadOnly(t, "sqlite://"+path)
	if _, err := db.Identity(testContext(t)); !errors.Is(err, ErrNoLedger) {
		t.Fatalf("Identity of an empty file = %v, want ErrNoLedger", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Fatalf("the empty file changed: %v, %v", st, err)
	}
}

// identityMigration is the version of the migration that creates ledger_meta and the identity.
const identityMigration = 3

// A ledger from before identities (schema version 2) is read as it is by a read-only handle, without
// an identity and without being migrated; the first write Open migrates it and gives it one.
func TestALedgerFromBeforeIdentitiesGetsOneOnItsFirstWriteOpen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		old := mustOpen(t, dsn)
		if _, err := old.Allocate(ctx, "r1", fixed("h1", 2)); err != nil {
			t.Fatal(err)
		}
		// Back to the schema before identities.
		rawExec(t, old, `DROP TABLE ledger_meta`)
		rawExec(t, old, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version >= %d`, identityMigration))

		ro := mustOpenReadOnly(t, dsn)
		if id, err := ro.Identity(ctx); err != nil || id.ID != "" {
			t.Fatalf("read-only Identity of a ledger from before identities = %+v, %v; want none, no error", id, err)
		}
		if a, err := ro.FindAllocation(ctx, "r1"); err != nil || a.Host != "h1" {
			t.Fatalf("read-only FindAllocation on a ledger from before identities = %+v, %v", a, err)
		}
		if got := schemaVersions(t, old); len(got) != identityMigration-1 {
			t.Fatalf("the read-only open migrated the ledger: schema_migrations = %v", got)
		}

		rw := mustOpen(t, dsn)
		id, err := rw.Identity(ctx)
		if err != nil || !uuidRE.MatchString(id.ID) {
			t.Fatalf("Identity after the write open = %+v, %v", id, err)
		}
		if got, err := mustOpenReadOnly(t, dsn).Identity(ctx); err != nil || got.ID != id.ID {
			t.Fatalf("a later read-only handle sees %+v, %v; want %s", got, err, id.ID)
		}
	})
}

// A writer that holds the ledger's write lock and commits nothing (a stuck process) makes Allocate
// give up after LockWait, or when its context ends, whichever is first, with an error that says the
// ledger is locked by another writer. Nothing is allocated.
func TestAllocateGivesUpOnAStuckWriterAndSaysSo(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		defaultWait := LockWait
		ctx, db := stuckLedger(t, dsn, time.Second)
		_, err := db.Allocate(ctx, "r1", fixed("h1", 1))
		checkLocked(t, err, db, nil)
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			t.Fatalf("Allocate gave up at its context's deadline, not after LockWait: %v", err)
		}

		setLockWait(t, defaultWait)
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err = db.Allocate(short, "r1", fixed("h1", 1))
		checkLocked(t, err, db, context.DeadlineExceeded)
		// The deadline is said once: SQLite's error after a busy wait the deadline ended may be the
		// context's error itself (it read "(context deadline exceeded\ncontext deadline exceeded)").
		if n := strings.Count(err.Error(), context.DeadlineExceeded.Error()); n != 1 {
			t.Errorf("the error says %q %d times: %v", context.DeadlineExceeded, n, err)
		}
	})
}

// A writer that holds the SQLite ledger's write lock but commits every 200 ms (a busy but healthy
// ledger: another apply placing runtimes) is waited for past LockWait, which bounds a wait without
// progress, not the wait: Allocate succeeds once the writer stops, three LockWaits later.
func TestSQLiteAllocateWaitsForABusyButHealthyWriter(t *testing.T) {
	dsn := backendOf(t, DriverSQLite).newDSN(t)
	setLockWait(t, time.Second)
	ctx := testContext(t)
	db := mustOpen(t, dsn)
	writer := mustOpen(t, dsn).(*sqliteDB)
	if _, err := writer.db.ExecContext(ctx, `CREATE TABLE busy (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	// The writer gives the lock up for an instant at each commit, and Allocate may take it then:
	// that proves nothing about the wait, so the story is told again (until Allocate has waited
	// past LockWait, three times at most).
	for attempt := 1; ; attempt++ {
		done := make(chan error, 1)
		tx, until := beginWrite(t, writer), time.Now().Add(3*LockWait) // the lock is held before Allocate starts
		go func() { done <- commitEvery(ctx, writer, tx, 200*time.Millisecond, until) }()
		start := time.Now()
		_, err := db.Allocate(ctx, fmt.Sprintf("r%d", attempt), fixed("h1", 1))
		took := time.Since(start)
		if werr := <-done; werr != nil {
			t.Fatalf("the busy writer: %v", werr)
		}
		if err != nil {
			t.Fatalf("Allocate while another writer committed every 200 ms for %s (LockWait %s) = %v; want it to wait and succeed", 3*LockWait, LockWait, err)
		}
		if took > LockWait {
			return
		}
		if attempt == 3 {
			t.Fatalf("Allocate took the lock between two of the writer's commits, before LockWait, %d times: the wait past LockWait was never exercised", attempt)
		}
	}
}

// An operation whose context has no deadline waits for a busy but healthy writer at most
// sqliteNoDeadlineCap, not for as long as that writer keeps committing (LockWait ends only a wait in
// which nobody commits): it then gives up with a LockedError, which names no deadline, since there
// was none. The writer here holds the lock for good while the write-ahead log keeps changing, as
// another apply's commits change it (walMark), so that Allocate never gets the lock between two
// commits and the wait is the cap's to end, whatever the machine's speed.
func TestSQLiteWriteWithoutADeadlineGivesUpOnABusyWriterAtTheCap(t *testing.T) {
	dsn := backendOf(t, DriverSQLite).newDSN(t)
	db := mustOpen(t, dsn).(*sqliteDB)
	holdWriteLock(t, mustOpen(t, dsn))
	setLockWait(t, time.Second)
	saved := sqliteNoDeadlineCap
	sqliteNoDeadlineCap = 3 * time.Second
	t.Cleanup(func() { sqliteNoDeadlineCap = saved })

	// The writer's commits: the log changes every 100 ms until Allocate returns, or 300 times at
	// most, after which a wait the cap did not end is ended by LockWait.
	wal := db.name + "-wal"
	stop, ranOut := make(chan struct{}), make(chan struct{})
	go func() {
		base := time.Now()
		for i := 1; i <= 300; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			at := base.Add(time.Duration(i) * time.Millisecond)
			if err := os.Chtimes(wal, at, at); err != nil {
				t.Errorf("the busy writer: %v", err)
				return
			}
		}
		close(ranOut)
	}()
	ctx, cancel := context.WithCancel(context.Background()) // no deadline
	defer cancel()
	_, err := db.Allocate(ctx, "r1", fixed("h1", 1))
	close(stop)
	select {
	case <-ranOut:
		t.Fatalf("Allocate without a deadline waited for as long as the busy writer wrote (%v): sqliteNoDeadlineCap (%s) did not end the wait", err, sqliteNoDeadlineCap)
	default:
	}
	checkLocked(t, err, db, nil)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the error names a deadline the operation did not have: %v", err)
	}
	// The cap, not LockWait, ended it: retryBusy gives up at the cap when its next attempt would come
	// after it, at most one backoff (200 ms) early; LockWait would have ended it after 1 s. (A lower
	// bound the code guarantees: a slow machine only makes the wait longer.)
	if le := (*LockedError)(nil); errors.As(err, &le) && le.Waited < sqliteNoDeadlineCap-200*time.Millisecond {
		t.Errorf("Allocate gave up after %s, before sqliteNoDeadlineCap (%s): the busy writer's commits did not keep it past LockWait (%s)", le.Waited, sqliteNoDeadlineCap, LockWait)
	}
}

// beginWrite starts a write transaction of db outside this process's writer queue, holding the
// ledger's write lock (BEGIN IMMEDIATE).
func beginWrite(t *testing.T, db *sqliteDB) *sql.Tx {
	t.Helper()
	tx, err := db.db.BeginTx(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// commitEvery writes a row in tx and commits it every period, starting the next transaction at once,
// until the time is past until; then it commits and returns.
func commitEvery(ctx context.Context, db *sqliteDB, tx *sql.Tx, period time.Duration, until time.Time) error {
	for n := 0; ; n++ {
		time.Sleep(period)
		if _, err := tx.ExecContext(ctx, `INSERT INTO busy (n) VALUES (?)`, n); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil || time.Now().After(until) {
			return err
		}
		var err error
		if tx, err = db.db.BeginTx(ctx, nil); err != nil {
			return err
		}
	}
}

// Once an operation has given up on a stuck lock after LockWait, the next ones of the process try it
// only briefly (PostgreSQL reads and deletes: stuckLockRecheck; SQLite writes: one attempt of its
// busy handler), saying that an earlier one gave up and after how long; once the lock is let go they
// get through, and a later stuck lock gets its LockWait again. Before, Terraform's operations,
// started -parallelism at a time, waited LockWait per wave: a plan of 50 runtimes behind a stuck
// PostgreSQL lock failed after 90 s instead of 17, a destroy of 20 behind a stuck SQLite writer after
// 33 s instead of 17 (each wave of its own).
func TestOperationsAfterOneGaveUpOnAStuckLockTryItBriefly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		setLockWait(t, 2*time.Second)
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
			t.Fatal(err)
		}
		// What gets stuck: a plan's reads behind a table lock (PostgreSQL: reads wait for no writer);
		// SQLite's writes behind a writer holding the file's lock.
		stick, call := func() (release func()) { return pgtest.LockTables(t, dsn, "allocations", "host_usage") },
			func(i int) error { _, err := db.FindAllocation(ctx, "r1"); return err }
		if _, ok := db.(*sqliteDB); ok {
			stick = func() func() { return holdWriteLock(t, mustOpen(t, dsn)) }
			call = func(i int) error { _, err := db.Allocate(ctx, fmt.Sprintf("q%d", i), fixed("h1", 1)); return err }
		}
		calls := 0
		try := func() (time.Duration, *LockedError) {
			calls++
			start := time.Now()
			err := call(calls)
			var locked *LockedError
			if err != nil && !errors.As(err, &locked) {
				t.Fatalf("call %d on a locked ledger: %v, want a LockedError", calls, err)
			}
			return time.Since(start), locked
		}

		release := stick()
		if took, locked := try(); locked == nil || locked.Earlier != 0 || took < LockWait-100*time.Millisecond {
			t.Fatalf("the first call behind the lock: %v after %s; want a LockedError after LockWait (%s)", locked, took, LockWait)
		}
		for range 5 {
			took, locked := try()
			if locked == nil || took > time.Second || locked.Earlier < LockWait-100*time.Millisecond {
				t.Fatalf("call %d after one gave up: %v after %s; want a LockedError within a second that names the earlier %s", calls, locked, took, LockWait)
			}
			if want := regexp.MustCompile(`, which an earlier operation gave up on after [2-9](\.[0-9])?s \(`); !want.MatchString(locked.Error()) {
				t.Errorf("the error %q does not match %q", locked, want)
			}
		}
		release()
		if _, locked := try(); locked != nil {
			t.Fatalf("a call once the lock was let go: %v", locked)
		}
		stick()
		if took, locked := try(); locked == nil || locked.Earlier != 0 || took < LockWait-100*time.Millisecond {
			t.Errorf("a call behind a new stuck lock, after one got through: %v after %s; want a LockedError after LockWait again", locked, took)
		}
	})
}

// Operations queued behind a stuck lock share one wait: one that waited in the provider's own queue
// (PostgreSQL: for a connection of its pool, the others busy waiting for the same lock; SQLite: its
// in-process writer queue, the write ahead waiting for the file's lock) waits for the lock only what
// is left of LockWait, and its error says how long it waited in all. Before, each waited LockWait more
// once it reached the lock, and said so: 10 creates behind a stuck writer took 45 s on PostgreSQL
// (three waves of four connections) and 150 s on SQLite (one after the other), each saying "waited
// 15s"; PostgreSQL's reads behind a table lock did the same.
func TestOperationsQueuedBehindAStuckLockShareOneWait(t *testing.T) {
	t.Run("allocations behind the write lock", func(t *testing.T) {
		forEachBackend(t, func(t *testing.T, dsn string) {
			ctx, db := stuckLedger(t, dsn, 2*time.Second)
			checkQueuedShareOneWait(t, db, func(i int) error {
				_, err := db.Allocate(ctx, fmt.Sprintf("q%d", i), fixed("h1", 1))
				return err
			})
		})
	})
	t.Run("postgres reads behind a table lock", func(t *testing.T) {
		setLockWait(t, 2*time.Second)
		_, ctx, db, _ := lockedLedgerCalls(t)
		checkQueuedShareOneWait(t, db, func(int) error { _, err := db.FindAllocation(ctx, "r1"); return err })
	})
}

// checkQueuedShareOneWait runs at once four times as many calls as db's PostgreSQL pool has
// connections (8 on SQLite, whose writes queue one at a time), and wants each to fail with a
// LockedError saying how long it took, the last after about LockWait.
func checkQueuedShareOneWait(t *testing.T, db DB, call func(i int) error) {
	t.Helper()
	n := 8
	if p, ok := db.(*postgresDB); ok {
		n = 4 * int(p.pool.Config().MaxConns) // four waves before
	}
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

// Writes of one process queue behind each other before they meet another process's lock (SQLite:
// the in-process writer queue; PostgreSQL: the advisory lock). A write queued behind one that waits
// for a stuck writer's lock (terraform apply -parallelism=10 against a ledger another process holds)
// ends at its own deadline with the same LockedError as the write ahead of it, saying how long it
// waited; before, SQLite's said only "waiting for this process's other writes to the ledger:
// context deadline exceeded".
func TestAWriteQueuedBehindAnotherWaitingForAStuckWriterSaysSo(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		// The write ahead waits for the stuck writer for as long as the test needs it to.
		ctx, db := stuckLedger(t, dsn, time.Minute)
		aheadCtx, cancelAhead := context.WithCancel(ctx)
		ahead := make(chan error, 1)
		go func() { _, err := db.Allocate(aheadCtx, "r1", fixed("h1", 1)); ahead <- err }()
		t.Cleanup(func() {
			cancelAhead()
			if err := <-ahead; err == nil {
				t.Error("the write ahead allocated while a stuck writer held the lock")
			}
		})
		if s, ok := db.(*sqliteDB); ok {
			// Until the write ahead holds the queue, this test would test nothing new.
			for len(s.writers.queue) == 0 {
				time.Sleep(10 * time.Millisecond)
			}
		}

		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := db.Allocate(short, "r2", fixed("h1", 1))
		checkLocked(t, err, db, context.DeadlineExceeded)
		if !waitedAtLeastASecond.MatchString(err.Error()) {
			t.Errorf("the error does not say how long it waited: %v", err)
		}
	})
}

// A Ctrl-C reaching a SQLite write queued behind this process's other writes says the operation was
// interrupted in the queue, not that the ledger is locked: the writes ahead are this apply's own, and
// "locked by another writer (another terraform apply?)" sent people looking for a process that did
// not exist (found by a walkthrough that interrupted applies).
func TestSQLiteWriteInterruptedInTheQueueIsNotBlamedOnAnotherWriter(t *testing.T) {
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	ctx := testContext(t)
	db := mustOpen(t, dsn)
	s := db.(*sqliteDB)
	s.writers.queue <- struct{}{} // a write of this apply's ahead in the queue
	t.Cleanup(func() { <-s.writers.queue })
	interrupted, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := db.Allocate(interrupted, "r1", fixed("h1", 1))
	if err == nil || errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted queued write: %v; want the interrupt, not ErrLocked", err)
	}
	if want := regexp.MustCompile(`allocate "r1": waited [0-9.]+m?s for this process's other writes to the ledger, queued ahead of it, until the operation was canceled`); !want.MatchString(err.Error()) {
		t.Errorf("the error %q does not match %q", err, want)
	}
}

// A delete that an interrupt ends reports what happened to the row: an error only when the row is
// still there. The delete was an auto-commit statement, and an interrupt that ended it as it
// committed made it report the context's error for a row that was gone: a destroy kept in its state
// a runtime the ledger had freed (found by a walkthrough that pressed Ctrl-C during destroys).
func TestSQLiteDeleteThatAnInterruptEndsReportsWhatHappened(t *testing.T) {
	db := mustOpen(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	ctx := testContext(t)
	mismatches := 0
	for i := range 300 {
		id := fmt.Sprintf("r%d", i)
		if _, err := db.Allocate(ctx, id, fixed("h1", 1)); err != nil {
			t.Fatal(err)
		}
		interrupted, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Duration(rand.N(400))*time.Microsecond, cancel)
		_, err := db.DeleteAllocation(interrupted, id)
		cancel()
		_, ferr := db.FindAllocation(ctx, id)
		if ferr != nil && !errors.Is(ferr, ErrNotFound) {
			t.Fatal(ferr)
		}
		if gone := ferr != nil; gone == (err != nil) {
			mismatches++
			t.Logf("delete %d: error %v, row gone: %v", i, err, gone)
		}
		if ferr == nil {
			if _, err := db.DeleteAllocation(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of 300 interrupted deletes reported the opposite of what they did", mismatches)
	}
}

// On PostgreSQL the allocation's statements after the advisory lock queue behind table and row locks
// another session holds (a migration on another runner, a session left in a transaction). They wait
// LockWait at most (the transaction's lock_timeout) and then give up with a LockedError saying what
// they waited for and how long, not with PostgreSQL's bare "canceling statement due to lock timeout".
func TestPostgresAllocateGivesUpOnATableLockAndSaysSo(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	db := mustOpen(t, dsn)
	pgtest.LockTables(t, dsn, "allocations", "host_usage")

	setLockWait(t, time.Second)
	_, err := db.Allocate(ctx, "r1", fixed("h1", 1))
	checkLocked(t, err, db, nil)
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Allocate gave up at its context's deadline, not after LockWait: %v", err)
	}
	if !regexp.MustCompile(`waited [1-9][0-9]*(\.[0-9])?s for a row or table lock that another session holds`).MatchString(err.Error()) ||
		!strings.Contains(err.Error(), "lock timeout") {
		t.Errorf("the error does not say what it waited for and how long: %v", err)
	}
}

// waitedAtLeastASecond matches the wait a LockedError reports for a one-second wait: rounded to 100 ms,
// and at least that second; a loaded machine may wake the waiter any time later, so no upper bound
// (a bound on time would flake; what ended the wait is checked by the error's kind and words).
var waitedAtLeastASecond = regexp.MustCompile(`waited [1-9][0-9]*(\.[0-9])?s for its write lock`)

// stuckLedger opens dsn with its write lock held by another handle that commits nothing (a stuck
// writer), and LockWait set to wait until the test ends.
func stuckLedger(t *testing.T, dsn string, wait time.Duration) (context.Context, DB) {
	t.Helper()
	db := mustOpen(t, dsn)
	holdWriteLock(t, mustOpen(t, dsn))
	setLockWait(t, wait)
	return testContext(t), db
}

// setLockWait sets LockWait until the test ends.
func setLockWait(t *testing.T, wait time.Duration) {
	saved := LockWait
	LockWait = wait
	t.Cleanup(func() { LockWait = saved })
}

func checkLocked(t *testing.T, err error, db DB, cause error) {
	t.Helper()
	id, _ := db.Identity(testContext(t))
	want := "ledger " + id.Location + " is locked by another writer (another terraform apply?)"
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Allocate against a stuck writer = %v; want a LockedError saying %q", err, want)
	}
	if cause != nil && !errors.Is(err, cause) {
		t.Errorf("error %v does not wrap %v", err, cause)
	}
	t.Logf("error: %v", err)
}

// holdWriteLock takes the write lock of the ledger behind db, as another process's transaction
// would, until the test ends or release is called.
func holdWriteLock(t *testing.T, db DB) (release func()) {
	t.Helper()
	ctx := testContext(t)
	switch d := db.(type) {
	case *sqliteDB:
		tx, err := d.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, outside this process's writer queue
		if err != nil {
			t.Fatal(err)
		}
		release = func() { _ = tx.Rollback() }
	case *postgresDB:
		tx, err := d.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release = func() { _ = tx.Rollback(context.Background()) }
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgAllocateLockKey); err != nil {
			release()
			t.Fatal(err)
		}
	}
	t.Cleanup(release)
	return release
}

func mustOpenReadOnly(t testing.TB, dsn string) DB {
	t.Helper()
	db, err := OpenReadOnly(testContext(t), dsn, nil)
	if err != nil {
		t.Fatalf("OpenReadOnly(%s): %v", Redact(dsn), err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func backendOf(t *testing.T, driver string) backend {
	for _, b := range backends() {
		if b.name == driver {
			return b
		}
	}
	t.Fatalf("no backend %s", driver)
	return backend{}
}

// An operation on a SQLite ledger that its context's deadline ended (a `timeouts.create = "1ms"`)
// says what it waited for, as PostgreSQL's *WaitError does, instead of a bare "open: context deadline
// exceeded"; one whose deadline had passed before it began says it did not wait.
func TestSQLiteOperationTheDeadlineEndedSaysWhatItWaitedFor(t *testing.T) {
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	late, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-late.Done()
	check := func(what string, err error) {
		t.Helper()
		var we *WaitError
		if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) ||
			!strings.Contains(err.Error(), "did not wait for SQLite to read and write the ledger file: the operation's deadline had passed before it began") {
			t.Errorf("%s with a deadline passed: %v; want a *WaitError that says it did not wait", what, err)
		}
	}
	_, err := Open(late, dsn, nil)
	check("Open", err)
	db := mustOpen(t, dsn)
	_, err = db.FindAllocation(late, "r1")
	check("FindAllocation", err)
	_, err = db.Identity(late)
	check("Identity", err)
}
