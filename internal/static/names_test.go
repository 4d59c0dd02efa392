package static

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

func namedOpts(name string, slots int) *provisioner.ResourceOptions {
	return &provisioner.ResourceOptions{
		Name:        name,
		Args:        (&provisioner.RuntimeArgs{Slots: slots, Version: "v1.2.3", Hibernated: true, Environment: "dev"}).AsMap(),
		Annotations: map[string]string{provisioner.AnnotationEnvironment: "dev", "project_name": "orders"},
	}
}

// A named runtime's Provision, called again for its ID (after a crash of the first call), adopts the
// allocation it finds: same host, no second allocation, the new size. The ledger records the name and
// the arguments, and CheckResource reports them with the owner, for an import.
func TestNamedProvisionAdoptsItsOwnAllocationAndRecordsItsArguments(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	id := provisioner.NamedResourceID("pool", "orders")
	rt := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	first, err := p.Provision(ctx, rt, namedOpts("orders", 1))
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Provision(ctx, rt, namedOpts("orders", 2))
	if err != nil {
		t.Fatalf("adopting the runtime's own allocation: %v", err)
	}
	if hostOf(again) != hostOf(first) {
		t.Fatalf("adoption moved the runtime from %s to %s", hostOf(first), hostOf(again))
	}
	if all, _ := db.ListAllocations(ctx); len(all) != 1 || all[0].Slots != 2 {
		t.Fatalf("ledger after adoption: %+v", all)
	}

	got, err := p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		provisioner.StateKeyProvisioner: "pool", provisioner.StateKeyName: "orders",
		provisioner.StateKeyEnvironment: "dev", provisioner.StateKeyAnnotations: map[string]string{"project_name": "orders"},
		stateVersion: "v1.2.3", stateHibernated: true, stateSlots: 2,
	}
	ledger, _ := db.Identity(ctx)
	want[stateLedgerID], want[stateLedger] = ledger.ID, ledger.Location // the import records its ledger
	alloc, err := db.FindAllocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want[stateClaimedAt] = strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10) // and manages the runtime as the ledger holds it
	if !reflect.DeepEqual(got.State, want) {
		t.Fatalf("CheckResource without private state (an import) reported %v, want %v", got.State, want)
	}

	// Without the `environment` argument, an "environment" annotation is the project's own (as
	// RuntimeArgs.ProjectAnnotations says): recorded among the annotations, no environment, so that an
	// import restores the configuration as written. Before, it came back as the environment.
	opts := namedOpts("orders", 2)
	opts.Args = (&provisioner.RuntimeArgs{Slots: 2, Version: "v1.2.3", Hibernated: true}).AsMap()
	if _, err := p.Provision(ctx, rt, opts); err != nil {
		t.Fatal(err)
	}
	if got, err = p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, nil); err != nil {
		t.Fatal(err)
	}
	want[provisioner.StateKeyEnvironment] = ""
	want[provisioner.StateKeyAnnotations] = map[string]string{provisioner.AnnotationEnvironment: "dev", "project_name": "orders"}
	if alloc, err = db.FindAllocation(ctx, id); err != nil {
		t.Fatal(err)
	}
	want[stateClaimedAt] = strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10) // that create adopted it anew
	if !reflect.DeepEqual(got.State, want) {
		t.Fatalf("without the environment argument, CheckResource reported %v, want %v", got.State, want)
	}
}

// Anything else at a runtime's ID, or holding its name, is a conflict that says what holds it, and
// nothing changes in the ledger.
func TestProvisionRefusesAnotherProvisionersOrNamesAllocation(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	other, _, _ := newPool(t, twoHosts)
	other.db = db // the same ledger, another provisioner of the set
	other.SetName("shared")
	if _, err := other.Provision(ctx, &provisioner.Resource{ID: "taken", Type: provisioner.ResourceTypeRuntime}, namedOpts("x", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Provision(ctx, &provisioner.Resource{ID: "named-a", Type: provisioner.ResourceTypeRuntime}, namedOpts("a", 1)); err != nil {
		t.Fatal(err)
	}
	before, _ := db.ListAllocations(ctx)

	for _, tc := range []struct {
		what, id, name string
		want           provisioner.IDConflictError
	}{
		{"another provisioner's ID", "taken", "x", provisioner.IDConflictError{ID: "taken", Provisioner: "shared", Name: "x"}},
		{"another name at the ID", "named-a", "b", provisioner.IDConflictError{ID: "named-a", Provisioner: "pool", Name: "a"}},
		{"the name at another ID", "elsewhere", "a", provisioner.IDConflictError{ID: "named-a", Provisioner: "pool", Name: "a"}},
	} {
		_, err := p.Provision(ctx, &provisioner.Resource{ID: tc.id, Type: provisioner.ResourceTypeRuntime}, namedOpts(tc.name, 1))
		var conflict *provisioner.IDConflictError
		if !errors.As(err, &conflict) {
			t.Fatalf("%s: %v, want an IDConflictError", tc.what, err)
		}
		conflict.Reason = ""
		if *conflict != tc.want {
			t.Errorf("%s: conflict %+v, want %+v", tc.what, *conflict, tc.want)
		}
	}
	if after, _ := db.ListAllocations(ctx); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused Provision changed the ledger:\n%+v\n%+v", before, after)
	}
}

// The inventory lists this provisioner's allocations (not another's on a shared ledger), with name,
// environment and annotations.
func TestAllocatedListsOwnAllocationsOnly(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	other, _, _ := newPool(t, twoHosts)
	other.db = db
	other.SetName("shared")
	if _, err := other.Provision(ctx, &provisioner.Resource{ID: "theirs", Type: provisioner.ResourceTypeRuntime}, namedOpts("x", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Provision(ctx, &provisioner.Resource{ID: "mine", Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 2)); err != nil {
		t.Fatal(err)
	}
	got, err := p.Allocated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("Allocated = %+v, want the one allocation of pool", got)
	}
	a := got[0]
	if a.ID != "mine" || a.Name != "orders" || a.Provisioner != "pool" || a.Slots != 2 || a.Environment != "dev" ||
		!reflect.DeepEqual(a.Annotations, map[string]string{"project_name": "orders"}) || a.CreatedAt.IsZero() {
		t.Fatalf("Allocated = %+v", a)
	}
}

// A create_before_destroy replacement of a named runtime (`-replace`, `replace_triggered_by`, a taint)
// creates the new instance, which adopts the runtime at the name's ID, and destroys the old one.
// Interrupted between the two (a single Ctrl-C, or a kill), it leaves both in the state, the old one
// deposed, and the next plain apply destroys the old one in a command that created nothing: within
// one command the Terraform layer tells the two instances apart (namedInstances), across commands
// only the ledger can. Before, that destroy freed the runtime the new instance holds (found by a
// walkthrough: a Ctrl-C during the replacement of 40 named runtimes, then a plain apply; 16 were
// freed while the state kept them, and the next plan re-created them). The old instance's state,
// refreshed after the takeover, must still be told from the new one's; an update of an instance
// keeps its claim, so the destroy of a state saved before an update that was cut short (the ledger
// resized, the state not) still frees the runtime; and a state recorded before the claim frees it
// as before.
func TestDestroyOfANamedRuntimeALaterCreateTookOverLeavesIt(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	old, fresh := provisionOrders(t, p)
	id := old.ID
	refreshedOld, err := p.CheckResource(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the ledger's timestamps are microseconds
	// The replacement's create, which adopts the runtime.
	replacement, err := p.Provision(ctx, fresh(), namedOpts("orders", 1))
	if err != nil {
		t.Fatal(err)
	}
	if replacement.State[stateClaimedAt] == old.State[stateClaimedAt] {
		t.Fatalf("the adopting create recorded the old instance's claim %v", old.State[stateClaimedAt])
	}
	// The next apply refreshes the deposed instance, then destroys it.
	refreshed, err := p.CheckResource(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if refreshed.State[stateClaimedAt] != old.State[stateClaimedAt] {
		t.Fatalf("a refresh replaced the old instance's claim %v with %v", old.State[stateClaimedAt], refreshed.State[stateClaimedAt])
	}
	for _, st := range []*provisioner.Resource{old, refreshed, refreshedOld} {
		err := p.Deprovision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime, State: st.State, Config: st.Config})
		if !errors.Is(err, provisioner.ErrTakenOver) {
			t.Fatalf("the old instance's destroy: %v, want an error wrapping provisioner.ErrTakenOver", err)
		}
	}
	if all, _ := db.ListAllocations(ctx); len(all) != 1 || all[0].ResourceID != id {
		t.Fatalf("the old instance's destroy freed the runtime the replacement holds: ledger %+v", all)
	}

	// An update keeps the instance's claim: a state saved before it (the update cut short after the
	// ledger's write) is still the holder's.
	resized, err := p.Provision(ctx, replacement, namedOpts("orders", 2))
	if err != nil {
		t.Fatal(err)
	}
	if resized.State[stateClaimedAt] != replacement.State[stateClaimedAt] {
		t.Fatalf("an update changed the claim %v to %v", replacement.State[stateClaimedAt], resized.State[stateClaimedAt])
	}
	// A state from before the claim was recorded frees the runtime, as before.
	unrecorded := map[string]any{}
	for k, v := range replacement.State {
		if k != stateClaimedAt {
			unrecorded[k] = v
		}
	}
	if _, err := p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime, State: unrecorded, Config: replacement.Config}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Deprovision(ctx, replacement); err != nil {
		t.Fatalf("the replacement's destroy, from its state before the update: %v", err)
	}
	if all, _ := db.ListAllocations(ctx); len(all) != 0 {
		t.Fatalf("the replacement's destroy left %+v", all)
	}
}

// A named runtime whose state is from before the claim (no claimed_at) was freed by the destroy of
// the deposed half of a create_before_destroy replacement interrupted later, however often it was
// refreshed since: found by a walk (created by a build from before the claim, `terraform apply
// -refresh-only` and a plain apply with this one, then a `-replace` whose old instance was left
// deposed, as an interruption leaves it: the next apply freed the runtime, and the plan after it
// was "Runtime no longer exists", "Plan: 1 to add"). Its first refresh records the ledger's
// created_at, as an import's does: it manages the runtime as the ledger holds it.
func TestARefreshOfAStateFromBeforeTheClaimRecordsTheLedgers(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	id := provisioner.NamedResourceID("pool", "orders")
	made, err := p.Provision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 1))
	if err != nil {
		t.Fatal(err)
	}
	delete(made.State, stateClaimedAt)
	refreshed, err := p.CheckResource(ctx, made, namedOpts("orders", 1))
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := db.FindAllocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := refreshed.State[stateClaimedAt], strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10); got != want {
		t.Fatalf("the refresh of a state from before the claim recorded claimed_at %v, want the ledger's %v", got, want)
	}
	time.Sleep(2 * time.Millisecond) // the ledger's timestamps are microseconds
	if _, err := p.Provision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, namedOpts("orders", 1)); err != nil {
		t.Fatal(err)
	}
	deposed := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime, State: refreshed.State, Config: refreshed.Config}
	if err := p.Deprovision(ctx, deposed); !errors.Is(err, provisioner.ErrTakenOver) {
		t.Fatalf("the destroy of the deposed instance: %v, want an error wrapping provisioner.ErrTakenOver", err)
	}
	if all, _ := db.ListAllocations(ctx); len(all) != 1 {
		t.Fatalf("the deposed instance's destroy freed the runtime the replacement holds: ledger %+v", all)
	}
}

// provisionOrders creates the runtime named "orders" on p, as the set's entry "pool", and returns it
// with fresh, which returns a new resource of its ID (another instance's create).
func provisionOrders(t *testing.T, p *Provisioner) (first *provisioner.Resource, fresh func() *provisioner.Resource) {
	t.Helper()
	p.SetName("pool")
	id := provisioner.NamedResourceID("pool", "orders")
	fresh = func() *provisioner.Resource {
		return &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	}
	first, err := p.Provision(context.Background(), fresh(), namedOpts("orders", 1))
	if err != nil {
		t.Fatal(err)
	}
	return first, fresh
}

// adoptsAfterTheLook is the ledger with a create that adopts a runtime landing right after a
// FindAllocation of it (once): between Deprovision's look and its delete.
type adoptsAfterTheLook struct {
	database.DB
	adopt func()
	once  sync.Once
}

func (l *adoptsAfterTheLook) FindAllocation(ctx context.Context, resourceID string) (*database.Allocation, error) {
	a, err := l.DB.FindAllocation(ctx, resourceID)
	l.once.Do(l.adopt)
	return a, err
}

// A create in another workspace that adopts the runtime between the destroy's look at the allocation
// and its delete keeps it: the destroy's check and delete are one statement of the ledger.
func TestDestroyOfANamedRuntimeLeavesItToACreateThatAdoptsItAfterTheLook(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	old, fresh := provisionOrders(t, p)
	id := old.ID
	var adopted *provisioner.Resource
	var adoptErr error
	other, err := New([]byte(twoHosts), db, zap.NewNop()) // another workspace's provider, same ledger
	if err != nil {
		t.Fatal(err)
	}
	other.(*Provisioner).SetName("pool")
	look := &adoptsAfterTheLook{DB: db, adopt: func() {
		time.Sleep(2 * time.Millisecond) // the ledger's timestamps are microseconds
		adopted, adoptErr = other.Provision(ctx, fresh(), namedOpts("orders", 1))
	}}
	destroyer, err := New([]byte(twoHosts), look, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	destroyer.(*Provisioner).SetName("pool")

	err = destroyer.Deprovision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime, State: old.State, Config: old.Config})
	if adoptErr != nil {
		t.Fatal(adoptErr)
	}
	if adopted == nil || adopted.State[stateClaimedAt] == old.State[stateClaimedAt] {
		t.Fatalf("the adoption did not land between the look and the delete, or kept the old claim: %+v", adopted)
	}
	var taken *TakenOverError
	if !errors.Is(err, provisioner.ErrTakenOver) || !errors.As(err, &taken) || taken.Name != "orders" ||
		strconv.FormatInt(taken.ClaimedAt.UnixMicro(), 10) != adopted.State[stateClaimedAt] {
		t.Fatalf("the destroy: %v, want a *TakenOverError naming the adoption's claim %v", err, adopted.State[stateClaimedAt])
	}
	if a, err := db.FindAllocation(ctx, id); err != nil || strconv.FormatInt(a.CreatedAt.UnixMicro(), 10) != adopted.State[stateClaimedAt] {
		t.Fatalf("the destroy freed the runtime that the adoption holds: %+v, %v", a, err)
	}
	// The adopter's own destroy frees it.
	if err := other.Deprovision(ctx, adopted); err != nil {
		t.Fatal(err)
	}
	if all, _ := db.ListAllocations(ctx); len(all) != 0 {
		t.Fatalf("the adopter's destroy left %+v", all)
	}
}

// The destroy of an instance whose runtime a later create took over writes nothing, so it waits for
// no other writer: the look before the delete tells it, and the delete that checks the claim again
// in its statement (which takes the ledger's write lock) is for a runtime still this instance's. An
// apply whose ledger another apply is busy writing destroys old instances without waiting.
func TestDestroyOfATakenOverRuntimeDoesNotWaitForTheWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	p, err := New([]byte(twoHosts), ledgertest.Open(t, "sqlite://"+path), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	old, fresh := provisionOrders(t, p.(*Provisioner))
	time.Sleep(2 * time.Millisecond) // the ledger's timestamps are microseconds
	if _, err := p.Provision(context.Background(), fresh(), namedOpts("orders", 1)); err != nil {
		t.Fatal(err)
	}
	ledgertest.HoldSQLiteWriteLock(t, path) // another process's writer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.Deprovision(ctx, old); !errors.Is(err, provisioner.ErrTakenOver) {
		t.Fatalf("the old instance's destroy while another writer holds the ledger: %v, want an error wrapping provisioner.ErrTakenOver at once", err)
	}
}
