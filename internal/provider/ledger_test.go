package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/silentserver"
)

// A PostgreSQL ledger that accepts TCP and never answers: 50 concurrent reads (a plan of 50
// runtimes) share one connection attempt and its error, and later reads get the remembered error
// without connecting again.
func TestLazyLedgerOpensOnceAndRemembersAFailure(t *testing.T) {
	srv := silentserver.Start(t)
	l := newLazyLedger("postgres://rill:secret@"+srv.Addr+"/ledger?sslmode=disable&connect_timeout=2", nil)
	t.Cleanup(func() { _ = l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	errs := make([]error, 50)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = l.FindAllocation(ctx, "r")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "connect") || !strings.Contains(err.Error(), srv.Addr) || strings.Contains(err.Error(), "secret") {
			t.Fatalf("read %d: %v; want the connect error naming the server, without the password", i, err)
		}
	}
	if n := srv.Accepted(); n != 1 {
		t.Fatalf("the server saw %d connection attempts, want 1", n)
	}
	_, err := l.Identity(ctx)
	if err == nil || !strings.Contains(err.Error(), "not tried again") {
		t.Fatalf("a later read: %v; want the remembered failure", err)
	}
	if n := srv.Accepted(); n != 1 {
		t.Fatalf("a later read connected again (%d attempts)", n)
	}
	t.Logf("error: %v", errs[0])
}

// An attempt cut short by its caller's context says what it waited for and is not remembered: the
// next caller, with time left, tries again.
func TestLazyLedgerRetriesAnAttemptCutShortByItsCaller(t *testing.T) {
	srv := silentserver.Start(t)
	l := newLazyLedger("postgres://rill@"+srv.Addr+"/ledger?sslmode=disable&connect_timeout=60", nil)
	t.Cleanup(func() { _ = l.Close() })
	for i := 1; i <= 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := l.FindAllocation(ctx, "r")
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("attempt %d: %v; want a connect error ending in the caller's deadline", i, err)
		}
		if n := srv.Accepted(); n != i {
			t.Fatalf("after attempt %d the server saw %d connections", i, n)
		}
	}
}

// A caller waiting for another caller's attempt to open the ledger stops at its own deadline, with an
// error that says what it waited for and how long; the first attempt goes on.
func TestLazyLedgerWaiterSaysWhatItWaitedFor(t *testing.T) {
	srv := silentserver.Start(t)
	l := newLazyLedger("postgres://rill@"+srv.Addr+"/ledger?sslmode=disable&connect_timeout=60", nil)
	t.Cleanup(func() { _ = l.Close() })
	firstCtx, cancelFirst := context.WithTimeout(context.Background(), time.Minute)
	defer cancelFirst()
	first := make(chan error, 1)
	go func() { _, err := l.FindAllocation(firstCtx, "r"); first <- err }()
	for srv.Accepted() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := l.FindAllocation(ctx, "r")
	want := "to open (another operation of this run is opening it), until the operation's deadline"
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "waited ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v; want %q", err, want)
	}
	// One whose deadline passed before it could wait says that it did not, and blames no other
	// operation: `timeouts.read = "1ns"` said "waited 0s for the ledger ... to open (another operation
	// of this run is opening it)".
	late, cancelLate := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancelLate()
	<-late.Done()
	_, err = l.FindAllocation(late, "r")
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "another operation") || !strings.Contains(err.Error(), "did not wait for the ledger") {
		t.Errorf("out of time before the wait: %v; want an error that says it did not wait, naming no other operation", err)
	}
	cancelFirst()
	if err := <-first; err == nil {
		t.Error("the first attempt, to a server that never answers, succeeded")
	}
}

// Reads of a SQLite ledger that does not exist create nothing; the first write creates it, and
// from then on reads see what was written, through the write handle.
func TestLazyLedgerReadsCreateNothingUntilTheFirstWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "ledger.db")
	l := newLazyLedger("sqlite://"+path, nil)
	t.Cleanup(func() { _ = l.Close() })
	ctx := context.Background()

	if _, err := l.Identity(ctx); !errors.Is(err, database.ErrNoLedger) {
		t.Fatalf("Identity of a missing ledger: %v", err)
	}
	if _, err := l.FindAllocation(ctx, "r1"); !errors.Is(err, database.ErrNotFound) {
		t.Fatalf("FindAllocation: %v", err)
	}
	if list, err := l.ListAllocations(ctx); err != nil || len(list) != 0 {
		t.Fatalf("ListAllocations: %v, %v", list, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created %s: %v", dir, err)
	}

	if _, err := l.Allocate(ctx, "r1", func(*database.Allocation, map[string]int) (*database.Allocation, error) {
		return &database.Allocation{Host: "h", Slots: 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if a, err := l.FindAllocation(ctx, "r1"); err != nil || a.Host != "h" {
		t.Fatalf("FindAllocation after the write: %+v, %v", a, err)
	}
	if id, err := l.Identity(ctx); err != nil || id.ID == "" {
		t.Fatalf("Identity after the write: %+v, %v", id, err)
	}
}
