package resources

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	_ "github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse" // the "clickhouse-static" provisioner type
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// countingChecker is a real provisioner that counts its CheckCreate calls.
type countingChecker struct {
	provisioner.Provisioner
	checks atomic.Int32
}

func (c *countingChecker) CheckCreate(ctx context.Context, rt provisioner.ResourceType) error {
	c.checks.Add(1)
	return c.Provisioner.(provisioner.CreateChecker).CheckCreate(ctx, rt)
}

// A ClickHouse server that cannot be reached at plan time is a warning, not an error (it may be
// reached by the time of the apply); the plans of one command share one attempt (the real
// clickhouse-static provisioner dialing a loopback port that refuses connections), and once the
// command applies, nothing is asked.
func TestPlanCreateCheckOfAnUnreachableServerWarnsOnce(t *testing.T) {
	const password = "Unreachable-Adm1n-Pa55"
	set, err := provisioner.NewSet(`{"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:`+password+`@127.0.0.1:1/default?dial_timeout=2s"}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := &countingChecker{Provisioner: set["ch"]}
	t.Cleanup(func() { _ = ch.Close() })
	reads := &capacityReads{}

	var mu sync.Mutex
	var all []diag.Diagnostics
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			var diags diag.Diagnostics
			checkCreateAtPlan(context.Background(), reads, ch, "ch", provisioner.ResourceTypeClickHouse, clickhouseKind, &diags)
			mu.Lock()
			all = append(all, diags)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := ch.checks.Load(); n != 1 {
		t.Errorf("10 plans asked the server %d times, want once", n)
	}
	for _, diags := range all {
		if diags.HasError() || len(diags) != 1 || diags[0].Summary() != "Provisioner not checked before the create" ||
			!strings.Contains(diags[0].Detail(), "127.0.0.1:1") || strings.Contains(diags[0].Detail(), password) {
			t.Fatalf("want one warning naming the server without its password, got %v", diags)
		}
	}

	reads.applying()
	var diags diag.Diagnostics
	checkCreateAtPlan(context.Background(), reads, ch, "ch", provisioner.ResourceTypeClickHouse, clickhouseKind, &diags)
	if len(diags) != 0 || ch.checks.Load() != 1 {
		t.Fatalf("in an apply: %v, %d checks", diags, ch.checks.Load())
	}
}
