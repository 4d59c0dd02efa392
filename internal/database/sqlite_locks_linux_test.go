package database

import (
	"os"
	"path/filepath"
	"testing"

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
