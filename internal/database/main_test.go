package database

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(readerEnv) != "" {
		os.Exit(runReaderProcess())
	}
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelperProcess())
	}
	pgtest.Main(m)
}

// backend is one ledger implementation under test. newDSN returns the DSN of a fresh, empty store;
// calling Open on it several times yields handles on the same store.
type backend struct {
	name   string
	newDSN func(t testing.TB) string
}

func backends() []backend {
	return []backend{
		{name: DriverSQLite, newDSN: func(t testing.TB) string {
			return "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
		}},
		{name: DriverPostgres, newDSN: func(t testing.TB) string { return pgtest.Shared(t) }},
	}
}

// forEachBackend runs test as a subtest per backend.
func forEachBackend(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { test(t, b.newDSN(t)) })
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustOpen opens dsn and closes it when the test ends.
func mustOpen(t testing.TB, dsn string) DB {
	t.Helper()
	db, err := Open(testContext(t), dsn, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", Redact(dsn), err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// errNoCapacity is what the test placer returns, inside a *capacityError, when no host has room.
var errNoCapacity = errors.New("no runtimes found with sufficient available slots")

type capacityError struct {
	Requested int
}

func (e *capacityError) Error() string {
	return fmt.Sprintf("%d slots requested: %v", e.Requested, errNoCapacity)
}
func (e *capacityError) Unwrap() error { return errNoCapacity }

// placer returns a PlaceFunc that keeps an existing allocation and otherwise puts slots on the
// least-used host of pool (host -> capacity) that has room, like the static provisioner.
// delay, when non-zero, is spent inside the PlaceFunc to widen any race window.
func placer(pool map[string]int, slots int, delay time.Duration) PlaceFunc {
	hosts := make([]string, 0, len(pool))
	for h := range pool {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return func(current *Allocation, used map[string]int) (*Allocation, error) {
		if delay > 0 {
			time.Sleep(delay)
		}
		if current != nil {
			return current, nil
		}
		best := ""
		for _, h := range hosts {
			if used[h]+slots <= pool[h] && (best == "" || used[h] < used[best]) {
				best = h
			}
		}
		if best == "" {
			return nil, &capacityError{Requested: slots}
		}
		return &Allocation{Provisioner: "static", Host: best, Slots: slots}, nil
	}
}

// allocateMany runs one goroutine per resource ID, all released at once, each allocating one slot
// through dbs[i % len(dbs)]. It returns how many succeeded and how many got the capacity error.
func allocateMany(ctx context.Context, dbs []DB, ids []string, place PlaceFunc) (ok, full int64, err error) {
	var wg sync.WaitGroup
	var nOK, nFull atomic.Int64
	errs := make(chan error, len(ids))
	start := make(chan struct{})
	for i, id := range ids {
		wg.Add(1)
		go func(db DB, id string) {
			defer wg.Done()
			<-start
			_, err := db.Allocate(ctx, id, place)
			var ce *capacityError
			switch {
			case err == nil:
				nOK.Add(1)
			case errors.As(err, &ce) && errors.Is(err, errNoCapacity):
				nFull.Add(1)
			default:
				errs <- fmt.Errorf("allocate %s: %w", id, err)
			}
		}(dbs[i%len(dbs)], id)
	}
	close(start)
	wg.Wait()
	close(errs)
	var all []error
	for e := range errs {
		all = append(all, e)
	}
	return nOK.Load(), nFull.Load(), errors.Join(all...)
}
