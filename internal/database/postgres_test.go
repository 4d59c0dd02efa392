package database

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"testing"
	"time"

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

// A ledger call queued behind a lock that another session holds (another terraform apply on another
// runner, stuck in its transaction) ends at its context's deadline, on the read-only handle a plan
// uses and on the write handle alike, with an error that says it waited for the ledger, how long, and
// why it stopped; and the server stops waiting with it: no statement of ours stays queued for the lock.
func TestPostgresLockedLedgerEndsAtTheDeadline(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := testContext(t)
	writer := mustOpen(t, dsn)
	if _, err := writer.Allocate(ctx, "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	reader, err := OpenReadOnly(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	pgtest.LockTables(t, dsn, "allocations", "host_usage")

	calls := []struct {
		op   string
		call func(ctx context.Context) error
	}{
		{"list allocations", func(ctx context.Context) error { _, err := reader.ListAllocations(ctx); return err }},
		{"used slots", func(ctx context.Context) error { _, err := reader.UsedSlotsByHost(ctx); return err }},
		{`find allocation "r1"`, func(ctx context.Context) error { _, err := writer.FindAllocation(ctx, "r1"); return err }},
		{`delete allocation "r1"`, func(ctx context.Context) error { _, err := writer.DeleteAllocation(ctx, "r1"); return err }},
		{`allocate "r2"`, func(ctx context.Context) error { _, err := writer.Allocate(ctx, "r2", fixed("h1", 1)); return err }},
	}
	for _, c := range calls {
		t.Run(c.op, func(t *testing.T) {
			opCtx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.call(opCtx) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s has not returned a minute after its 1s deadline", c.op)
			}
			var waited *WaitError
			if !errors.As(err, &waited) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s on a locked ledger: got %v, want a *WaitError wrapping the deadline", c.op, err)
			}
			// The wait is rounded to 100 ms, and a loaded machine may wake the waiter any time after the
			// second: no upper bound, which would flake.
			want := regexp.MustCompile("^" + regexp.QuoteMeta(fmt.Sprintf("ledger %s: %s: waited ", Redact(dsn), c.op)) + `[1-9][0-9]*(\.[0-9])?s` +
				regexp.QuoteMeta(" for the ledger to answer, until the operation's deadline "+
					"(a lock that another session holds, such as another terraform apply, or a server that stopped answering)"))
			if !want.MatchString(err.Error()) {
				t.Errorf("the error\n%s\ndoes not match\n%s", err, want)
			}
		})
	}
	// The server gave up with the client: no backend of the ledger's still waits for the lock.
	admin := mustOpen(t, dsn).(*postgresDB)
	var waiting int
	for range 100 {
		if err := admin.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'terraform-provider-rill' AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%d statements of the ledger's still wait for the lock after their callers gave up", waiting)
}
