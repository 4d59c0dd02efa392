package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteSnapshotSettle is how long the ledger file must have been unmodified before a read-only
// handle reads it without SQLite's locks (readSnapshot). File systems record modification times in
// ticks, not instants (Linux: a scheduler tick of up to 10ms; ext3 and HFS+: 1s; FAT: 2s), so a
// write in the same tick as readSnapshot's first look could leave the time unchanged. A write to a
// file last modified more than a tick ago always moves its time forward.
const sqliteSnapshotSettle = 2 * time.Second

// read runs op, a read of the ledger, on a connection.
//
// A read-write handle reads through SQLite's locks, retrying SQLITE_BUSY (retryBusy).
//
// A read-only handle (OpenReadOnly, the plan) first tries readSnapshot, which reads the file without
// locks and without creating anything, and proves afterwards that what it read was a committed
// state. When that cannot be proved (a writer has the ledger open, or wrote it moments ago), it
// reads through SQLite's locks like a writer would: in WAL mode that needs the -wal and -shm files,
// which SQLite creates when they are missing (and deletes when the last connection closes). When
// it cannot create them either (the directory is not writable by this user), the read waits for the
// writer to finish, as for a lock, and then fails saying so.
func (s *sqliteDB) read(ctx context.Context, op func(q sqlQueryer) error) error {
	if s.snap == nil {
		return s.retryBusy(ctx, time.Now(), func() error { return op(s.db) })
	}
	start := time.Now()
	backoff := 10 * time.Millisecond
	for {
		done, refusal, err := s.readSnapshot(ctx, op)
		if done {
			return err
		}
		// What the error will blame, from what this round saw: the message is not chosen by another
		// look at the journal, which may have come or gone since.
		hotJournal := refusal == refusedHotJournal
		// A file out of WAL mode is read with a SHARED lock and no -wal or -shm: wouldLeaveFiles's
		// concern does not arise (unless a writer turned it back to WAL, wrote and closed in the
		// moment between the two reads).
		if refusal != refusedRollbackMode && s.wouldLeaveFiles() {
			err = errWouldLeaveFiles
		} else if err = s.retryBusy(ctx, time.Now(), func() error { return op(s.db) }); !isSQLiteReadOnlyOpen(err) {
			return err
		}
		// Wait for as long as the file's time takes to settle, or a writer would hold a lock.
		wait := max(LockWait, sqliteSnapshotSettle+time.Second)
		if time.Since(start) >= wait {
			return s.readOnlyDirError(err, hotJournal)
		}
		s.logger.Debug("ledger in use by a writer and its directory is not writable; waiting", zap.Error(err))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return saidWhatItWaitedFor{withContextErr(ctx, s.readOnlyDirError(err, hotJournal))}
		case <-t.C:
		}
		backoff = min(backoff*2, 250*time.Millisecond)
	}
}

// snapshotRefusal is why readSnapshot did not read: what read does next depends on it.
type snapshotRefusal int

const (
	// refusedUnproved: the read could not be proved to see a committed state (the file changed
	// lately or during the read, a -wal is there, or the header could not be read): read with locks.
	refusedUnproved snapshotRefusal = iota
	// refusedRollbackMode: the file is not in WAL mode, so a locked read creates no -wal or -shm.
	refusedRollbackMode
	// refusedHotJournal: a -journal beside a ledger file that is not empty may be hot (journalMayBeHot).
	refusedHotJournal
)

// readSnapshot runs op on an immutable=1 connection, which reads the main file only: no locks, no
// -wal, no -shm, nothing created. done is false, and op's result is to be discarded, unless the
// file provably held a committed state, unchanged, for the whole read:
//
//  1. the file's size and modification time, taken first, are more than sqliteSnapshotSettle old;
//  2. then no -wal file exists, nor a rollback -journal that may be hot (journalMayBeHot, which says
//     why one that is not can be ignored): every committed transaction is in the main file, since
//     SQLite deletes the -wal only after copying all of it into the main file, and a writer that
//     stopped without doing so leaves its -wal behind. Beside a file of 0 bytes the journal is not
//     looked at: the header (3) says the file is not in WAL mode, and the locked read that follows
//     applies SQLite's own rule (a journal beside an empty database has nothing to roll back: it is
//     a removed ledger's, or a first transaction's, and either way the ledger is empty);
//  3. the file's header, read on op's connection, says WAL mode: only then does every write of the
//     main file happen with a -wal present (a checkpoint). Out of WAL mode (someone's sqlite3 shell
//     ran PRAGMA journal_mode=OFF or MEMORY, which lasts until the provider's next write) a commit
//     writes the main file with no journal file at all, and one stalled mid-write for longer than
//     sqliteSnapshotSettle looks settled: the refusal is then refusedRollbackMode, and the read must
//     take SQLite's locks, which in that mode create no file;
//  4. after the read the file is the same file, with the same size and modification time: nothing
//     wrote to it since 1 (by 1, a write would have moved the time forward).
//
// By 2, 3 and 4, op read the ledger as committed at 2. A writer that committed after 2 did so into
// a new -wal, not into the main file (or 4 fails): op's result is the state just before that
// commit, as a locked read that began at 2 would have seen it.
//
// A writer's locks are not looked at instead of 3: asking the kernel (fcntl F_GETLK) needs a
// descriptor of the file, SQLite's own is not reachable through the driver, and closing one of our
// own would drop this process's SQLite locks on the file (see checkReadable).
func (s *sqliteDB) readSnapshot(ctx context.Context, op func(q sqlQueryer) error) (done bool, refusal snapshotRefusal, err error) {
	before, ok := statIfSettled(s.file)
	if !ok {
		return false, refusedUnproved, nil
	}
	if _, err := os.Lstat(s.file + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return false, refusedUnproved, nil // present, or unknown
	}
	if before.Size() > 0 && journalMayBeHot(s.file+"-journal") {
		return false, refusedHotJournal, nil
	}
	// One connection for the header and op, so that both read the same file.
	conn, err := s.snap.Conn(ctx)
	if err == nil {
		defer func() { _ = conn.Close() }()
		var wal bool
		// Bytes 18 and 19 of the header are 2 in WAL mode (https://www.sqlite.org/fileformat2.html).
		// A file of 0 bytes (created, never committed to) has no page 1: not in WAL mode either.
		if err = conn.QueryRowContext(ctx,
			"SELECT coalesce((SELECT substr(data, 19, 2) = x'0202' FROM sqlite_dbpage WHERE pgno = 1), 0)").Scan(&wal); err != nil {
			s.logger.Debug("cannot read the ledger file's header; reading it with locks", zap.Error(err))
			return false, refusedUnproved, nil
		}
		if !wal {
			s.logger.Debug("ledger file is not in WAL mode; reading it with locks")
			return false, refusedRollbackMode, nil
		}
		err = op(conn)
	}
	if !unchangedSince(s.file, before) {
		s.logger.Debug("ledger file changed during a lock-free read; reading it again with locks")
		return false, refusedUnproved, nil
	}
	return true, refusedUnproved, err
}

// journalMayBeHot reports whether the rollback journal at path may hold a transaction that was begun
// and not finished (a "hot" journal: https://www.sqlite.org/fileformat2.html#hot_journals), which
// the next connection to read the ledger rolls back: one that can write the ledger, its journal and
// its directory does; a read-only one fails with SQLITE_READONLY_ROLLBACK. SQLite's own test, less
// its lock check (not available here, see readSnapshot) and its exemption of an empty database
// (readSnapshot's to apply): the file exists, is not empty, and its first byte is not 0. An empty journal, or one whose header was
// zeroed, is what a commit leaves behind in journal_mode=TRUNCATE or PERSIST (someone's sqlite3
// shell; in WAL mode only a copy of the ledger's directory has one, since SQLite deletes it when the
// ledger goes back to WAL): SQLite ignores it, and so may the lock-free read, because a writer
// writes the journal's header, magic number first, and syncs it before it writes any page of the
// ledger file, and zeroes, truncates or deletes the journal only once the ledger file is whole. A
// journal being written by a live writer looks hot too, as it should: either way the ledger file
// may be half written. A journal this user cannot open counts as hot, as it does for SQLite. Opening
// the journal leaves this process's SQLite locks alone: they are on the ledger file, not on its
// journal.
func journalMayBeHot(path string) bool {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	defer func() { _ = f.Close() }()
	var first [1]byte
	n, err := f.Read(first[:])
	if n == 0 {
		return !errors.Is(err, io.EOF)
	}
	return first[0] != 0
}

// statIfSettled returns the file's info when its modification time is over sqliteSnapshotSettle old.
func statIfSettled(path string) (os.FileInfo, bool) {
	fi, err := os.Stat(path)
	return fi, err == nil && time.Since(fi.ModTime()) >= sqliteSnapshotSettle
}

// unchangedSince reports whether path is still the file before was, with the same size and
// modification time.
func unchangedSince(path string, before os.FileInfo) bool {
	after, err := os.Stat(path)
	return err == nil && os.SameFile(before, after) && after.Size() == before.Size() && after.ModTime().Equal(before.ModTime())
}

// errWouldLeaveFiles is why read did not read with locks: see wouldLeaveFiles.
var errWouldLeaveFiles = errors.New("this user cannot write the ledger file, so SQLite could not remove " +
	"-wal and -shm files it created for the read: they would be left behind, owned by this user, and " +
	"the ledger's owner could not write the ledger until they were deleted")

// wouldLeaveFiles reports whether a locked read would create a -wal or -shm file that it could not
// remove: SQLite creates them (in a writable directory) even for a connection that can only read
// the ledger file, and only a connection that can write the file checkpoints and deletes them on
// close. Created by another user than the ledger's owner (a plan run as someone else), they stay,
// and the owner's next apply cannot open the -shm for writing. (Root's are given to the owner.)
func (s *sqliteDB) wouldLeaveFiles() bool {
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Lstat(s.file + suffix); errors.Is(err, fs.ErrNotExist) {
			// Where the directory is not writable SQLite cannot create them: read says so.
			return canWrite(filepath.Dir(s.file)) && !canWrite(s.file)
		}
	}
	return false // a writer's files: SQLite uses them as they are
}

// isSQLiteReadOnlyOpen reports whether err is SQLite failing to create a file it needs to read a
// WAL database with locks (the -wal or -shm file) because this user cannot write the directory.
func isSQLiteReadOnlyOpen(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// readOnlyDirError is read's error once it has waited in vain. hotJournal: the last lock-free
// attempt found a -journal that may be hot (refusedHotJournal); SQLite's own refusal to roll one
// back (SQLITE_READONLY_ROLLBACK) says the same.
func (s *sqliteDB) readOnlyDirError(err error, hotJournal bool) error {
	dir, base := filepath.Dir(s.file), filepath.Base(s.file) // where SQLite needs to create its files
	var se *sqlite.Error
	if hotJournal || errors.As(err, &se) && se.Code() == sqlite3.SQLITE_READONLY_ROLLBACK {
		// Not a -wal or -shm matter: SQLite must roll the journal back before anyone reads the
		// ledger, and a user who cannot write the ledger file cannot (SQLITE_READONLY_ROLLBACK).
		if errors.Is(err, errWouldLeaveFiles) {
			err = errors.New("the ledger file is not writable by this user")
		}
		return fmt.Errorf("cannot read the ledger safely: %s-journal may hold a transaction that was begun and not "+
			"finished (its writer stopped, or is still writing; or this user cannot open the journal to tell), so the "+
			"ledger file may be half written; only a user who can write the ledger file, its -journal and its "+
			"directory (%s) can roll it back, which SQLite does when such a user next reads the ledger (an apply "+
			"does, or `sqlite3 %s 'PRAGMA quick_check'` run as that user): run the plan again once that is done: %w",
			s.file, dir, s.file, err)
	}
	cannot, grant := "which this user cannot create in "+dir, dir
	if errors.Is(err, errWouldLeaveFiles) {
		cannot, grant = "which this user could create in "+dir+" but not remove", "the ledger file"
	}
	return fmt.Errorf("cannot read the ledger safely: another process is writing it (or wrote it less than %s ago), "+
		"or a writer stopped without finishing and left %s-wal, whose committed changes only SQLite can read, "+
		"and SQLite needs the %s-wal and %s-shm files to do so, %s: "+
		"run the plan again once the writer has finished (opening the ledger once as a user who can write %s "+
		"also finishes a stopped writer's work), or let this user write %s: %w",
		sqliteSnapshotSettle, base, base, base, cannot, dir, grant, err)
}

// checkReadable says who cannot read the ledger file and what to do, where SQLite would only say
// "unable to open database file (14)". It asks (canRead) rather than opening the file: closing a
// descriptor of the ledger would drop every SQLite lock this process holds on it.
func checkReadable(path string) error {
	err := canRead(path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("sqlite ledger %s: this user cannot read the ledger file: run the plan as a user who can, "+
			"or give this user read access to it (and to its -wal and -shm files, when they are there): %w", path, err)
	}
	return fmt.Errorf("sqlite ledger %s: %w", path, err)
}
