package database

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// A ledger an older provider left, at every schema version before this binary's, is read by a
// read-only handle as it is (plan migrates nothing): an allocation, the list and the slots in use per
// host read back, the columns the version lacks as unknown (no name, no runtime record), the totals
// summed from the allocations where it keeps none. The first write Open then migrates it, and the
// read-only handle opened before still reads it (another process's apply migrated it meanwhile).
func TestAReadOnlyHandleReadsALedgerAtEveryOlderSchemaVersion(t *testing.T) {
	for _, b := range backends() {
		for version := 1; version < latestSchemaVersion(b.name); version++ {
			t.Run(fmt.Sprintf("%s/version_%d", b.name, version), func(t *testing.T) {
				ctx := testContext(t)
				dsn := b.newDSN(t)
				driver, now := storeDriver(dsn)
				var rows []string
				for _, r := range []struct {
					id, host string
					slots    int
				}{{"r1", "http://h1:9091", 2}, {"r2", "http://h1:9091", 1}, {"r3", "http://h2:9091", 4}} {
					rows = append(rows, fmt.Sprintf(`INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at)
						VALUES ('%s', 'pool', '%s', %d, %s, %s)`, r.id, r.host, r.slots, now, now))
				}
				storeAtVersion(t, driver, dsn, version, rows...)

				ro := mustOpenReadOnly(t, dsn)
				wantUsed := map[string]int{"http://h1:9091": 3, "http://h2:9091": 4}
				check := func(when string) {
					t.Helper()
					a, err := ro.FindAllocation(ctx, "r1")
					if err != nil || a.Host != "http://h1:9091" || a.Slots != 2 || a.Provisioner != "pool" || a.Name != "" || a.Runtime != nil {
						t.Fatalf("%s: FindAllocation = %+v, %v", when, a, err)
					}
					if _, err := ro.FindAllocation(ctx, "r9"); !errors.Is(err, ErrNotFound) {
						t.Fatalf("%s: FindAllocation of no allocation = %v, want ErrNotFound", when, err)
					}
					if list, err := ro.ListAllocations(ctx); err != nil || len(list) != 3 || list[2].ResourceID != "r3" {
						t.Fatalf("%s: ListAllocations = %v, %v", when, list, err)
					}
					if used, err := ro.UsedSlotsByHost(ctx); err != nil || !reflect.DeepEqual(used, wantUsed) {
						t.Fatalf("%s: UsedSlotsByHost = %v, %v; want %v", when, used, err, wantUsed)
					}
					if _, err := ro.Identity(ctx); err != nil {
						t.Fatalf("%s: Identity: %v", when, err)
					}
				}
				check("before the migration")
				if got := schemaVersions(t, ro); len(got) != version {
					t.Fatalf("the read-only handle migrated the ledger: schema_migrations = %v", got)
				}

				rw := mustOpen(t, dsn)
				if got := schemaVersions(t, rw); len(got) != latestSchemaVersion(driver) {
					t.Fatalf("the write open did not migrate the ledger: schema_migrations = %v", got)
				}
				check("after another handle migrated it")
				if used, err := rw.UsedSlotsByHost(ctx); err != nil || !reflect.DeepEqual(used, wantUsed) {
					t.Fatalf("UsedSlotsByHost after the migration = %v, %v; want %v", used, err, wantUsed)
				}
			})
		}
	}
}

// The migrations readQueriesAt keys on exist on both backends: a renamed one would make a read-only
// handle read an older store with queries that name what it lacks.
func TestReadsKnowTheirMigrations(t *testing.T) {
	for _, driver := range []string{DriverSQLite, DriverPostgres} {
		all := mustLoad(t, driver)
		for _, desc := range []string{migrationRecordColumns, migrationHostUsage} {
			if versionOf(all, desc) == 0 {
				t.Errorf("%s: no migration NNNN_%s.sql", driver, desc)
			}
		}
	}
}

// latestSchemaVersion is the schema version this binary migrates stores to (0 when its migrations do
// not load: the tests that read it then fail on the versions they find).
func latestSchemaVersion(driver string) int {
	ms, err := loadMigrations(driver)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
