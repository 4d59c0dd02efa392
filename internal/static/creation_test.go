package static

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgerbarrier"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Two Provisions of one named runtime at the same instant, each through a handle of its own on one
// ledger (as two terraform processes hold): exactly one reports that it created the allocation; the
// other adopted it. The barrier holds both calls at the ledger's Allocate until both are there, so
// whatever either does before it claims the ID (a read of the ledger, say) is done by both before
// either writes: a "created" decided before the claim would be reported by both.
func TestConcurrentProvisionsOfOneNameReportOneCreation(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		database.DriverSQLite:   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "ledger.db") },
		database.DriverPostgres: func(t *testing.T) string { return pgtest.Shared(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ledger := dsn(t)
			barrier := ledgerbarrier.New(2)
			id := provisioner.NamedResourceID("pool", "orders")
			var wg sync.WaitGroup
			var created [2]bool
			var results [2]*provisioner.Resource
			var errs [2]error
			for i := range created {
				p := poolOn(t, ledger, barrier)
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], created[i], errs[i] = p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 1))
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("provision %d: %v", i, err)
				}
			}
			if !barrier.Passed() {
				t.Fatal("the two provisions never waited for each other at the ledger")
			}
			if created[0] == created[1] {
				t.Fatalf("created = %v: exactly one of two provisions of one ID may have created it", created)
			}
			if hostOf(results[0]) != hostOf(results[1]) {
				t.Fatalf("the two provisions report hosts %s and %s for one runtime", hostOf(results[0]), hostOf(results[1]))
			}
			db := ledgertest.Open(t, ledger)
			if all, err := db.ListAllocations(ctx); err != nil || len(all) != 1 {
				t.Fatalf("ledger holds %d allocations (err %v), want the one runtime's", len(all), err)
			}

			// Once it exists, a Provision of it creates nothing.
			p := poolOn(t, ledger, nil)
			if _, again, err := p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 1)); err != nil || again {
				t.Fatalf("a third provision of the runtime reported created=%v (err %v), want false", again, err)
			}
		})
	}
}

// A Provision that fails before it claims the ID (no host has room) reports that it created nothing,
// and one that fails on what holds the ID (another name's allocation) too.
func TestFailedProvisionReportsNothingCreated(t *testing.T) {
	ctx := context.Background()
	p, _, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 1}]}`)
	p.SetName("pool")
	id := provisioner.NamedResourceID("pool", "orders")
	if _, created, err := p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 2)); err == nil || created {
		t.Fatalf("a provision with no room: created=%v err=%v, want false and an error", created, err)
	}
	if _, created, err := p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 1)); err != nil || !created {
		t.Fatalf("the first provision that fits: created=%v err=%v, want true", created, err)
	}
	if _, created, err := p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("invoices", 1)); err == nil || created {
		t.Fatalf("a provision at an ID another name holds: created=%v err=%v, want false and a conflict", created, err)
	}
}

// poolOn is a static pool named "pool" of two hosts on a handle of its own on the ledger at dsn, its
// Allocate calls held at barrier (when not nil).
func poolOn(t *testing.T, dsn string, barrier *ledgerbarrier.Barrier) *Provisioner {
	t.Helper()
	db := ledgertest.Open(t, dsn)
	if barrier != nil {
		db = barrier.Wrap(db)
	}
	p, err := New([]byte(twoHosts), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.(*Provisioner).SetName("pool")
	return p.(*Provisioner)
}
