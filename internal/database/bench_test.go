package database

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/rusage"
)

// BenchmarkAllocate measures Allocate throughput: each op is one Allocate of a fresh resource ID
// (one slot, least-used of 4 hosts with room to spare), reported as allocs/s. writers=N runs N
// goroutines sharing one handle (a Terraform process with parallelism); handles=N gives each
// writer a handle of its own (N processes sharing the ledger); rows=N starts from a ledger that
// already holds N allocations (what the 5,001st runtime of a pool pays). PostgreSQL is skipped when
// pgtest cannot run a server. cpu-µs/op is this process's CPU time (user + system) per Allocate: for
// SQLite all of the ledger's work, with no wait for the disk in it; for PostgreSQL the client's share.
func BenchmarkAllocate(b *testing.B) {
	pool := map[string]int{"h1": 1 << 30, "h2": 1 << 30, "h3": 1 << 30, "h4": 1 << 30}
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			for _, c := range []struct {
				name                   string
				writers, handles, rows int
			}{
				{"writers=1", 1, 1, 0},
				{"writers=8", 8, 1, 0},
				{"writers=8,handles=8", 8, 8, 0},
				{"writers=1,rows=5000", 1, 1, 5000},
			} {
				b.Run(c.name, func(b *testing.B) {
					dsn := be.newDSN(b)
					dbs := make([]DB, c.handles)
					for i := range dbs {
						dbs[i] = mustOpen(b, dsn)
					}
					prefill(b, dbs[0], c.rows)
					// Warm up with every writer at once, so that connections are established (and
					// statements prepared) before the clock starts.
					warmup := make([]string, c.writers)
					for i := range warmup {
						warmup[i] = fmt.Sprintf("warmup-%d", i)
					}
					if _, _, err := allocateMany(context.Background(), dbs, warmup, placer(pool, 1, 0)); err != nil {
						b.Fatal(err)
					}
					place := placer(pool, 1, 0)
					var next atomic.Int64
					var failed atomic.Pointer[error]
					var wg sync.WaitGroup
					cpu0 := rusage.ProcessCPU(b)
					b.ResetTimer()
					for w := range c.writers {
						wg.Add(1)
						go func(db DB) {
							defer wg.Done()
							for {
								i := next.Add(1)
								if i > int64(b.N) || failed.Load() != nil {
									return
								}
								if _, err := db.Allocate(context.Background(), fmt.Sprintf("bench-%d", i), place); err != nil {
									failed.Store(&err)
									return
								}
							}
						}(dbs[w%c.handles])
					}
					wg.Wait()
					b.StopTimer()
					if e := failed.Load(); e != nil {
						b.Fatal(*e)
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
					b.ReportMetric(float64((rusage.ProcessCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
				})
			}
		})
	}
}

// prefill stores n one-slot allocations spread over the benchmark's 4 hosts, in one statement.
func prefill(b testing.TB, db DB, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	ctx := testContext(b)
	var err error
	switch d := db.(type) {
	case *sqliteDB:
		_, err = d.db.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
			INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at)
			SELECT 'prefill-' || i, 'static', 'h' || (1 + i % 4), 1, 0, 0 FROM s`, n)
	case *postgresDB:
		_, err = d.pool.Exec(ctx, `INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at)
			SELECT 'prefill-' || i, 'static', 'h' || (1 + i % 4), 1, now(), now() FROM generate_series(1, $1::int) AS i`, n)
	default:
		b.Fatalf("unknown DB type %T", db)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUsedSlotsByHost measures the read Allocate makes under the ledger's lock before every
// placement (the slots in use per host), on a ledger of rows=N allocations over 4 hosts: it should
// not grow with N.
func BenchmarkUsedSlotsByHost(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			for _, rows := range []int{200, 5000} {
				b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
					db := mustOpen(b, be.newDSN(b))
					prefill(b, db, rows)
					ctx := context.Background()
					b.ResetTimer()
					for range b.N {
						used, err := db.UsedSlotsByHost(ctx)
						if err != nil {
							b.Fatal(err)
						}
						if len(used) != 4 {
							b.Fatalf("UsedSlotsByHost = %v, want 4 hosts", used)
						}
					}
				})
			}
		})
	}
}

// BenchmarkSQLiteSnapshotRead measures a plan's read of a settled SQLite ledger that no writer has
// open: one FindAllocation through OpenReadOnly, which reads lock-free (readSnapshot: two stats, two
// lstats, a fresh immutable connection, the header check and the query).
func BenchmarkSQLiteSnapshotRead(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ledger.db")
	w := mustOpen(b, "sqlite://"+path)
	prefill(b, w, 100)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	ro := mustOpenReadOnly(b, "sqlite://"+path)
	for b.Loop() {
		if _, err := ro.FindAllocation(ctx, "prefill-1"); err != nil {
			b.Fatal(err)
		}
	}
}
