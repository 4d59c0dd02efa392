package database

import (
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// TestPostgresLeastPrivilege: once the schema is in place, a role that may only read and write the
// ledger's rows (no CREATE on the schema) can open and use it.
func TestPostgresLeastPrivilege(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	admin := mustOpen(t, dsn)
	role := fmt.Sprintf("ledger_user_%d", os.Getpid())
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON allocations TO ` + role,
		`GRANT SELECT ON schema_migrations, ledger_meta TO ` + role,
	} {
		rawExec(t, admin, q)
	}
	t.Cleanup(func() {
		p := admin.(*postgresDB).pool
		_, _ = p.Exec(ctx, `DROP OWNED BY `+role)
		_, _ = p.Exec(ctx, `DROP ROLE `+role)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db := mustOpen(t, u.String())
	if _, err := db.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.DeleteAllocation(ctx, "r1"); err != nil || !ok {
		t.Fatalf("DeleteAllocation = %v, %v", ok, err)
	}
}
