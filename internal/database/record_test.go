package database

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// An allocation's name and runtime record round-trip through both backends, updates replace them, and
// a name is unique per provisioner (another provisioner may use it).
func TestAllocationNameAndRecordRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		rec := &RuntimeRecord{Version: "v0.50.1", Hibernated: true, Environment: "dev",
			Annotations: map[string]string{"organization_name": "acme", "quote": `"; DROP TABLE allocations; --`}}
		put := func(id string, a Allocation) (*Allocation, error) {
			return db.Allocate(ctx, id, func(*Allocation, map[string]int) (*Allocation, error) { return &a, nil })
		}
		got, err := put("r1", Allocation{Provisioner: "pool", Host: "h1", Slots: 1, Name: "orders", Runtime: rec})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "orders" || !reflect.DeepEqual(got.Runtime, rec) {
			t.Fatalf("stored name %q record %+v, want orders %+v", got.Name, got.Runtime, rec)
		}
		found, err := db.FindAllocation(ctx, "r1")
		if err != nil || !reflect.DeepEqual(found, got) {
			t.Fatalf("FindAllocation = %+v, %v; want %+v", found, err, got)
		}

		// An update replaces the record; a record with no annotations reads back as an empty map.
		got, err = put("r1", Allocation{Provisioner: "pool", Host: "h1", Slots: 2, Name: "orders", Runtime: &RuntimeRecord{Version: "v2"}})
		if err != nil {
			t.Fatal(err)
		}
		if want := (&RuntimeRecord{Version: "v2", Annotations: map[string]string{}}); !reflect.DeepEqual(got.Runtime, want) {
			t.Fatalf("updated record %+v, want %+v", got.Runtime, want)
		}

		// The same name for another ID of the same provisioner is refused; nothing is written.
		_, err = put("r2", Allocation{Provisioner: "pool", Host: "h1", Slots: 1, Name: "orders"})
		if !errors.Is(err, ErrNameTaken) || !strings.Contains(err.Error(), `"orders"`) {
			t.Fatalf("second resource named orders: %v, want ErrNameTaken naming it", err)
		}
		if _, err := db.FindAllocation(ctx, "r2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a refused allocation was stored: %v", err)
		}
		// Another provisioner may use the name, and any number of resources may have none.
		for _, a := range []struct {
			id string
			a  Allocation
		}{
			{"r3", Allocation{Provisioner: "other", Host: "h1", Slots: 1, Name: "orders"}},
			{"r4", Allocation{Provisioner: "pool", Host: "h1", Slots: 1}},
			{"r5", Allocation{Provisioner: "pool", Host: "h1", Slots: 1}},
		} {
			if _, err := put(a.id, a.a); err != nil {
				t.Fatalf("%s: %v", a.id, err)
			}
		}
		if found, _ := db.FindAllocation(ctx, "r4"); found.Name != "" || found.Runtime != nil {
			t.Fatalf("an allocation without name or record reads back as %q %+v", found.Name, found.Runtime)
		}
	})
}

// A ledger written by schema version 1 migrates in place: its rows keep their allocation and read back
// with no name and no runtime record (unknown, not empty).
func TestVersionOneLedgerMigrates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		driver := DriverPostgres
		if strings.HasPrefix(dsn, "sqlite://") {
			driver = DriverSQLite
		}
		writeVersionOneStore(t, ctx, driver, dsn)
		db := mustOpen(t, dsn)
		if got := schemaVersions(t, db); !reflect.DeepEqual(got, wantVersions(driver)) {
			t.Fatalf("schema versions after open = %v", got)
		}
		a, err := db.FindAllocation(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		if a.Host != "h1" || a.Slots != 2 || a.Provisioner != "pool" || a.Name != "" || a.Runtime != nil {
			t.Fatalf("migrated row = %+v (record %+v)", a, a.Runtime)
		}
	})
}

// writeVersionOneStore creates the store at dsn as migration 1 left it, with one allocation.
func writeVersionOneStore(t *testing.T, ctx context.Context, driver, dsn string) {
	t.Helper()
	ms, err := loadMigrations(driver)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if driver == DriverSQLite {
		db, err := sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite://"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = db.Close() }()
		for _, q := range []string{
			ms[0].SQL,
			`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (1, ?, ?)`, ms[0].Name, now.UnixMicro()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO allocations VALUES ('old', 'pool', 'h1', 2, ?, ?)`, now.UnixMicro(), now.UnixMicro()); err != nil {
			t.Fatal(err)
		}
		return
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, q := range []string{
		ms[0].SQL,
		`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (1, $1)`, ms[0].Name); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO allocations VALUES ('old', 'pool', 'h1', 2, $1, $1)`, now); err != nil {
		t.Fatal(err)
	}
}
