package static

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// newPool builds a static provisioner on a real SQLite ledger in a temp dir.
func newPool(t *testing.T, spec string) (*Provisioner, database.DB, *observer.ObservedLogs) {
	t.Helper()
	db := ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	core, logs := observer.New(zapcore.DebugLevel)
	p, err := New([]byte(spec), db, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provisioner), db, logs
}

func runtimeOpts(slots int) *provisioner.ResourceOptions {
	return &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: slots}).AsMap()}
}

func provision(t *testing.T, p *Provisioner, id string, slots int) (*provisioner.Resource, error) {
	t.Helper()
	return p.Provision(context.Background(), &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, runtimeOpts(slots))
}

func hostOf(r *provisioner.Resource) string { return r.Config["host"].(string) }

const twoHosts = `{"runtimes": [{"host": "http://a", "slots": 4}, {"host": "http://b", "slots": 2}]}`

func TestSpreadPlacesOnTheLeastUsedShareThenSpecOrder(t *testing.T) {
	// a 0/4 vs b 0/2 -> a (spec order); a 1/4 vs b 0/2 -> b; a 1/4 vs b 1/2 -> a; a 2/4 vs b 1/2 -> a.
	if got, want := placements(t, twoHosts, 4), "http://a http://b http://a http://a"; got != want {
		t.Fatalf("placements %s, want %s", got, want)
	}
}

// placements provisions n one-slot runtimes on a fresh pool of spec and lists their hosts in order.
func placements(t *testing.T, spec string, n int) string {
	t.Helper()
	p, _, _ := newPool(t, spec)
	var got []string
	for i := 0; i < n; i++ {
		r, err := provision(t, p, fmt.Sprint("rt-", i), 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hostOf(r))
	}
	return strings.Join(got, " ")
}

func TestPackFillsTheFullestHostFirst(t *testing.T) {
	spec := `{"placement": "pack", "runtimes": [{"host": "http://a", "slots": 2}, {"host": "http://b", "slots": 2}]}`
	if got, want := placements(t, spec, 4), "http://a http://a http://b http://b"; got != want {
		t.Fatalf("placements %s, want %s", got, want)
	}
}

func TestProvisionIsIdempotentPerID(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	first, err := provision(t, p, "rt", 2)
	if err != nil {
		t.Fatal(err)
	}
	// A retry (after an interrupted apply) must neither move nor double-count.
	for i := 0; i < 3; i++ {
		again, err := provision(t, p, "rt", 2)
		if err != nil {
			t.Fatal(err)
		}
		if hostOf(again) != hostOf(first) {
			t.Fatalf("retry moved the runtime from %s to %s", hostOf(first), hostOf(again))
		}
	}
	used, _ := db.UsedSlotsByHost(context.Background())
	if used[hostOf(first)] != 2 || len(used) != 1 {
		t.Fatalf("ledger use after retries: %v", used)
	}
}

func TestResizeInPlaceWhenTheHostHasRoomAndFailsClearlyOtherwise(t *testing.T) {
	p, db, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 3}, {"host": "http://b", "slots": 8}]}`)
	r, err := provision(t, p, "rt", 1)
	if err != nil || hostOf(r) != "http://a" {
		t.Fatalf("first placement: %v %v", r, err)
	}
	grown, err := provision(t, p, "rt", 3)
	if err != nil {
		t.Fatal(err)
	}
	if hostOf(grown) != "http://a" || grown.Config["cpu"] != 3 || grown.Config["memory_gb"] != 12 {
		t.Fatalf("grown runtime: %+v", grown.Config)
	}
	_, err = provision(t, p, "rt", 4)
	var ce *CapacityError
	if !errors.As(err, &ce) || !ce.Resize || !strings.Contains(err.Error(), "cannot resize in place: host http://a needs 1 more free slot(s)") {
		t.Fatalf("resize beyond the host: %v", err)
	}
	shrunk, err := provision(t, p, "rt", 1)
	if err != nil || hostOf(shrunk) != "http://a" {
		t.Fatalf("shrink: %v %v", shrunk, err)
	}
	used, _ := db.UsedSlotsByHost(context.Background())
	if used["http://a"] != 1 {
		t.Fatalf("ledger after shrink: %v", used)
	}
}

func TestExhaustedPoolNamesFreeSlotsPerHost(t *testing.T) {
	p, _, logs := newPool(t, twoHosts)
	if _, err := provision(t, p, "big", 4); err != nil {
		t.Fatal(err)
	}
	_, err := provision(t, p, "too-big", 3)
	if !errors.Is(err, ErrInsufficientCapacity) {
		t.Fatalf("want ErrInsufficientCapacity, got %v", err)
	}
	want := "no runtimes found with sufficient available slots: 3 slot(s) requested; free slots per host: http://a 0 of 4, http://b 2 of 2"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if logs.FilterMessage("placing runtime").Len() != 1 {
		t.Fatalf("want one placement decision logged, got %d", logs.FilterMessage("placing runtime").Len())
	}
}

func TestDeprovisionFreesSlotsAndIsIdempotent(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt", 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := p.Deprovision(context.Background(), r); err != nil {
			t.Fatalf("deprovision %d: %v", i, err)
		}
	}
	if used, _ := db.UsedSlotsByHost(context.Background()); len(used) != 0 {
		t.Fatalf("slots still used: %v", used)
	}
}

func TestCheckResourceReportsGoneAndRemovedHostsWithoutWriting(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	r, err := provision(t, p, "rt", 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.CheckResource(context.Background(), r, runtimeOpts(1))
	if err != nil || hostOf(got) != hostOf(r) || got.State["slots"] != 1 || got.State[stateWarnings] != nil {
		t.Fatalf("check of a live runtime: %+v %v", got, err)
	}

	// Same ledger, the runtime's host dropped from the spec: the runtime still exists and holds its
	// slots (so that destroy frees them), with a warning; a resize there is refused, the same slots are not.
	var remaining string
	if hostOf(r) == "http://a" {
		remaining = `{"runtimes": [{"host": "http://b", "slots": 2}]}`
	} else {
		remaining = `{"runtimes": [{"host": "http://a", "slots": 4}]}`
	}
	shrunk, err := New([]byte(remaining), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	shrunkPool := shrunk.(*Provisioner)
	shrunkPool.SetName("pool")
	got, err = shrunkPool.CheckResource(context.Background(), r, runtimeOpts(1))
	if err != nil || hostOf(got) != hostOf(r) || got.Config["audience"] != r.Config["audience"] {
		t.Fatalf("removed host: %+v %v", got, err)
	}
	if w, _ := got.State[stateWarnings].([]string); len(w) != 1 || !strings.Contains(w[0], "no longer in the static pool's spec") {
		t.Fatalf("removed host: want one warning, got %v", got.State[stateWarnings])
	}
	caps, err := shrunkPool.Capacity(context.Background())
	if err != nil || len(caps) != 2 || !caps[1].Removed || caps[1].Host != hostOf(r) || caps[1].UsedSlots != 1 || caps[1].Slots != 0 {
		t.Fatalf("capacity must list the removed host with its allocation: %+v %v", caps, err)
	}
	if _, err := shrunkPool.Provision(context.Background(), r, runtimeOpts(1)); err != nil {
		t.Fatalf("an unchanged runtime on a removed host: %v", err)
	}
	var hr *HostRemovedError
	if _, err := shrunkPool.Provision(context.Background(), r, runtimeOpts(2)); !errors.As(err, &hr) || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("resize on a removed host: %v", err)
	}
	if err := shrunkPool.Deprovision(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindAllocation(context.Background(), "rt"); !errors.Is(err, database.ErrNotFound) {
		t.Fatalf("destroy must free a runtime on a removed host: %v", err)
	}

	if _, err := provision(t, p, "rt", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteAllocation(context.Background(), "rt"); err != nil {
		t.Fatal(err)
	}
	before, _ := db.ListAllocations(context.Background())
	_, err = p.CheckResource(context.Background(), r, runtimeOpts(1))
	if !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("deleted allocation: %v", err)
	}
	after, _ := db.ListAllocations(context.Background())
	if len(before) != len(after) {
		t.Fatal("CheckResource changed the ledger")
	}
}

func TestCheckWarnsFromEightyPercent(t *testing.T) {
	p, _, logs := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 5}, {"host": "http://b", "slots": 5}]}`)
	if _, err := provision(t, p, "rt", 4); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 1 || warns[0].ContextMap()["host"] != "http://a" {
		t.Fatalf("want one warning for http://a at 4/5, got %v", warns)
	}
	caps, err := p.Capacity(context.Background())
	if err != nil || caps[0].UsedSlots != 4 || caps[1].UsedSlots != 0 || caps[0].Runtimes != 1 {
		t.Fatalf("capacity: %+v %v", caps, err)
	}
}

// Ten parallel provisions inside one process never oversubscribe a host.
func TestParallelProvisionsNeverOversubscribe(t *testing.T) {
	p, db, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 3}, {"host": "http://b", "slots": 3}]}`)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = provision(t, p, fmt.Sprint("rt-", i), 1)
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			if !errors.Is(err, ErrInsufficientCapacity) {
				t.Fatalf("unexpected error: %v", err)
			}
			failed++
		}
	}
	used, _ := db.UsedSlotsByHost(context.Background())
	if failed != 4 || used["http://a"] != 3 || used["http://b"] != 3 {
		t.Fatalf("failed %d (want 4), used %v", failed, used)
	}
}

func TestSupportsRuntimesOnlyAndNeedsALedger(t *testing.T) {
	p, _, _ := newPool(t, twoHosts)
	if !p.Supports(provisioner.ResourceTypeRuntime) || p.Supports(provisioner.ResourceTypeClickHouse) {
		t.Fatal("static must support runtimes only")
	}
	if _, err := New([]byte(twoHosts), nil, nil); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Fatalf("no ledger: %v", err)
	}
}

// The seed README's example set, comments included, builds as it is.
func TestSeedExampleSetBuilds(t *testing.T) {
	const seed = `{
  "static-example":
    {
      "type": "static",
      "spec":
        {
          "runtimes":
            [
              {
                "host": "http://localhost:9091",          // Runtime host
                "slots": 50,                              // Amount of slots in the pre-provisioned runtime
                "data_dir": "/mnt/data",                  // Directory to use for data storage like DB files etc.
                "audience_url": "http://localhost:8081"   // Audience URL (JWT)
              }
            ]
        }
    }
}`
	_, db, _ := newPool(t, twoHosts)
	set, err := provisioner.NewSet(seed, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set["static-example"].Type() != "static" {
		t.Fatalf("set: %v", set)
	}
}

// override_disk_gb replaces the slot-based storage a static runtime reports, as in Rill; the slots
// taken on the host stay the slots.
func TestOverrideDiskGBIsTheReportedStorage(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	opts := &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1, OverrideDiskGB: 100}).AsMap()}
	r := &provisioner.Resource{ID: "rt-disk", Type: provisioner.ResourceTypeRuntime}
	out, err := p.Provision(context.Background(), r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Config["storage_bytes"]; got != int64(100)<<30 {
		t.Fatalf("storage_bytes %v, want 100 GiB", got)
	}
	checked, err := p.CheckResource(context.Background(), &provisioner.Resource{ID: r.ID, Type: r.Type, State: out.State}, opts)
	if err != nil || checked.Config["storage_bytes"] != int64(100)<<30 {
		t.Fatalf("checked %v, %v", checked, err)
	}
	if a, err := db.FindAllocation(context.Background(), r.ID); err != nil || a.Slots != 1 {
		t.Fatalf("allocation %+v, %v: want 1 slot", a, err)
	}
}

// An update whose allocation was freed after the plan (a saved plan, or -refresh=false) fails before
// it writes anything and says how to get the re-creation planned; it does not place the runtime anew.
// Before, it went through choose as a create and could move the runtime to another host, and
// Terraform failed the apply with an inconsistent result for host. Also for a state from before
// ledgers had identities, which only its host marks as an update.
func TestAnUpdateWhoseAllocationWasFreedFailsAndPlacesNothing(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt-1", 1) // on a: the least used share, then spec order
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provision(t, p, "rt-2", 1); err != nil { // on b; a is now the less used share
		t.Fatal(err)
	}
	preIdentity := &provisioner.Resource{ID: r.ID, Type: r.Type, State: provisioner.WithoutObservations(r.State), Config: r.Config}
	delete(preIdentity.State, stateLedgerID)
	delete(preIdentity.State, stateLedger)
	for name, rt := range map[string]*provisioner.Resource{"recorded ledger": r, "host alone": preIdentity} {
		t.Run(name, func(t *testing.T) {
			if err := p.Deprovision(ctx, r); err != nil { // freed since the plan
				t.Fatal(err)
			}
			got, err := p.Provision(ctx, rt, runtimeOpts(2))
			var gone *AllocationGoneError
			if !errors.As(err, &gone) || !errors.Is(err, provisioner.ErrResourceNotFound) {
				t.Fatalf("update of a freed runtime = %+v, %v; want an AllocationGoneError", got, err)
			}
			for _, w := range []string{"rt-1", "no longer in the ledger", "-refresh=false", "terraform plan", "re-creation"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if a, err := db.FindAllocation(ctx, "rt-1"); !errors.Is(err, database.ErrNotFound) {
				t.Errorf("the failed update allocated %+v, %v; want nothing", a, err)
			}
		})
	}
}

// An update returns the audience its plan has (the state's): an audience_url edited in the spec since
// the last refresh is reported by the next refresh, not by an update applied with -refresh=false,
// which Terraform failed as an inconsistent result for audience.
func TestAnUpdateKeepsTheAudienceOfItsState(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 4, "audience_url": "https://old"}]}`)
	r, err := provision(t, p, "rt-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	edited, err := New([]byte(`{"runtimes": [{"host": "http://a", "slots": 4, "audience_url": "https://new"}]}`), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := edited.Provision(ctx, r, runtimeOpts(2))
	if err != nil || got.Config["audience"] != "https://old" || got.State[stateSlots] != 2 {
		t.Fatalf("update after the spec's audience_url changed = %+v, %v; want the state's audience https://old, 2 slots", got, err)
	}
	if got, err := edited.CheckResource(ctx, got, runtimeOpts(2)); err != nil || got.Config["audience"] != "https://new" {
		t.Fatalf("refresh after the spec's audience_url changed = %+v, %v; want https://new", got, err)
	}
}
