package database

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// SQLite's lock bytes in a database file (os_unix.c): PENDING_BYTE, then RESERVED_BYTE, then the
// 510 bytes in which readers take SHARED locks and a committing writer its EXCLUSIVE lock.
const (
	sqlitePendingByte = 0x40000000
	sqliteSharedFirst = sqlitePendingByte + 2
	sqliteSharedSize  = 510
)

// ofdFile opens path for the OFD locks below. Its lock owner is the open file description, not
// the process, so its locks conflict with the POSIX locks SQLite takes in this same process, as
// another process's would. Closing it drops this process's POSIX locks on the file (the hazard
// under test): it is closed last, after every SQLite connection of the test.
func ofdFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// ofdLock takes (typ F_WRLCK) or releases (F_UNLCK) an OFD lock on n bytes from start, without waiting.
func ofdLock(t *testing.T, f *os.File, typ int16, start, n int64) {
	t.Helper()
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: start, Len: n}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatalf("fcntl(F_OFD_SETLK, type %d): %v", typ, err)
	}
}

// exclusiveLockFree reports whether another process could take SQLite's EXCLUSIVE lock on the
// file now, that is whether nothing (this process's SQLite connections included) holds a lock on
// its SHARED bytes.
func exclusiveLockFree(t *testing.T, f *os.File) bool {
	t.Helper()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: sqliteSharedFirst, Len: sqliteSharedSize}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		t.Fatalf("fcntl(F_OFD_GETLK): %v", err)
	}
	return lk.Type == unix.F_UNLCK
}

// TestSQLiteReadOnlyOpenKeepsThisProcessLocks: a plan's read-only open of the ledger in a process
// whose own connection is in a write transaction on it must leave that connection's locks in place.
// checkReadable opened and closed the ledger file, and closing any descriptor of a file drops
// every POSIX lock the process holds on it (https://www.sqlite.org/howtocorrupt.html, 2.2): another
// process could then take the EXCLUSIVE lock (for example to checkpoint and delete the -wal when it
// closes, believing itself the last connection) under a live transaction.
func TestSQLiteReadOnlyOpenKeepsThisProcessLocks(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	db := mustOpen(t, "sqlite://"+path)
	allocateIDs(t, db, "a")
	probe := ofdFile(t, path)
	tx, err := db.(*sqliteDB).db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if exclusiveLockFree(t, probe) {
		t.Fatal("a write transaction holds no SHARED lock on the ledger file: the test proves nothing")
	}
	ro := mustOpenReadOnly(t, "sqlite://"+path)
	if _, err := ro.ListAllocations(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if exclusiveLockFree(t, probe) {
		t.Fatal("after a read-only open and read, another process could take the EXCLUSIVE lock under this process's write transaction")
	}
}

// TestSQLiteReadOnlyWaitsForARollbackModeCommit: someone switched the ledger out of WAL mode
// (sqlite3 ledger.db 'PRAGMA journal_mode=OFF', which persists until the provider's next write
// opens it) and their commit stalled for over 2 s with some pages written: with journal_mode OFF
// or MEMORY there is no -journal file, so nothing the lock-free read checked showed a commit in
// progress, and the plan read the half-written file. The read must wait for the writer's lock and
// read the committed result.
func TestSQLiteReadOnlyWaitsForARollbackModeCommit(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	writeLedger(t, path, "a")
	// The user's shell: out of WAL mode, then a commit (renaming "a" to "b") with no journal.
	inSQLiteShell(t, path, "PRAGMA journal_mode=OFF")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inSQLiteShell(t, path, "PRAGMA journal_mode=OFF", "UPDATE allocations SET resource_id = 'b'")
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(before) != len(after) || len(before) <= page || string(before[:page]) == string(after[:page]) {
		t.Fatalf("the commit did not rewrite page 1 in place (%d then %d bytes): the test proves nothing", len(before), len(after))
	}

	// The commit in progress: the writer holds EXCLUSIVE (and PENDING, RESERVED), has written page
	// 1 (SQLite writes pages in order) and stalled long enough for the file's time to settle.
	if err := os.WriteFile(path, before, 0o644); err != nil {
		t.Fatal(err)
	}
	w := ofdFile(t, path)
	ofdLock(t, w, unix.F_WRLCK, sqlitePendingByte, 2+sqliteSharedSize)
	if _, err := w.WriteAt(after[:page], 0); err != nil {
		t.Fatal(err)
	}
	settle(t, path)
	const stall = time.Second
	finished := make(chan error, 1)
	go func() {
		time.Sleep(stall)
		_, err := w.WriteAt(after[page:], page)
		if err == nil {
			err = w.Sync()
		}
		lk := unix.Flock_t{Type: unix.F_UNLCK, Start: sqlitePendingByte, Len: 2 + sqliteSharedSize}
		finished <- errors.Join(err, unix.FcntlFlock(w.Fd(), unix.F_OFD_SETLK, &lk))
	}()

	start := time.Now()
	ro := mustOpenReadOnly(t, "sqlite://"+path)
	defer func() { _ = ro.Close() }()
	list, err := ro.ListAllocations(ctx)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ResourceID)
	}
	if len(ids) != 1 || ids[0] != "b" || took < stall {
		t.Fatalf("read %v after %v, during a commit that held the lock for %v: want [b], read after the commit", ids, took, stall)
	}
}
