package static

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/rusage"
)

// BenchmarkProvisionPool provisions a whole pool the way scripts/bench.sh --scale does (N one-slot
// runtimes on N/100 hosts of 100 slots, at least 4, a fresh SQLite ledger), one op being all N, and
// reports this process's CPU per runtime: the provider's own share of an apply (placement and the
// ledger), which should not grow with N.
func BenchmarkProvisionPool(b *testing.B) {
	for _, n := range []int{200, 1000, 5000} {
		b.Run(fmt.Sprintf("runtimes=%d", n), func(b *testing.B) {
			hosts := max(4, (n+99)/100)
			specs := make([]string, hosts)
			for i := range specs {
				specs[i] = fmt.Sprintf(`{"host": "http://runtime-%d.bench.invalid:9091", "slots": 100, "audience_url": "http://runtime-%d.bench.invalid:8081"}`, i, i)
			}
			spec := `{"runtimes": [` + strings.Join(specs, ",") + `]}`
			var cpu time.Duration
			for range b.N {
				db, err := database.Open(context.Background(), "sqlite://"+filepath.Join(b.TempDir(), "ledger.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				p, err := New([]byte(spec), db, zap.NewNop())
				if err != nil {
					b.Fatal(err)
				}
				start := rusage.ProcessCPU(b)
				for i := range n {
					r := &provisioner.Resource{ID: fmt.Sprintf("rt-%d", i), Type: provisioner.ResourceTypeRuntime}
					if _, err := p.Provision(context.Background(), r, runtimeOpts(1)); err != nil {
						b.Fatal(err)
					}
				}
				cpu += rusage.ProcessCPU(b) - start
				_ = db.Close()
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "cpu-µs/runtime")
		})
	}
}
