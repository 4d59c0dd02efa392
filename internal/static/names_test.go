package static

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
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
