package resources

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/static" // the "static" provisioner type
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// countingPool is a real static pool that counts its Capacity reads (each a read of the whole ledger).
type countingPool struct {
	provisioner.Provisioner
	reads atomic.Int32
}

func (p *countingPool) Capacity(ctx context.Context) ([]provisioner.HostCapacity, error) {
	p.reads.Add(1)
	return p.Provisioner.(provisioner.CapacityReporter).Capacity(ctx)
}

// onePool is a static pool of one host with one slot, on a fresh SQLite ledger.
func onePool(t *testing.T) *countingPool {
	return &countingPool{Provisioner: onePoolOn(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))}
}

// onePoolOn is a static pool "pool" of one host with one slot, on the ledger at dsn (created and
// migrated).
func onePoolOn(t *testing.T, dsn string) provisioner.Provisioner {
	t.Helper()
	db := ledgertest.Open(t, dsn)
	set, err := provisioner.NewSet(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}]}}}`, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set["pool"]
}

func noRoomWarning(t *testing.T, reads *capacityReads, p provisioner.Provisioner) bool {
	t.Helper()
	var diags diag.Diagnostics
	warnIfNoRoom(context.Background(), reads, p, "pool", 1, &diags)
	for _, d := range diags {
		if strings.HasPrefix(d.Summary(), "No host has room") {
			return true
		}
	}
	return false
}

// The plans of one command share a capacity read (one ledger read, not one per planned runtime); a
// Delete or Update (forget) and age make the next plan read again.
func TestPlanCapacityReadsAreShared(t *testing.T) {
	pool := onePool(t)
	var clock atomic.Int64 // nanoseconds; a read ages only when the test moves the clock
	reads := &capacityReads{now: func() time.Time { return time.Unix(0, clock.Load()) }}

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if noRoomWarning(t, reads, pool) {
				t.Error("a warning for an empty pool")
			}
		})
	}
	wg.Wait()
	if n := pool.reads.Load(); n != 1 {
		t.Fatalf("20 plans read the ledger %d times, want once", n)
	}

	// The one slot is taken: a shared read does not know yet (a Create only takes slots, and its own
	// error reports a full pool); after forget, the plan reads again and warns.
	if _, err := pool.Provision(context.Background(), &provisioner.Resource{ID: "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a01", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}); err != nil {
		t.Fatal(err)
	}
	if noRoomWarning(t, reads, pool) || pool.reads.Load() != 1 {
		t.Fatalf("a fresh shared read was not used (%d reads)", pool.reads.Load())
	}
	reads.forget("pool")
	if !noRoomWarning(t, reads, pool) || pool.reads.Load() != 2 {
		t.Fatalf("after forget: no warning for a full pool, or no new read (%d reads)", pool.reads.Load())
	}

	clock.Add(int64(capacityMaxAge))
	noRoomWarning(t, reads, pool)
	if n := pool.reads.Load(); n != 2 {
		t.Fatalf("a read exactly capacityMaxAge old was not used again (%d reads, want 2)", n)
	}
	clock.Add(1)
	noRoomWarning(t, reads, pool)
	if n := pool.reads.Load(); n != 3 {
		t.Fatalf("a read older than capacityMaxAge was used again (%d reads, want 3)", n)
	}
}

// A plan waiting for a capacity read that another resource's plan started stops at its own deadline,
// with an error that says what it waited for and how long.
func TestAWaitForASharedPlanReadSaysWhatItWaitedFor(t *testing.T) {
	reads := &capacityReads{}
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = reads.share(context.Background(), "pool", `provisioner "pool"'s free slots`, 0, func(context.Context) ([]provisioner.HostCapacity, error) {
			close(started)
			<-release
			return nil, nil
		})
	}()
	<-started
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // time to begin the wait: a deadline passed before it is no wait (waits.Ended)
	defer cancel()
	_, err := reads.share(ctx, "pool", `provisioner "pool"'s free slots`, 0, func(context.Context) ([]provisioner.HostCapacity, error) {
		t.Error("a second read started while one was in progress")
		return nil, nil
	})
	want := `for the read of provisioner "pool"'s free slots that another resource of this plan started, until the operation's deadline`
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "waited ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v; want %q", err, want)
	}
}

// Once the command applies changes (an apply walk, whose plans the plan walk made and showed), the
// check reads nothing and warns of nothing: a Create on a full pool reports it with its own error.
func TestPlanCapacityCheckIsOffOnceTheCommandApplies(t *testing.T) {
	pool := onePool(t)
	if _, err := pool.Provision(context.Background(), &provisioner.Resource{ID: "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a02", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}); err != nil {
		t.Fatal(err)
	}
	reads := &capacityReads{}
	if !noRoomWarning(t, reads, pool) || pool.reads.Load() != 1 {
		t.Fatalf("a plan walk: no warning for a full pool, or no read (%d reads)", pool.reads.Load())
	}
	reads.forget("pool")
	reads.applying()
	if noRoomWarning(t, reads, pool) || pool.reads.Load() != 1 {
		t.Fatalf("an apply walk: a warning, or a read (%d reads, want the plan walk's 1)", pool.reads.Load())
	}
}

// Create, Update and Delete each switch the check off for the rest of the command, before anything
// else (here the provisioner is not even in the set, so each call then fails).
func TestApplyingARuntimeSwitchesThePlanCapacityCheckOff(t *testing.T) {
	ctx := context.Background()
	raw, s := fullRuntimeValue(t), runtimeSchemaV0(ctx)
	plan, state := tfsdk.Plan{Schema: s, Raw: raw}, tfsdk.State{Schema: s, Raw: raw}
	for name, apply := range map[string]func(*RuntimeResource){
		"create": func(r *RuntimeResource) {
			r.Create(ctx, resource.CreateRequest{Plan: plan}, &resource.CreateResponse{State: state})
		},
		"update": func(r *RuntimeResource) {
			r.Update(ctx, resource.UpdateRequest{Plan: plan, State: state}, &resource.UpdateResponse{State: state})
		},
		"delete": func(r *RuntimeResource) {
			r.Delete(ctx, resource.DeleteRequest{State: state}, &resource.DeleteResponse{State: state})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := &RuntimeResource{resourceBase{client: &Client{}}}
			apply(r)
			if !r.client.capacity.inApply.Load() {
				t.Fatalf("%s left the plan-time capacity check on", name)
			}
		})
	}
}

// Without provider data (an unconfigured provider), Create, Update and Delete fail with "Provider not
// configured", never a panic on switching the capacity check off.
func TestApplyingARuntimeWithoutProviderDataSaysNotConfigured(t *testing.T) {
	ctx := context.Background()
	raw, s := fullRuntimeValue(t), runtimeSchemaV0(ctx)
	plan, state := tfsdk.Plan{Schema: s, Raw: raw}, tfsdk.State{Schema: s, Raw: raw}
	r := &RuntimeResource{}
	for name, apply := range map[string]func() diag.Diagnostics{
		"create": func() diag.Diagnostics {
			resp := &resource.CreateResponse{State: state}
			r.Create(ctx, resource.CreateRequest{Plan: plan}, resp)
			return resp.Diagnostics
		},
		"update": func() diag.Diagnostics {
			resp := &resource.UpdateResponse{State: state}
			r.Update(ctx, resource.UpdateRequest{Plan: plan, State: state}, resp)
			return resp.Diagnostics
		},
		"delete": func() diag.Diagnostics {
			resp := &resource.DeleteResponse{State: state}
			r.Delete(ctx, resource.DeleteRequest{State: state}, resp)
			return resp.Diagnostics
		},
	} {
		t.Run(name, func(t *testing.T) {
			diags := apply()
			if len(diags.Errors()) != 1 || diags.Errors()[0].Summary() != "Provider not configured" {
				t.Fatalf("%s without provider data: %v", name, diags)
			}
		})
	}
}

// A plan of a new runtime whose ledger cannot be read (here: closed; in use, an unreachable
// PostgreSQL server or a refused password) warns that the pool's room was not checked, with the
// ledger's error. Before, the check was skipped with a debug log, and a plan of only new runtimes,
// which reads the ledger nowhere else, was clean while every create of its apply failed.
func TestPlanCapacityCheckWarnsWhenTheLedgerCannotBeRead(t *testing.T) {
	db := ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	set, err := provisioner.NewSet(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}]}}}`, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var diags diag.Diagnostics
	warnIfNoRoom(context.Background(), &capacityReads{}, set["pool"], "pool", 1, &diags)
	if len(diags) != 1 || diags.HasError() || diags[0].Summary() != "Pool capacity not checked before the create" {
		t.Fatalf("want one warning Pool capacity not checked before the create, got %v", diags)
	}
	if d := diags[0].Detail(); !strings.Contains(d, `Provisioner "pool" could not read its ledger to check`) || !strings.Contains(d, "closed") {
		t.Errorf("the warning does not name the provisioner and the ledger's error, or says a refusal at once took its time: %s", d)
	}
}

// The plan of a static runtime that grows beyond the free slots of its host (it cannot move) warns,
// naming the host and what it has; growing within them does not. Before, such a plan was silent and
// the apply failed with "cannot resize in place".
func TestPlanOfAGrowthItsHostHasNoRoomForWarns(t *testing.T) {
	db := ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	set, err := provisioner.NewSet(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 2}, {"host": "http://h2.test:9091", "slots": 8}]}}}`, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := set["pool"]
	if _, err := pool.Provision(context.Background(), &provisioner.Resource{ID: "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a03", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}); err != nil {
		t.Fatal(err)
	}
	grow := func(to int) diag.Diagnostics {
		var diags diag.Diagnostics
		warnIfCannotResize(context.Background(), &capacityReads{}, pool, "pool", "http://h1.test:9091", 1, to, &diags)
		return diags
	}
	if d := grow(2); len(d) != 0 {
		t.Errorf("growing within the host's free slot warned: %v", d)
	}
	d := grow(3)
	if len(d) != 1 || d.HasError() || d[0].Summary() != "No room on its host to grow this runtime" {
		t.Fatalf("want one warning No room on its host to grow this runtime, got %v", d)
	}
	if !strings.Contains(d[0].Detail(), "host http://h1.test:9091 has 1 free slot(s) of 2 right now, and growing the runtime from 1 to 3 slots needs 2") {
		t.Errorf("the warning does not say what the host has and what the growth needs: %s", d[0].Detail())
	}
	// The plan is not told of -replace (Terraform asks it with the prior state first, and shows that
	// call's warnings): "the apply will fail" must not be said without its exception.
	if !strings.Contains(d[0].Detail(), "or this plan replaces the runtime (-replace or replace_triggered_by") {
		t.Errorf("the warning does not say that a replacement plan does not fail: %s", d[0].Detail())
	}
}

// The plan of a resize of a static runtime whose host left the pool's spec (it keeps its slots there,
// but cannot grow or shrink, nor move) warns that the apply will fail, and why. Before, a growth was
// told its host had "0 free slot(s) of 0" and to add slots to it in the spec, where it no longer is,
// and a shrink planned silently.
func TestPlanOfAResizeOnAHostThatLeftTheSpecWarns(t *testing.T) {
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	db := ledgertest.Open(t, dsn)
	before, err := provisioner.NewSet(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 4}]}}}`, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before["pool"].Provision(context.Background(), &provisioner.Resource{ID: "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a04", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 2}).AsMap()}); err != nil {
		t.Fatal(err)
	}
	after, err := provisioner.NewSet(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h2.test:9091", "slots": 8}]}}}`, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []int{3, 1} {
		var d diag.Diagnostics
		warnIfCannotResize(context.Background(), &capacityReads{}, after["pool"], "pool", "http://h1.test:9091", 2, to, &d)
		if len(d) != 1 || d.HasError() || d[0].Summary() != "This runtime's host is no longer in the pool's spec" {
			t.Fatalf("2 -> %d slots: want one warning that the host left the spec, got %v", to, d)
		}
		if want := fmt.Sprintf("host http://h1.test:9091 is no longer in the pool's spec, so its slots cannot change from 2 to %d there", to); !strings.Contains(d[0].Detail(), want) {
			t.Errorf("2 -> %d slots: the warning does not say so: %s", to, d[0].Detail())
		}
		if !strings.Contains(d[0].Detail(), "the apply will fail, unless this plan replaces the runtime (-replace or replace_triggered_by") {
			t.Errorf("2 -> %d slots: the warning does not say that a replacement plan does not fail: %s", to, d[0].Detail())
		}
	}
}

// hangingPool is a static pool whose ledger does not answer: each Capacity read waits until its
// context ends (as the provider's ledger does while its one connection attempt waits for a
// PostgreSQL server that accepts TCP and never answers, when the plan check's timeout comes first),
// counts itself, and moves the reads' clock on by the plan check's timeout, the time it stands for.
type hangingPool struct {
	provisioner.Provisioner
	reads atomic.Int32
	mu    sync.Mutex
	clock time.Time
}

func (p *hangingPool) Capacity(ctx context.Context) ([]provisioner.HostCapacity, error) {
	p.reads.Add(1)
	<-ctx.Done()
	p.mu.Lock()
	p.clock = p.clock.Add(PlanCheckTimeout)
	p.mu.Unlock()
	return nil, fmt.Errorf("reading the ledger: connect: %w", ctx.Err())
}

func (p *hangingPool) now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clock
}

// Terraform plans at most -parallelism new runtimes at once (10 by default): the plans of 30 come in
// three waves, each starting when the one before has its answer. When the ledger does not answer,
// the whole plan waits for it once: the capacity read that failed is shared by the later waves, as a
// create check's answer is (TestPlanCreateCheckIsAskedOncePerCommandAcrossWaves), and each runtime
// gets the warning. Before, a failed read was shared only while under capacityMaxAge (1 s) old, so
// each wave read again; the provider's ledger tries a connection again after an attempt its caller's
// timeout cut short, so with a DSN whose connect_timeout is above the plan check's 30 s a plan of 100
// new runtimes waited 30 s ten times.
func TestPlanCapacityCheckWaitsForALedgerThatDoesNotAnswerOncePerCommand(t *testing.T) {
	pool := &hangingPool{Provisioner: onePool(t), clock: time.Now()}
	reads := &capacityReads{now: pool.now}
	for wave := range 3 {
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				// The plan check's own timeout (30 s) stood for by a short deadline.
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				var diags diag.Diagnostics
				warnIfNoRoom(ctx, reads, pool, "pool", 1, &diags)
				if len(diags) != 1 || diags.HasError() || diags[0].Summary() != "Pool capacity not checked before the create" ||
					!strings.Contains(diags[0].Detail(), `could not read its ledger within `+PlanCheckTimeout.String()) {
					t.Errorf("wave %d, plan %d: want the warning that the ledger was not read within the plan check's timeout, got %v", wave, i, diags)
				}
			})
		}
		wg.Wait()
	}
	if n := pool.reads.Load(); n != 1 {
		t.Errorf("3 waves of 10 plans read the ledger %d times, want once", n)
	}
}

// refusingPool is a static pool whose Capacity fails at once with err.
type refusingPool struct {
	provisioner.Provisioner
	err error
}

func (p refusingPool) Capacity(context.Context) ([]provisioner.HostCapacity, error) {
	return nil, p.err
}

// A ledger read that a timeout of the ledger's own ended (a PostgreSQL DSN's connect_timeout: pgx
// says "timeout: context deadline exceeded", wrapping the context's error, though the plan check's
// context is still running) does not say that the plan check's 30 s ran out: it did not, and the
// ledger's error says what did. One the plan check's time ended says so (above).
func TestPlanCapacityCheckEndedByTheLedgersOwnTimeoutDoesNotBlameThePlanChecks(t *testing.T) {
	connect := fmt.Errorf("postgres ledger postgres://rill@127.0.0.1:5/ledger: connect (each attempt waits up to 2s, the DSN's connect_timeout, for the server to answer): "+
		"failed to receive message: timeout: %w", context.DeadlineExceeded)
	remembered := fmt.Errorf("%w (the first attempt of this run failed; not tried again until the next terraform command)", connect)
	for _, err := range []error{connect, remembered} {
		var diags diag.Diagnostics
		warnIfNoRoom(context.Background(), &capacityReads{}, refusingPool{Provisioner: onePool(t), err: err}, "pool", 1, &diags)
		if len(diags) != 1 || diags[0].Summary() != "Pool capacity not checked before the create" {
			t.Fatalf("want one warning, got %v", diags)
		}
		if d := diags[0].Detail(); !strings.HasPrefix(d, `Provisioner "pool" could not read its ledger to check`) || !strings.Contains(d, "connect_timeout") {
			t.Errorf("the warning of a read the ledger's connect_timeout ended says the plan check's time ran out, or not what ended it: %s", d)
		}
	}
}

// A ledger that has no location on this machine (no ledger_dsn, and no home for the default SQLite
// ledger: an error of the environment's, provisioner.ErrFromEnvironment) warns with what to set,
// which its error says, not with advice to check the ledger's host, port and credentials, which a
// ledger that could not be located has none of. An unreachable ledger keeps that advice.
func TestPlanCapacityCheckOfALedgerWithNoLocationSaysWhatToSet(t *testing.T) {
	noLocation := provisioner.FromEnvironment(errors.New("ledger_dsn is not set (nor RILL_LEDGER_DSN), and the default SQLite ledger has no location: " +
		"no home; set ledger_dsn, or HOME or XDG_DATA_HOME to a writable directory"))
	unreachable := errors.New("postgres ledger postgres://rill@127.0.0.1:5/ledger: connect: connection refused")
	for _, c := range []struct {
		err           error
		want, notWant string
	}{
		{noLocation, "Set what the error names where the apply runs.", "host, port, credentials"},
		{unreachable, "Check ledger_dsn (or RILL_LEDGER_DSN): host, port, credentials.", "Set what the error names"},
	} {
		var diags diag.Diagnostics
		warnIfNoRoom(context.Background(), &capacityReads{}, refusingPool{Provisioner: onePool(t), err: c.err}, "pool", 1, &diags)
		if len(diags) != 1 || diags[0].Summary() != "Pool capacity not checked before the create" {
			t.Fatalf("want one warning, got %v", diags)
		}
		if d := diags[0].Detail(); !strings.Contains(d, c.want) || strings.Contains(d, c.notWant) || !strings.Contains(d, c.err.Error()) {
			t.Errorf("%v: want the ledger's error and %q (not %q), got: %s", c.err, c.want, c.notWant, d)
		}
	}
}
