package database

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// schemaVersions returns the versions recorded in schema_migrations.
func schemaVersions(t *testing.T, db DB) []int {
	t.Helper()
	ctx := testContext(t)
	var versions []int
	switch d := db.(type) {
	case *sqliteDB:
		rows, err := d.db.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, v)
		}
	case *postgresDB:
		rows, err := d.pool.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int32
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, int(v))
		}
	default:
		t.Fatalf("unknown DB type %T", db)
	}
	return versions
}

// rawExec runs a statement on the store behind db, bypassing the ledger API.
func rawExec(t *testing.T, db DB, sql string) {
	t.Helper()
	ctx := testContext(t)
	var err error
	switch d := db.(type) {
	case *sqliteDB:
		_, err = d.db.ExecContext(ctx, sql)
	case *postgresDB:
		_, err = d.pool.Exec(ctx, sql)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func wantVersions(driver string) []int {
	var v []int
	for i := 1; i <= latestSchemaVersion(driver); i++ {
		v = append(v, i)
	}
	return v
}

func TestOpenMigrateTwice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		a := mustOpen(t, dsn)
		if got := schemaVersions(t, a); !reflect.DeepEqual(got, wantVersions(a.Driver())) {
			t.Fatalf("schema_migrations = %v, want %v", got, wantVersions(a.Driver()))
		}
		if err := a.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Allocate(ctx, "r1", fixed("h1", 2)); err != nil {
			t.Fatal(err)
		}
		// A second Open (a second process) finds the schema in place and the data intact.
		b := mustOpen(t, dsn)
		if got := schemaVersions(t, b); !reflect.DeepEqual(got, wantVersions(b.Driver())) {
			t.Fatalf("after second open: schema_migrations = %v", got)
		}
		if got, err := b.FindAllocation(ctx, "r1"); err != nil || got.Host != "h1" || got.Slots != 2 {
			t.Fatalf("FindAllocation after reopen = %+v, %v", got, err)
		}
		// Reopen after closing everything.
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		c := mustOpen(t, dsn)
		if list, err := c.ListAllocations(ctx); err != nil || len(list) != 1 {
			t.Fatalf("ListAllocations after reopen = %v, %v", list, err)
		}
	})
}

// TestOpenFreshConcurrently opens a fresh store from many handles at the same moment, as several
// processes starting together would: each migration must be applied exactly once, none may fail.
func TestOpenFreshConcurrently(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		const n = 8
		dbs := make([]DB, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				dbs[i], errs[i] = Open(ctx, dsn, nil)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Open #%d: %v", i, err)
			}
			t.Cleanup(func() { _ = dbs[i].Close() })
		}
		if got := schemaVersions(t, dbs[0]); !reflect.DeepEqual(got, wantVersions(dbs[0].Driver())) {
			t.Fatalf("schema_migrations = %v", got)
		}
	})
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		db := mustOpen(t, dsn)
		rawExec(t, db, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', `+
			map[string]string{DriverSQLite: "0", DriverPostgres: "now()"}[db.Driver()]+`)`)
		_, err := Open(testContext(t), dsn, nil)
		if err == nil || !strings.Contains(err.Error(), "version 9999") || !strings.Contains(err.Error(), "upgrade") {
			t.Fatalf("Open of a store from the future: %v", err)
		}
	})
}

// fixed returns a PlaceFunc that always puts the resource on host with slots.
func fixed(host string, slots int) PlaceFunc {
	return func(*Allocation, map[string]int) (*Allocation, error) {
		return &Allocation{Provisioner: "static", Host: host, Slots: slots}, nil
	}
}

func TestAllocateFindListUsedDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		if !strings.HasSuffix(t.Name(), "/"+db.Driver()) {
			t.Fatalf("Driver() = %q in %s", db.Driver(), t.Name())
		}

		if used, err := db.UsedSlotsByHost(ctx); err != nil || len(used) != 0 {
			t.Fatalf("UsedSlotsByHost on empty ledger = %v, %v", used, err)
		}
		if list, err := db.ListAllocations(ctx); err != nil || len(list) != 0 {
			t.Fatalf("ListAllocations on empty ledger = %v, %v", list, err)
		}

		before := time.Now().Add(-time.Second)
		// Host names chosen so that byte order differs from a case-insensitive locale order.
		for _, a := range []struct {
			id, host string
			slots    int
		}{{"r3", "b-host", 1}, {"r1", "a-host", 2}, {"r2", "a-host", 3}, {"r4", "B-host", 4}, {"R5", "a-host", 0}} {
			got, err := db.Allocate(ctx, a.id, fixed(a.host, a.slots))
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceID != a.id || got.Host != a.host || got.Slots != a.slots || got.Provisioner != "static" {
				t.Fatalf("Allocate(%s) stored %+v", a.id, got)
			}
			if got.CreatedAt.Before(before) || !got.CreatedAt.Equal(got.UpdatedAt) || got.CreatedAt.Location() != time.UTC {
				t.Fatalf("Allocate(%s) timestamps %v / %v", a.id, got.CreatedAt, got.UpdatedAt)
			}
			found, err := db.FindAllocation(ctx, a.id)
			if err != nil || !reflect.DeepEqual(found, got) {
				t.Fatalf("FindAllocation(%s) = %+v, %v; want %+v", a.id, found, err, got)
			}
		}

		list, err := db.ListAllocations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, a := range list {
			order = append(order, a.Host+"/"+a.ResourceID)
		}
		if want := []string{"B-host/r4", "a-host/R5", "a-host/r1", "a-host/r2", "b-host/r3"}; !reflect.DeepEqual(order, want) {
			t.Fatalf("ListAllocations order = %v, want %v", order, want)
		}

		used, err := db.UsedSlotsByHost(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"a-host": 5, "b-host": 1, "B-host": 4}; !reflect.DeepEqual(used, want) {
			t.Fatalf("UsedSlotsByHost = %v, want %v", used, want)
		}

		deleted, err := db.DeleteAllocation(ctx, "r2")
		if err != nil || !deleted {
			t.Fatalf("DeleteAllocation(r2) = %v, %v", deleted, err)
		}
		if _, err := db.FindAllocation(ctx, "r2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("FindAllocation after delete: %v", err)
		}
		if used, _ := db.UsedSlotsByHost(ctx); used["a-host"] != 2 {
			t.Fatalf("UsedSlotsByHost after delete = %v", used)
		}
		deleted, err = db.DeleteAllocation(ctx, "r2")
		if err != nil || deleted {
			t.Fatalf("second DeleteAllocation(r2) = %v, %v; want false, nil", deleted, err)
		}
	})
}

func TestMissing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		if a, err := db.FindAllocation(ctx, "nope"); !errors.Is(err, ErrNotFound) || a != nil {
			t.Fatalf("FindAllocation(missing) = %v, %v; want ErrNotFound", a, err)
		}
		if deleted, err := db.DeleteAllocation(ctx, "nope"); err != nil || deleted {
			t.Fatalf("DeleteAllocation(missing) = %v, %v; want false, nil", deleted, err)
		}
	})
}

func TestUpsertKeepsCreatedAt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		first, err := db.Allocate(ctx, "r1", fixed("h1", 2))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Allocate(ctx, "other", fixed("h2", 5)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)

		var sawCurrent *Allocation
		var sawUsed map[string]int
		second, err := db.Allocate(ctx, "r1", func(current *Allocation, used map[string]int) (*Allocation, error) {
			sawCurrent, sawUsed = current, used
			// A different ResourceID from place is ignored: the allocation is stored under "r1".
			return &Allocation{ResourceID: "ignored", Provisioner: "static2", Host: "h2", Slots: 3}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sawCurrent, first) {
			t.Errorf("place saw current %+v, want %+v", sawCurrent, first)
		}
		if want := map[string]int{"h1": 2, "h2": 5}; !reflect.DeepEqual(sawUsed, want) {
			t.Errorf("place saw used %v, want %v (including the current allocation)", sawUsed, want)
		}
		if second.ResourceID != "r1" || second.Host != "h2" || second.Slots != 3 || second.Provisioner != "static2" {
			t.Fatalf("updated allocation = %+v", second)
		}
		if !second.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("created_at changed on update: %v -> %v", first.CreatedAt, second.CreatedAt)
		}
		if !second.UpdatedAt.After(first.UpdatedAt) {
			t.Errorf("updated_at not advanced: %v -> %v", first.UpdatedAt, second.UpdatedAt)
		}
		if _, err := db.FindAllocation(ctx, "ignored"); !errors.Is(err, ErrNotFound) {
			t.Errorf("an allocation was stored under the PlaceFunc's ResourceID: %v", err)
		}
		if used, _ := db.UsedSlotsByHost(ctx); !reflect.DeepEqual(used, map[string]int{"h2": 8}) {
			t.Errorf("UsedSlotsByHost = %v", used)
		}
		if list, _ := db.ListAllocations(ctx); len(list) != 2 {
			t.Errorf("ListAllocations has %d entries, want 2", len(list))
		}
	})
}

// An allocation that a new holder takes over (a named runtime's create adopting what is at its ID)
// gets a new created_at, which tells that holder's claim from the earlier one's: the static
// provisioner records it, and the destroy of an earlier holder (a create_before_destroy replacement
// interrupted before it destroyed the old instance) then leaves the runtime to the new one.
// allocateThenTakeOver allocates id, then gives the allocation a new holder (Allocation.NewHolder) a
// little later, as a create adopting a named runtime does; it returns both allocations.
func allocateThenTakeOver(t *testing.T, db DB, id string) (first, taken *Allocation) {
	t.Helper()
	ctx := testContext(t)
	first, err := db.Allocate(ctx, id, fixed("h1", 2))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the ledger's timestamps are microseconds
	taken, err = db.Allocate(ctx, id, func(current *Allocation, _ map[string]int) (*Allocation, error) {
		next := *current
		next.NewHolder = true
		return &next, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return first, taken
}

func TestUpsertGivesANewHolderANewCreatedAt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		first, taken := allocateThenTakeOver(t, db, "r1")
		if !taken.CreatedAt.After(first.CreatedAt) || !taken.CreatedAt.Equal(taken.UpdatedAt) {
			t.Fatalf("a new holder's created_at: %v after %v (updated_at %v), want the write's time", taken.CreatedAt, first.CreatedAt, taken.UpdatedAt)
		}
		time.Sleep(2 * time.Millisecond)
		resized, err := db.Allocate(ctx, "r1", func(current *Allocation, _ map[string]int) (*Allocation, error) {
			next := *current
			next.Slots = 3
			return &next, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !resized.CreatedAt.Equal(taken.CreatedAt) {
			t.Errorf("an update of the holder changed created_at: %v -> %v", taken.CreatedAt, resized.CreatedAt)
		}
		if found, err := db.FindAllocation(ctx, "r1"); err != nil || !found.CreatedAt.Equal(taken.CreatedAt) {
			t.Errorf("FindAllocation = %+v, %v; want created_at %v", found, err, taken.CreatedAt)
		}
	})
}

// A destroy deletes a claimed allocation only while it still carries the holder's created_at: the
// check and the delete are one statement, so a new holder's write (a create adopting the runtime in
// another workspace) keeps it whenever it lands. The claim is given as the static provisioner records
// it, Unix microseconds, and in another time zone, so that the comparison is of the instant.
func TestDeleteAllocationClaimedAtKeepsAnAllocationThatHasANewHolder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		claimOf := func(a *Allocation) time.Time {
			return time.UnixMicro(a.CreatedAt.UnixMicro()).In(time.FixedZone("UTC+5", 5*3600))
		}
		first, taken := allocateThenTakeOver(t, db, "r1")

		deleted, err := db.DeleteAllocationClaimedAt(ctx, "r1", claimOf(first))
		var nh *NewHolderError
		if deleted || !errors.As(err, &nh) || !errors.Is(err, ErrNewHolder) || !nh.Current.CreatedAt.Equal(taken.CreatedAt) || nh.Current.Name != taken.Name {
			t.Fatalf("the earlier holder's delete = %v, %v; want a *NewHolderError with the allocation's created_at %v", deleted, err, taken.CreatedAt)
		}
		if found, err := db.FindAllocation(ctx, "r1"); err != nil || !found.CreatedAt.Equal(taken.CreatedAt) {
			t.Fatalf("after the earlier holder's delete: %+v, %v; want the new holder's allocation kept", found, err)
		}

		if _, err := mustOpenReadOnly(t, dsn).DeleteAllocationClaimedAt(ctx, "r1", claimOf(taken)); !errors.Is(err, ErrReadOnly) {
			t.Errorf("DeleteAllocationClaimedAt on a read-only handle = %v, want ErrReadOnly", err)
		}

		if deleted, err := db.DeleteAllocationClaimedAt(ctx, "r1", claimOf(taken)); err != nil || !deleted {
			t.Fatalf("the holder's delete = %v, %v; want true, nil", deleted, err)
		}
		if _, err := db.FindAllocation(ctx, "r1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after the holder's delete: %v, want ErrNotFound", err)
		}
		// Gone already is success, as for DeleteAllocation.
		if deleted, err := db.DeleteAllocationClaimedAt(ctx, "r1", claimOf(taken)); err != nil || deleted {
			t.Fatalf("a second delete = %v, %v; want false, nil", deleted, err)
		}
	})
}

type placeError struct{ reason string }

func (e *placeError) Error() string { return "placement refused: " + e.reason }

func TestPlaceErrorRollsBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		orig, err := db.Allocate(ctx, "r1", fixed("h1", 2))
		if err != nil {
			t.Fatal(err)
		}

		sentinel := errors.New("sentinel")
		want := fmt.Errorf("wrapped: %w", &placeError{reason: "full"})
		for _, tc := range []struct {
			id  string
			err error
		}{{"r1", want}, {"new", want}, {"new", sentinel}, {"new", context.Canceled}} {
			got, err := db.Allocate(ctx, tc.id, func(*Allocation, map[string]int) (*Allocation, error) { return nil, tc.err })
			if got != nil || err != tc.err { //nolint:errorlint // identity is the point
				t.Fatalf("Allocate(%s) = %v, %v; want the PlaceFunc's error %v itself", tc.id, got, err, tc.err)
			}
		}
		_, err = db.Allocate(ctx, "r1", func(*Allocation, map[string]int) (*Allocation, error) { return nil, want })
		var pe *placeError
		if !errors.As(err, &pe) || pe.reason != "full" {
			t.Fatalf("errors.As on place error: %v", err)
		}

		// Nothing changed.
		if got, err := db.FindAllocation(ctx, "r1"); err != nil || !reflect.DeepEqual(got, orig) {
			t.Fatalf("r1 after failed update = %+v, %v; want %+v", got, err, orig)
		}
		if _, err := db.FindAllocation(ctx, "new"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("failed allocation was stored: %v", err)
		}

		// Invalid results and arguments are refused with ErrInvalidAllocation, changing nothing.
		for name, place := range map[string]PlaceFunc{
			"nil allocation": func(*Allocation, map[string]int) (*Allocation, error) { return nil, nil },
			"empty host":     fixed("", 1),
			"negative slots": fixed("h1", -1),
		} {
			if _, err := db.Allocate(ctx, "r1", place); !errors.Is(err, ErrInvalidAllocation) {
				t.Errorf("%s: err = %v, want ErrInvalidAllocation", name, err)
			}
		}
		if _, err := db.Allocate(ctx, "", fixed("h1", 1)); !errors.Is(err, ErrInvalidAllocation) {
			t.Errorf("empty resource ID: err = %v", err)
		}
		if _, err := db.Allocate(ctx, "x", nil); !errors.Is(err, ErrInvalidAllocation) {
			t.Errorf("nil PlaceFunc: err = %v", err)
		}
		if got, err := db.FindAllocation(ctx, "r1"); err != nil || !reflect.DeepEqual(got, orig) {
			t.Fatalf("r1 after invalid updates = %+v, %v; want %+v", got, err, orig)
		}

		// A panicking PlaceFunc rolls back too, and the ledger stays usable.
		func() {
			defer func() { _ = recover() }()
			_, _ = db.Allocate(ctx, "r1", func(*Allocation, map[string]int) (*Allocation, error) { panic("boom") })
		}()
		if _, err := db.Allocate(ctx, "r2", fixed("h1", 1)); err != nil {
			t.Fatalf("Allocate after a panicking PlaceFunc: %v", err)
		}
	})
}

func TestCanceledContext(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		db := mustOpen(t, dsn)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		called := false
		_, err := db.Allocate(ctx, "r1", func(*Allocation, map[string]int) (*Allocation, error) {
			called = true
			return &Allocation{Host: "h", Slots: 1}, nil
		})
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Allocate with canceled context: %v (place called: %v)", err, called)
		}
		if _, err := db.FindAllocation(testContext(t), "r1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("allocation stored despite canceled context: %v", err)
		}
	})
}

// TestOpenErrorsHidePassword checks that a DSN's password appears in no error, against a real
// server that rejects the connection.
func TestOpenErrorsHidePassword(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	forEachBackend(t, func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "postgres") {
			t.Skip("SQLite DSNs carry no password")
		}
		// Same server, a database that does not exist, a password.
		bad := strings.Replace(dsn, "postgres@", "postgres:"+secret+"@", 1)
		bad = bad[:strings.LastIndex(bad, "/")+1] + "no_such_db?sslmode=disable&password=" + secret
		_, err := Open(testContext(t), bad, nil)
		if err == nil {
			t.Fatal("Open of a missing database succeeded")
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error leaks the password: %v", err)
		}
		t.Logf("error: %v", err)
		// A DSN pgx cannot parse.
		_, err = Open(testContext(t), "postgres://u:"+secret+"@h:notaport/db", nil)
		if err == nil || strings.Contains(err.Error(), secret) || !errors.Is(err, ErrInvalidDSN) {
			t.Fatalf("unparsable DSN error = %v", err)
		}
	})
}
