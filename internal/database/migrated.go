package database

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// MigrationMarks is what migrate-rill-static remembers of the runtimes it recorded from Rill's admin
// service, by resource ID, in the ledger's ledger_meta table ("rill-migrated:<resource ID>"): a mark
// outlives the allocation, so that a re-run of the command, reading Rill's table (which nothing
// updates once Rill stopped provisioning), does not record again a runtime Terraform destroyed
// since; it did, and the slots of runtimes that no longer existed were held by nothing in any state
// (found by a walkthrough of the migration guide). The SQLite and PostgreSQL ledgers implement it.
type MigrationMarks interface {
	// MarkMigrated records that resourceID was migrated (again: a no-op).
	MarkMigrated(ctx context.Context, resourceID string) error
	// Migrated reports whether resourceID was marked.
	Migrated(ctx context.Context, resourceID string) (bool, error)
}

var (
	_ MigrationMarks = (*sqliteDB)(nil)
	_ MigrationMarks = (*postgresDB)(nil)
)

// migratedKey is the ledger_meta key of a migrated resource.
func migratedKey(resourceID string) string { return "rill-migrated:" + resourceID }

func (s *sqliteDB) MarkMigrated(ctx context.Context, resourceID string) error {
	start := time.Now()
	if s.readOnly {
		return s.wrap(ctx, start, "mark "+strconv.Quote(resourceID)+" migrated", ErrReadOnly)
	}
	err := s.write(ctx, start, func() error {
		_, err := s.db.ExecContext(ctx, `INSERT INTO ledger_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
			migratedKey(resourceID), time.Now().UTC().Format(time.RFC3339))
		return err
	})
	return s.wrap(ctx, start, "mark "+strconv.Quote(resourceID)+" migrated", err)
}

func (s *sqliteDB) Migrated(ctx context.Context, resourceID string) (bool, error) {
	start := time.Now()
	var found bool
	err := s.read(ctx, func(q sqlQueryer) error {
		var v string
		err := q.QueryRowContext(ctx, sqliteMetaQuery, migratedKey(resourceID)).Scan(&v)
		found = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return found, s.wrap(ctx, start, "read the migration mark of "+strconv.Quote(resourceID), err)
}

func (p *postgresDB) MarkMigrated(ctx context.Context, resourceID string) error {
	if p.readOnly {
		return p.named("mark "+strconv.Quote(resourceID)+" migrated", ErrReadOnly)
	}
	start := time.Now()
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO ledger_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
			migratedKey(resourceID), time.Now().UTC().Format(time.RFC3339))
		return err
	})
	return p.wrap(ctx, start, "mark "+strconv.Quote(resourceID)+" migrated", err)
}

func (p *postgresDB) Migrated(ctx context.Context, resourceID string) (bool, error) {
	start := time.Now()
	var found bool
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) error {
		var v string
		err := tx.QueryRow(ctx, pgMetaQuery, migratedKey(resourceID)).Scan(&v)
		found = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	return found, p.wrap(ctx, start, "read the migration mark of "+strconv.Quote(resourceID), err)
}
