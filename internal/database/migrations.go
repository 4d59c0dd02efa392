package database

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/hosturl"
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
	// Step, when set, is the migration's Go part (see goSteps).
	Step goStep
}

// goStep is the Go part of a migration, for a change SQL cannot express portably (such as URL
// canonicalization). It runs right after the migration's SQL, in the same transaction, so that the
// version is recorded only when both succeeded.
type goStep func(ctx context.Context, tx stepTx) error

// stepTx is what a Go step may do inside the migration's transaction; each backend adapts its own.
type stepTx interface {
	// queryStrings returns the first column of the rows of a query.
	queryStrings(ctx context.Context, query string) ([]string, error)
	// exec runs one statement whose placeholders are written "?".
	exec(ctx context.Context, stmt string, args ...any) error
}

// migrationTx is a backend's open migration transaction, as applyMigrations drives it.
type migrationTx interface {
	stepTx
	// script runs a migration's SQL as it is: several statements, no placeholders.
	script(ctx context.Context, sql string) error
	// record writes m's row in schema_migrations.
	record(ctx context.Context, m migration) error
}

// applyMigrations applies pending in order inside tx, under the lock that makes the caller the only
// migrator: each migration's SQL, then its Go step, then its row in schema_migrations, so that a
// version is recorded only with all of its parts. An error names the migration; the caller rolls
// back, commits otherwise, and then logs what it applied (logMigrated).
func applyMigrations(ctx context.Context, tx migrationTx, pending []migration) error {
	for _, m := range pending {
		if err := tx.script(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if m.Step != nil {
			if err := m.Step(ctx, tx); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		if err := tx.record(ctx, m); err != nil {
			return fmt.Errorf("record migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// logMigrated logs each migration a committed transaction applied.
func logMigrated(logger *zap.Logger, applied []migration) {
	for _, m := range applied {
		logger.Info("ledger schema migrated", zap.Int("version", m.Version), zap.String("migration", m.Name))
	}
}

// goSteps holds the Go part of migrations by description (the file name without its number and
// ".sql"), so that renumbering a migration before it ships only renames its files.
var goSteps = map[string]goStep{
	"canonical_hosts": canonicalizeHosts,
}

// canonicalizeHosts rewrites every allocation's host in canonical form (hosturl.Canonical): the static
// pool compares and records hosts so from now on, and rows in another spelling would be another host.
// A host that does not parse is left as it is.
func canonicalizeHosts(ctx context.Context, tx stepTx) error {
	hosts, err := tx.queryStrings(ctx, `SELECT DISTINCT host FROM allocations`)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		c, err := hosturl.Canonical(h)
		if err != nil || c == h {
			continue
		}
		if err := tx.exec(ctx, `UPDATE allocations SET host = ? WHERE host = ?`, c, h); err != nil {
			return fmt.Errorf("host %q -> %q: %w", h, c, err)
		}
	}
	return nil
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
		ms = append(ms, migration{Version: v, Name: e.Name(), SQL: string(b), Step: goSteps[migrationDescription(e.Name())]})
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

// migrationDescription returns "canonical_hosts" for "0002_canonical_hosts.sql".
func migrationDescription(name string) string {
	_, desc, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
	return desc
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
