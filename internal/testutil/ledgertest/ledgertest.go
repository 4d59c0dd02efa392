// Package ledgertest opens real ledgers for tests. It is the one home of that step for every package
// whose tests need a ledger handle, including internal/static and internal/resources, which cannot
// import internal/acctest (it imports them).
package ledgertest

import (
	"context"
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
