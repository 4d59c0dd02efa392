// Package ledgertest opens real ledgers for tests. It is the one home of that step for every package
// whose tests need a ledger handle, including internal/static and internal/resources, which cannot
// import internal/acctest (it imports them).
package ledgertest

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// Open opens (creating and migrating it when needed) the ledger at dsn for one test, and closes it
// when the test ends.
func Open(t testing.TB, dsn string) database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatalf("opening the ledger %s: %v", database.Redact(dsn), err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// HoldSQLiteWriteLock begins a write transaction (BEGIN IMMEDIATE) on the SQLite file at path through
// a connection of its own: to the provider processes, another process's writer holding the file's
// write lock until the returned transaction ends (at the latest when the test does).
func HoldSQLiteWriteLock(t testing.TB, path string) *sql.Tx {
	t.Helper()
	raw, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: "_txlock=immediate"}).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}
