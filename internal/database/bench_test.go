package database

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAllocate measures Allocate throughput: each op is one Allocate of a fresh resource ID
// (one slot, least-used of 4 hosts with room to spare), reported as allocs/s. writers=N runs N
// goroutines sharing one handle (a Terraform process with parallelism); handles=N gives each
// writer a handle of its own (N processes sharing the ledger). PostgreSQL is skipped when pgtest
// cannot run a server.
func BenchmarkAllocate(b *testing.B) {
	pool := map[string]int{"h1": 1 << 30, "h2": 1 << 30, "h3": 1 << 30, "h4": 1 << 30}
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			for _, c := range []struct {
				name             string
				writers, handles int
			}{
				{"writers=1", 1, 1},
				{"writers=8", 8, 1},
				{"writers=8,handles=8", 8, 8},
			} {
				b.Run(c.name, func(b *testing.B) {
					dsn := be.newDSN(b)
					dbs := make([]DB, c.handles)
					for i := range dbs {
						dbs[i] = mustOpen(b, dsn)
					}
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
				})
			}
		})
	}
}
