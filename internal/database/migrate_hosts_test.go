package database

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// storeAtVersion creates the store behind dsn as a provider that knew migrations 1..version left it
// (their SQL and Go steps, in one transaction as Open runs them), and runs stmts on it (old rows),
// without going through Open.
func storeAtVersion(t *testing.T, driver, dsn string, version int, stmts ...string) {
	t.Helper()
	ctx := testContext(t)
	all, err := loadMigrations(driver)
	if err != nil {
		t.Fatal(err)
	}
	var exec func(string, ...any) error
	var step stepTx
	var commit func() error
	switch driver {
	case DriverSQLite:
		path, err := sqlitePathFromDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = db.Close() }()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		exec = func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err }
		step, commit = sqliteMigrationTx{tx}, tx.Commit
		if err := exec(`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
			t.Fatal(err)
		}
	case DriverPostgres:
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		exec = func(q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err }
		step, commit = pgMigrationTx{tx}, func() error { return tx.Commit(ctx) }
		if err := exec(`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range all[:version] {
		if err := exec(m.SQL); err != nil {
			t.Fatalf("migration %s: %v", m.Name, err)
		}
		if m.Step != nil {
			if err := m.Step(ctx, step); err != nil {
				t.Fatalf("migration %s: %v", m.Name, err)
			}
		}
		q := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)`
		if driver == DriverPostgres {
			q = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
		}
		if err := exec(q, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range stmts {
		if err := exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
}

// storeDriver returns the driver of a test DSN, and its SQL for "now" in an allocation's timestamps.
func storeDriver(dsn string) (driver, now string) {
	if strings.HasPrefix(dsn, "sqlite") {
		return DriverSQLite, "0"
	}
	return DriverPostgres, "now()"
}

// A ledger written before hosts were canonical gets its hosts rewritten by the canonical_hosts
// migration when a newer provider opens it: three spellings of one host become one host, whose used
// slots add up; a host that does not parse is left alone.
func TestMigrationCanonicalizesExistingHosts(t *testing.T) {
	version := 0
	for _, m := range mustLoad(t, DriverSQLite) {
		if migrationDescription(m.Name) == "canonical_hosts" {
			version = m.Version
		}
	}
	if version == 0 {
		t.Fatal("no canonical_hosts migration")
	}
	forEachBackend(t, func(t *testing.T, dsn string) {
		driver, now := storeDriver(dsn)
		var rows []string
		for _, r := range [][2]string{{"r1", "http://H1:9091"}, {"r2", "http://h1:9091/."}, {"r3", "http://h1.:9091/"}, {"r4", "http://h2:80"}, {"r5", "not a url"}, {"r6", "http://h1:9091"}} {
			rows = append(rows, `INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at) VALUES ('`+r[0]+`', 'pool', '`+r[1]+`', 1, `+now+`, `+now+`)`)
		}
		storeAtVersion(t, driver, dsn, version-1, rows...)

		db := mustOpen(t, dsn)
		if got := schemaVersions(t, db); len(got) < version || got[version-1] != version {
			t.Fatalf("schema_migrations = %v", got)
		}
		used, err := db.UsedSlotsByHost(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(used) != 3 || used["http://h1:9091"] != 4 || used["http://h2"] != 1 || used["not a url"] != 1 {
			t.Fatalf("used slots by host after the migration: %v", used)
		}
		// A second open has nothing left to do and changes nothing.
		again := mustOpen(t, dsn)
		if used2, _ := again.UsedSlotsByHost(testContext(t)); len(used2) != 3 {
			t.Fatalf("after a second open: %v", used2)
		}
	})
}

// Every Go step belongs to a migration file of each backend, so none is silently skipped.
func TestGoStepsHaveMigrationFiles(t *testing.T) {
	for _, driver := range []string{DriverSQLite, DriverPostgres} {
		found := map[string]bool{}
		for _, m := range mustLoad(t, driver) {
			if m.Step != nil {
				found[migrationDescription(m.Name)] = true
			}
		}
		for desc := range goSteps {
			if !found[desc] {
				t.Errorf("%s: Go step %q has no migration file NNNN_%s.sql", driver, desc, desc)
			}
		}
	}
}

func mustLoad(t *testing.T, driver string) []migration {
	t.Helper()
	ms, err := loadMigrations(driver)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
