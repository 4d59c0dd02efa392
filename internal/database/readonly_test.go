package database

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// The read-only tests open the ledger as another user (nobody), who can read the ledger file but
// not write its directory: a plan job in CI, a ledger on a read-only mount, a plan run as another
// user. The test binary re-executes itself as that user (see TestMain).
const (
	readerEnv      = "RILL_DATABASE_TEST_READER"       // the DSN to read
	readerCountEnv = "RILL_DATABASE_TEST_READER_COUNT" // how many times to read it
	readerWaitEnv  = "RILL_DATABASE_TEST_READER_WAIT"  // LockWait in the reader
	nobodyUID      = 65534
)

// readerSetup, when set, runs first in the reader process (a failure ends it): see
// sqlite_access_linux_test.go.
var readerSetup func() error

// runReaderProcess opens the ledger read-only and lists it readerCountEnv times, one line per list:
// "OK <n> <ids>" or "ERR <error>".
func runReaderProcess() int {
	if readerSetup != nil {
		if err := readerSetup(); err != nil {
			fmt.Println("SETUP", err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(os.Getenv(readerCountEnv))
	if err != nil {
		n = 1
	}
	if w, err := time.ParseDuration(os.Getenv(readerWaitEnv)); err == nil {
		LockWait = w
	}
	db, err := OpenReadOnly(ctx, os.Getenv(readerEnv), nil)
	if err != nil {
		fmt.Println("ERR", strings.ReplaceAll(err.Error(), "\n", " "))
		return 0
	}
	defer func() { _ = db.Close() }()
	for range n {
		list, err := db.ListAllocations(ctx)
		if err != nil {
			fmt.Println("ERR", strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		ids := make([]string, len(list))
		for i, a := range list {
			ids[i] = a.ResourceID
		}
		slices.Sort(ids)
		fmt.Println("OK", len(ids), strings.Join(ids, ","))
	}
	return 0
}

// readOnlyLedger creates a ledger in a directory that nobody can read but not write, and returns
// its path. It needs root (to switch to another user): elsewhere it skips, or fails under CI=true,
// whose workflow runs these tests as root in a step of their own (.github/workflows/test.yml).
func readOnlyLedger(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		ci.Skip(t, "needs root, to read the ledger as another user (nobody) who cannot write its directory")
	}
	dir := t.TempDir()
	// t.TempDir's directories are private to root: let nobody traverse them and read, not write.
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ledger.db")
}

// sharedDirLedger is readOnlyLedger in a directory where nobody may create files, but still not
// write the ledger file: a plan run as another user in a shared directory.
func sharedDirLedger(t *testing.T) string {
	t.Helper()
	path := readOnlyLedger(t)
	if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	return path
}

// readerBinary copies the test binary where nobody can run it (the go build directory is private).
func readerBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "reader.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// startReader runs runReaderProcess as nobody; the ledger's directory must not hold the binary.
func startReader(t *testing.T, path string, count int, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	binDir := t.TempDir()
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(readerBinary(t, binDir), "-test.run=^$")
	cmd.Env = append(os.Environ(), readerEnv+"=sqlite://"+path, readerCountEnv+"="+strconv.Itoa(count), "HOME=/nonexistent")
	cmd.Env = append(cmd.Env, env...)
	if err := proc.RunAs(cmd, &proc.Credential{Uid: nobodyUID, Gid: nobodyUID}); err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// wantReadAsNobody lists the ledger once as nobody, wants the reader's line to be want, and the
// ledger's directory as it was: nothing created, nothing left behind.
func wantReadAsNobody(t *testing.T, path, want string, env ...string) {
	t.Helper()
	before := dirEntries(t, filepath.Dir(path))
	if got := readAsNobody(t, path, env...); got != want {
		t.Fatalf("read as nobody: %q, want %q", got, want)
	}
	if after := dirEntries(t, filepath.Dir(path)); !slices.Equal(before, after) {
		t.Errorf("the read as nobody changed the ledger's directory: %v, then %v", before, after)
	}
}

// readAsNobody lists the ledger once as nobody and returns the reader's line.
func readAsNobody(t *testing.T, path string, env ...string) string {
	t.Helper()
	cmd, out := startReader(t, path, 1, env...)
	var line string
	if out.Scan() {
		line = out.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reader: %v (output %q)", err, line)
	}
	return line
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func allocateIDs(t *testing.T, db DB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := db.Allocate(testContext(t), id, placer(pool10x2, 1, 0)); err != nil {
			t.Fatalf("Allocate(%s): %v", id, err)
		}
	}
}

// writeLedger writes the SQLite ledger at path as an apply that allocated ids and ended would: the
// handle is closed, so no -wal or -shm is left.
func writeLedger(t *testing.T, path string, ids ...string) {
	t.Helper()
	db := mustOpen(t, "sqlite://"+path)
	allocateIDs(t, db, ids...)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// inSQLiteShell runs stmts on one plain connection to the ledger at path, as a user's own sqlite3
// shell would, and closes it.
func inSQLiteShell(t *testing.T, path string, stmts ...string) {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	c.SetMaxOpenConns(1)
	for _, s := range stmts {
		if _, err := c.ExecContext(testContext(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteReadOnlyDirectory: the common case, the last writer closed cleanly (no -wal, no -shm)
// and the reader cannot write the directory. The plan read failed with "attempt to write a
// readonly database (1544)": SQLite could not create the -wal and -shm files.
func TestSQLiteReadOnlyDirectory(t *testing.T) {
	path := readOnlyLedger(t)
	writeLedger(t, path, "a", "b")
	wantReadAsNobody(t, path, "OK 2 a,b")
}

// TestSQLiteReadOnlyDirectoryOpenWriter: a writer holds the ledger open, so its committed rows are
// in the -wal file, not yet in the main file. The reader must see them (or fail saying why): a
// read of the main file alone would miss "c", and a refresh would plan to re-create it.
func TestSQLiteReadOnlyDirectoryOpenWriter(t *testing.T) {
	path := readOnlyLedger(t)
	db := mustOpen(t, "sqlite://"+path)
	allocateIDs(t, db, "a", "b", "c")
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer has no -wal file: %v", err)
	}
	if got, want := readAsNobody(t, path), "OK 3 a,b,c"; got != want {
		t.Fatalf("read as nobody: %q, want %q", got, want)
	}
}

// TestSQLiteReadOnlyDirectoryConcurrentWriter: writers open, allocate and close (a checkpoint into
// the main file, then the -wal file deleted) while nobody reads. Every read must be a committed
// state: the rows only ever grow, and a failed read must say what to do.
func TestSQLiteReadOnlyDirectoryConcurrentWriter(t *testing.T) {
	path := readOnlyLedger(t)
	dsn := "sqlite://" + path
	writeLedger(t, path, "seed")
	const reads = 200
	cmd, out := startReader(t, path, reads)
	// The first read, before any writer: no -wal file, a directory the reader cannot write.
	if !out.Scan() || out.Text() != "OK 1 seed" {
		t.Fatalf("first read: %q, want \"OK 1 seed\"", out.Text())
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			db, err := Open(context.Background(), dsn, nil)
			if err == nil {
				_, err = db.Allocate(context.Background(), fmt.Sprintf("w%04d", i), func(*Allocation, map[string]int) (*Allocation, error) {
					return &Allocation{Provisioner: "p", Host: "h", Slots: 1}, nil
				})
				err = errors.Join(err, db.Close())
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	last, ok, failed := 0, 0, 0
	for out.Scan() {
		f := strings.SplitN(out.Text(), " ", 3)
		switch f[0] {
		case "OK":
			n, _ := strconv.Atoi(f[1])
			if n < last || n == 0 {
				t.Errorf("read %d rows after a read of %d: a read saw a state that was never committed", n, last)
			}
			last = n
			ok++
		default:
			failed++
			if !strings.Contains(out.Text(), path) {
				t.Errorf("a failed read does not name the ledger: %s", out.Text())
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads, %d succeeded, %d failed; last saw %d rows", reads, ok+1, failed, last)
	if ok == 0 {
		t.Fatalf("no read succeeded")
	}
}

// settle makes the ledger file look last written an hour ago, as after a writer closed long ago.
func settle(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteReadOnlyDirectoryCrashedWriter: a writer stopped without checkpointing (its -wal holds
// committed rows the main file lacks) and without leaving a -shm file, and the reader cannot create
// one. Reading the main file alone would miss "b": the read must fail instead, naming the ledger,
// its directory and what to do.
func TestSQLiteReadOnlyDirectoryCrashedWriter(t *testing.T) {
	path := readOnlyLedger(t)
	live := filepath.Join(t.TempDir(), "ledger.db")
	db := mustOpen(t, "sqlite://"+live)
	allocateIDs(t, db, "a")
	if _, err := db.(*sqliteDB).db.ExecContext(testContext(t), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	allocateIDs(t, db, "b")
	// What a crash leaves: the main file, then the -wal, copied while the writer is open.
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(live + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, path)
	got := readAsNobody(t, path, readerWaitEnv+"=100ms")
	if !strings.HasPrefix(got, "ERR ") || !strings.Contains(got, path) || !strings.Contains(got, "cannot create in "+filepath.Dir(path)+":") {
		t.Fatalf("read as nobody: %q, want an error naming %s and its directory", got, path)
	}
	t.Log(got)
}

// TestSQLiteReadOnlyCreatesNoFiles: a plan (OpenReadOnly) of a ledger no writer has open creates no
// file, even where it could: SQLite's locked reads create -wal and -shm files (and delete them on
// close).
func TestSQLiteReadOnlyCreatesNoFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	writeLedger(t, path, "a")
	settle(t, path)
	before := dirEntries(t, filepath.Dir(path))
	ro, err := OpenReadOnly(testContext(t), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	if list, err := ro.ListAllocations(testContext(t)); err != nil || len(list) != 1 {
		t.Fatalf("ListAllocations: %v, %v", list, err)
	}
	if _, err := ro.FindAllocation(testContext(t), "a"); err != nil {
		t.Fatalf("FindAllocation: %v", err)
	}
	if after := dirEntries(t, filepath.Dir(path)); !slices.Equal(before, after) {
		t.Errorf("the plan's reads created files: %v, then %v", before, after)
	}
}

// TestSQLiteSnapshotReadDetectsWrites: a lock-free read (readSnapshot) during which a writer opens
// the ledger, commits and closes (copying its -wal into the main file and deleting it) must be
// thrown away; one during which a writer commits but stays open reads the state before the commit.
func TestSQLiteSnapshotReadDetectsWrites(t *testing.T) {
	ctx := testContext(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	dsn := "sqlite://" + path
	writeLedger(t, path, "a")
	settle(t, path)
	ro, err := OpenReadOnly(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	s := ro.(*sqliteDB)
	count := func(q sqlQueryer) int {
		var n int
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM allocations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	done, _, err := s.readSnapshot(ctx, func(q sqlQueryer) error {
		count(q)
		w, err := Open(ctx, dsn, nil)
		if err != nil {
			return err
		}
		allocateIDs(t, w, "b")
		return w.Close() // the checkpoint writes "b" into the main file
	})
	if done || err != nil {
		t.Fatalf("a read during which the main file changed was kept (done %v, err %v)", done, err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the writer left its -wal file: the test proves nothing")
	}

	settle(t, path)
	var w DB
	var n int
	done, _, err = s.readSnapshot(ctx, func(q sqlQueryer) error {
		w = mustOpen(t, dsn)
		allocateIDs(t, w, "c") // into the -wal file: the main file is unchanged
		n = count(q)
		return nil
	})
	if !done || err != nil || n != 2 {
		t.Fatalf("readSnapshot: done %v, err %v, %d rows; want the 2 rows committed before it", done, err, n)
	}
	if list, err := ro.ListAllocations(ctx); err != nil || len(list) != 3 {
		t.Fatalf("ListAllocations with a writer open: %d rows, %v; want 3", len(list), err)
	}
}

// TestSQLiteReadOnlyUnreadableFile: a plan as a user who cannot read the ledger file says so and
// what to do, instead of SQLite's "unable to open database file (14)".
func TestSQLiteReadOnlyUnreadableFile(t *testing.T) {
	path := readOnlyLedger(t)
	writeLedger(t, path, "a")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readAsNobody(t, path); !strings.Contains(got, path+": this user cannot read the ledger file") {
		t.Fatalf("read as nobody: %q, want it to say that this user cannot read %s", got, path)
	}
}

// TestSQLiteSnapshotReadThroughSymlink: a ledger path that is a symbolic link. SQLite resolves the
// link and keeps its -wal file beside the target, so the lock-free read must look for the -wal there:
// a writer still open (or stopped without a checkpoint) holds committed allocations in that -wal
// only, and a read of the main file alone would report them gone.
func TestSQLiteSnapshotReadThroughSymlink(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "data", "ledger.db")
	link := filepath.Join(dir, "ledger.db")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	w := mustOpen(t, "sqlite://"+target)
	defer func() { _ = w.Close() }()
	allocateIDs(t, w, "a")
	if _, err := w.(*sqliteDB).db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	allocateIDs(t, w, "b") // committed into the -wal only
	if err := os.Symlink(filepath.Join("data", "ledger.db"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target + "-wal"); err != nil {
		t.Fatalf("no -wal beside the target: the test proves nothing: %v", err)
	}
	settle(t, target) // the writer committed "b" long ago, and is still open
	ro := mustOpenReadOnly(t, "sqlite://"+link)
	defer func() { _ = ro.Close() }()
	list, err := ro.ListAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("read through a symbolic link: %d allocations, want 2 (a committed one read as gone)", len(list))
	}
}

// TestSQLiteReadOnlyFileLeavesNoFiles: a plan as a user who may write the ledger's directory but not
// the ledger file (a plan run as another user in a shared directory), moments after an apply. A
// locked read created -wal and -shm files owned by that user that its read-only connection could not
// remove, and the owner's next apply could not open the -shm for writing. The read must wait for the
// file to settle and read it without locks instead, leaving the directory as it was.
func TestSQLiteReadOnlyFileLeavesNoFiles(t *testing.T) {
	path := sharedDirLedger(t)
	writeLedger(t, path, "a") // just now: not settled, so the first read cannot be lock-free
	wantReadAsNobody(t, path, "OK 1 a")
}

// TestSQLiteReadOnlyOutOfWALMode: a ledger someone took out of WAL mode (PRAGMA journal_mode=DELETE
// in their own sqlite3 shell), read as nobody, who may create files in its directory but not write
// the ledger file. Out of WAL mode the read takes SQLite's locks (see readSnapshot), which creates
// no -wal or -shm, so wouldLeaveFiles's wait must not apply: it would wait for a lock-free read that
// never comes, and fail.
func TestSQLiteReadOnlyOutOfWALMode(t *testing.T) {
	path := sharedDirLedger(t)
	writeLedger(t, path, "a")
	inSQLiteShell(t, path, "PRAGMA journal_mode=DELETE")
	settle(t, path)
	wantReadAsNobody(t, path, "OK 1 a", readerWaitEnv+"=100ms")
}

// TestSQLiteReadOnlyEmptyFile: a ledger file of 0 bytes (SQLite creates the file at open and writes
// it at the first commit: an apply killed in between, or a `touch`) holds no allocations, read as
// nobody, who may create files in its directory but not write the ledger file. It has no header to
// say WAL, and a locked read of it creates no -wal or -shm, so wouldLeaveFiles's wait must not apply.
func TestSQLiteReadOnlyEmptyFile(t *testing.T) {
	path := sharedDirLedger(t)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	settle(t, path)
	wantReadAsNobody(t, path, "OK 0 ", readerWaitEnv+"=100ms")
}

// TestSQLiteReadOnlyJournalLeftBeside: a rollback -journal beside the ledger, read as nobody, who
// cannot write the ledger file. An empty or zeroed one holds no transaction, and SQLite ignores it:
// the read must succeed. Before, any -journal sent the read to SQLite's locks; in WAL mode those need
// the -wal and -shm, and the plan failed blaming a writer and a -wal that did not exist. One that
// may be hot (begun and not finished) must stop the read, naming the journal and who can roll it
// back.
//
// Someone's sqlite3 shell in journal_mode=TRUNCATE or PERSIST leaves an empty or zeroed journal
// beside a ledger out of WAL mode (the provider's next write puts it back in WAL mode and deletes the
// journal): read in a directory nobody may write, where that failed before. In WAL mode only a copy
// of the ledger's directory has such a journal: read where nobody cannot write the directory.
//
// Beside a ledger file of 0 bytes (TestSQLiteReadOnlyEmptyFile) even a hot journal has nothing to
// roll back, and SQLite reads the ledger as empty: so must the plan. In a directory nobody cannot
// write it did; in one nobody may write, though not the ledger file (wouldLeaveFiles), it waited and
// failed.
func TestSQLiteReadOnlyJournalLeftBeside(t *testing.T) {
	zeroed := make([]byte, 512)
	// SQLite's journal magic (https://www.sqlite.org/fileformat2.html#the_rollback_journal): as far
	// as a reader that cannot write the ledger can tell, a transaction to roll back.
	hot := append([]byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}, make([]byte, 504)...)
	for _, tc := range []struct {
		name    string
		ledger  func(t *testing.T) string
		shell   string // journal_mode a sqlite3 shell leaves the ledger in after one write ("": WAL)
		journal []byte // written over the -journal when not nil
		want    string // the reader's line, or "ERR " for an error
		empty   bool   // a ledger file of 0 bytes instead of one allocation
	}{
		{"shell in journal_mode=TRUNCATE", sharedDirLedger, "TRUNCATE", nil, "OK 1 a", false},
		{"shell in journal_mode=PERSIST", sharedDirLedger, "PERSIST", nil, "OK 1 a", false},
		{"copy, WAL mode, empty", readOnlyLedger, "", []byte{}, "OK 1 a", false},
		{"copy, WAL mode, zeroed header", readOnlyLedger, "", zeroed, "OK 1 a", false},
		{"copy, WAL mode, hot", readOnlyLedger, "", hot, "ERR ", false},
		{"hot, shared directory", sharedDirLedger, "", hot, "ERR ", false},
		{"hot beside 0 bytes, shared directory", sharedDirLedger, "", hot, "OK 0 ", true},
		{"hot beside 0 bytes, read-only directory", readOnlyLedger, "", hot, "OK 0 ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.ledger(t)
			if tc.empty {
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				writeLedger(t, path, "a")
			}
			if tc.shell != "" {
				inSQLiteShell(t, path, "PRAGMA journal_mode="+tc.shell, "PRAGMA user_version=7")
				if fi, err := os.Stat(path + "-journal"); err != nil || fi.Size() == 0 && tc.shell == "PERSIST" {
					t.Fatalf("the shell left no journal as journal_mode=%s does: %v", tc.shell, err)
				}
			}
			if tc.journal != nil {
				if err := os.WriteFile(path+"-journal", tc.journal, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			settle(t, path)
			if tc.want != "ERR " {
				wantReadAsNobody(t, path, tc.want, readerWaitEnv+"=100ms")
				return
			}
			got := readAsNobody(t, path, readerWaitEnv+"=100ms")
			t.Log(got)
			for _, want := range []string{"ERR ", path + "-journal may hold a transaction", "can roll it back"} {
				if !strings.Contains(got, want) {
					t.Fatalf("read as nobody: %q, want it to contain %q", got, want)
				}
			}
			if strings.Contains(got, "-wal") {
				t.Errorf("read as nobody: %q: blames a -wal file that does not exist", got)
			}
		})
	}
}
