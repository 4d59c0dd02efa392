package resources

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	_ "github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse" // the "clickhouse-static" provisioner type
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes" // the "kubernetes" provisioner type
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
		// The port refused at once: no time ran out.
		if d := diags[0].Detail(); !strings.Contains(d, `could not be asked whether it can create`) {
			t.Fatalf("the warning of a refusal at once reads as a timeout: %s", d)
		}
	}

	reads.applying()
	var diags diag.Diagnostics
	checkCreateAtPlan(context.Background(), reads, ch, "ch", provisioner.ResourceTypeClickHouse, clickhouseKind, &diags)
	if len(diags) != 0 || ch.checks.Load() != 1 {
		t.Fatalf("in an apply: %v, %d checks", diags, ch.checks.Load())
	}
}

// slowChecker is a countingChecker whose every check takes the plan-check timeout on the reads'
// clock, as a dial of a server whose packets are dropped does (clickhouse-go's dial_timeout is 30 s).
type slowChecker struct {
	*countingChecker
	clock *time.Time
	mu    *sync.Mutex
}

func (s slowChecker) CheckCreate(ctx context.Context, rt provisioner.ResourceType) error {
	err := s.countingChecker.CheckCreate(ctx, rt)
	s.mu.Lock()
	*s.clock = s.clock.Add(PlanCheckTimeout)
	s.mu.Unlock()
	return err
}

// Terraform plans at most -parallelism resources at once (10 by default): the plans of 30 new
// rill_clickhouse on a server that cannot be reached come in waves, each starting when the one before
// has its answer. The whole plan costs one attempt, not one per wave: a server that does not answer
// within the timeout holds the plan up once. Before, a failed check was shared only while it was
// under capacityMaxAge (1 s) old from its start, so each wave dialed again and waited the timeout
// again: a plan of 100 of them on a server behind a closed firewall took ten dial timeouts.
func TestPlanCreateCheckIsAskedOncePerCommandAcrossWaves(t *testing.T) {
	set, err := provisioner.NewSet(`{"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:pw@127.0.0.1:1/default?dial_timeout=2s"}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set["ch"].Close() })
	var mu sync.Mutex
	clock := time.Now()
	reads := &capacityReads{now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }}
	ch := slowChecker{countingChecker: &countingChecker{Provisioner: set["ch"]}, clock: &clock, mu: &mu}
	for wave := range 3 {
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				var diags diag.Diagnostics
				checkCreateAtPlan(context.Background(), reads, ch, "ch", provisioner.ResourceTypeClickHouse, clickhouseKind, &diags)
				if len(diags) != 1 || diags[0].Summary() != "Provisioner not checked before the create" {
					t.Errorf("wave %d: want the warning, got %v", wave, diags)
				}
			})
		}
		wg.Wait()
	}
	if n := ch.checks.Load(); n != 1 {
		t.Errorf("3 waves of 10 plans asked the server %d times, want once", n)
	}
}

// hangingChecker answers only when its context ends, as a server whose packets are dropped does.
type hangingChecker struct{ provisioner.Provisioner }

func (hangingChecker) CheckCreate(ctx context.Context, _ provisioner.ResourceType) error {
	<-ctx.Done()
	return fmt.Errorf("dialing: %w", ctx.Err())
}

// A check that the time ran out on says so, with the time it had; one refused at once (above) does
// not. Before, every warning said "could not be asked within 30s", so an instant refusal (a closed
// port, a refused password) read as a server that did not answer.
func TestPlanCreateCheckThatRanOutOfTimeSaysWithin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var diags diag.Diagnostics
	checkCreateAtPlan(ctx, &capacityReads{}, hangingChecker{}, "ch", provisioner.ResourceTypeClickHouse, clickhouseKind, &diags)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), `could not be asked within `+PlanCheckTimeout.String()+` whether`) {
		t.Fatalf("want the warning saying the check ran out of time, got %v", diags)
	}
}

// The plan of a new runtime on a kubernetes provisioner whose kubeconfig does not load warns, naming
// the provisioner and the field of the set (k8s.spec.kubeconfig_path), as a static pool whose ledger
// cannot be read and a clickhouse-static server that cannot be reached do; the apply would fail with
// the same error; a named runtime gets that one warning too. Before, such a plan was clean, and the
// apply failed.
func TestPlanOfAKubernetesRuntimeWhoseKubeconfigDoesNotLoadWarns(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "absent", "kubeconfig")
	set, err := provisioner.NewSet(`{"k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": "`+kubeconfig+`"}}}`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set["k8s"].Close() })
	for _, name := range []types.String{types.StringNull(), types.StringValue("web")} {
		r := &RuntimeResource{resourceBase{client: &Client{Set: set, Default: "k8s"}}}
		m := runtimeModels()["fresh plan"]
		m.Provisioner, m.Name = types.StringNull(), name
		d := planRuntime(t, r, nil, m)
		if d.HasError() || len(d) != 1 || d[0].Summary() != "Provisioner not checked before the create" {
			t.Fatalf("plan of a new runtime named %s: want one warning, got %v", name, d)
		}
		want := `Provisioner "k8s" could not be asked whether it can create a new runtime: k8s.spec.kubeconfig_path: loading kubeconfig_path ` +
			kubeconfig + ": stat " + kubeconfig + ": no such file or directory"
		if !strings.HasPrefix(d[0].Detail(), want) {
			t.Fatalf("plan of a new runtime named %s: the warning should start %q:\n%s", name, want, d[0].Detail())
		}
	}
}
