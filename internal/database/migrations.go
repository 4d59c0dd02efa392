package database

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Schema migrations live in migrations/<driver>/NNNN_description.sql, numbered from 1 without gaps.
// Open applies the missing ones in order, each in the same exclusive transaction that reads the
// schema_migrations table (SQLite: BEGIN IMMEDIATE; PostgreSQL: pg_advisory_xact_lock), so two
// processes opening a fresh store at the same moment apply each migration exactly once.
//
// Migrations are append-only: never edit one that has shipped, add a new file instead. A store
// migrated by a newer provider (a version this binary does not know) is refused rather than used.

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// migration is one versioned schema change.
type migration struct {
	Version int
	Name    string // file name without directory
	SQL     string
}

// loadMigrations returns the migrations of a driver ("sqlite" or "postgres"), ordered by version.
func loadMigrations(driver string) ([]migration, error) {
	dir := path.Join("migrations", driver)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", driver, err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must look like NNNN_description.sql", driver, e.Name())
		}
		b, err := migrationFS.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations for %s: expected version %d, found %s", driver, i+1, m.Name)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("migrations for %s: none found", driver)
	}
	return ms, nil
}

// pendingMigrations returns the migrations not yet recorded in applied (the versions found in
// schema_migrations). It refuses a store that records a version this binary does not know.
func pendingMigrations(all []migration, applied map[int]bool) ([]migration, error) {
	latest := all[len(all)-1].Version
	for v := range applied {
		if v > latest {
			return nil, fmt.Errorf("ledger schema is at version %d but this provider only knows up to version %d; "+
				"upgrade terraform-provider-rill", v, latest)
		}
	}
	var pending []migration
	for _, m := range all {
		if !applied[m.Version] {
			pending = append(pending, m)
		}
	}
	return pending, nil
}

// latestSchemaVersion is the schema version this binary migrates stores to.
func latestSchemaVersion(driver string) int {
	ms, err := loadMigrations(driver)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
