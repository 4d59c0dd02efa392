package kubernetes

import (
	"errors"
	"maps"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// A named runtime's Provision, called again for its ID (an interrupted create), adopts its own
// objects; CheckResource without a state (an import) reports owner and name; another provisioner of
// the set, or another name, at that ID is a conflict naming the owner, and changes nothing.
func TestIntegrationNamedRuntimeAdoptsItsObjectsAndRefusesOthers(t *testing.T) {
	e := newEnv(t, "")
	e.p.SetName("k8s")
	id := provisioner.NamedResourceID("k8s", "orders")
	r := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	t.Cleanup(func() { _ = e.p.Deprovision(e.ctx, r) })
	named := func(name string) *provisioner.ResourceOptions {
		o := args(1, "v0.51.0", true)
		o.Name = name
		return o
	}
	first := e.provision(e.p, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, named("orders"))
	if _, err := e.p.Provision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, named("orders")); err != nil {
		t.Fatalf("adopting its own objects: %v", err)
	}
	got, err := e.p.CheckResource(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := provisioner.NewRuntimeObservation(got.State)
	if o.Owner != "k8s" || o.Name != "orders" {
		t.Fatalf("CheckResource reported owner %q name %q, want k8s orders (state %v)", o.Owner, o.Name, got.State)
	}
	if w := provisioner.NewRuntimeObservation(first.State); w.Owner != "k8s" || w.Name != "orders" {
		t.Fatalf("Provision reported owner %q name %q", w.Owner, w.Name)
	}

	other := e.provisioner("", zaptest.NewLogger(t))
	other.SetName("other")
	for what, tc := range map[string]struct {
		p    *Provisioner
		name string
	}{"another provisioner": {other, "orders"}, "another name": {e.p, "billing"}} {
		_, err := tc.p.Provision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, named(tc.name))
		var conflict *provisioner.IDConflictError
		if !errors.As(err, &conflict) || conflict.Provisioner != "k8s" || conflict.Name != "orders" || conflict.ID != id {
			t.Fatalf("%s at the ID: %v (%+v), want a conflict naming k8s/orders", what, err, conflict)
		}
	}
	after, err := e.p.CheckResource(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, nil)
	if err != nil || provisioner.NewRuntimeObservation(after.State).Owner != "k8s" {
		t.Fatalf("a refused Provision changed the objects: %v %v", err, after)
	}
}

// The inventory lists this provisioner's runtimes of the namespace with name, slots, host,
// environment and annotations, and leaves out another provisioner's; an import (CheckResource with no
// state) gets the environment and annotations back from the objects, as a static ledger gives them.
func TestIntegrationAllocatedListsOwnRuntimes(t *testing.T) {
	e := newEnv(t, "")
	e.p.SetName("k8s")
	mine := e.newRuntime()
	opts := &provisioner.ResourceOptions{Name: "orders", Args: (&provisioner.RuntimeArgs{Slots: 2, Version: "v0.51.0", Hibernated: true, Environment: "dev"}).AsMap(),
		Annotations: map[string]string{provisioner.AnnotationEnvironment: "dev", "organization_name": "acme"}} // as the Terraform layer gives `environment`
	e.provision(e.p, mine, opts)
	imported, err := e.p.CheckResource(e.ctx, &provisioner.Resource{ID: mine.ID, Type: provisioner.ResourceTypeRuntime}, &provisioner.ResourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := provisioner.NewRuntimeObservation(imported.State); o.Environment != "dev" || !maps.Equal(o.Annotations, map[string]string{"organization_name": "acme"}) {
		t.Fatalf("imported: environment %q, annotations %v; want dev and organization_name=acme only", o.Environment, o.Annotations)
	}
	other := e.provisioner("", zaptest.NewLogger(t))
	other.SetName("other")
	theirs := &provisioner.Resource{ID: provisioner.NamedResourceID("other", "x"), Type: provisioner.ResourceTypeRuntime}
	t.Cleanup(func() { _ = other.Deprovision(e.ctx, theirs) })
	e.provision(other, theirs, args(1, "v0.51.0", true))

	got, err := e.p.Allocated(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("Allocated = %+v, want only the runtime of k8s", got)
	}
	a := got[0]
	if a.ID != mine.ID || a.Name != "orders" || a.Slots != 2 || a.Provisioner != "k8s" || a.Host != e.p.spec.RuntimeURL(pidOf(mine)) || a.CreatedAt.IsZero() ||
		a.Environment != "dev" || !maps.Equal(a.Annotations, map[string]string{"organization_name": "acme"}) {
		t.Fatalf("Allocated = %+v (want ID %s)", a, mine.ID)
	}
}

// A create_before_destroy replacement of a named runtime interrupted between its create (which
// adopts the runtime's objects) and its destroy of the old instance leaves the old instance in the
// state; the next apply destroys it in a command that created nothing. That destroy must leave the
// objects to the new instance: each create of a named runtime writes a claim of its own
// (AnnotationClaim), an update keeps it, a refresh keeps the recorded one, and Deprovision leaves
// objects that carry another. Before, it deleted them, the volume included (found by a walkthrough:
// a Ctrl-C during the replacement of 6 named runtimes, then a plain apply, deleted 3 runtimes'
// objects and volumes while the state kept them). A state without a claim (from an older provider)
// deletes as before.
func TestIntegrationDestroyOfANamedRuntimeALaterCreateTookOverLeavesIt(t *testing.T) {
	e := newEnv(t, "")
	e.p.SetName("k8s")
	id := provisioner.NamedResourceID("k8s", "orders")
	fresh := func() *provisioner.Resource {
		return &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	}
	named := args(1, "v0.51.0", true)
	named.Name = "orders"
	old := e.provision(e.p, fresh(), named)
	t.Cleanup(func() {
		_ = e.p.Deprovision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime})
	})
	replacement := e.provision(e.p, fresh(), named)
	if parseState(old.State).Claim == "" || parseState(replacement.State).Claim == parseState(old.State).Claim {
		t.Fatalf("claims: old %q, replacement %q; want two different ones", parseState(old.State).Claim, parseState(replacement.State).Claim)
	}
	refreshed, err := e.p.CheckResource(e.ctx, old, named)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseState(refreshed.State).Claim; got != parseState(old.State).Claim {
		t.Fatalf("a refresh of the old instance recorded claim %q, want its own %q", got, parseState(old.State).Claim)
	}
	for _, st := range []*provisioner.Resource{old, refreshed} {
		if err := e.p.Deprovision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime, State: st.State}); !errors.Is(err, provisioner.ErrTakenOver) {
			t.Fatalf("the old instance's destroy: %v, want an error wrapping provisioner.ErrTakenOver", err)
		}
	}
	if _, err := e.p.CheckResource(e.ctx, replacement, named); err != nil {
		t.Fatalf("after the old instance's destroy the replacement's runtime: %v", err)
	}
	// An update keeps the claim; the replacement's destroy deletes the runtime.
	updated := args(2, "v0.51.0", true)
	updated.Name = "orders"
	claim := parseState(replacement.State).Claim
	resized := e.provision(e.p, replacement, updated)
	if got := parseState(resized.State).Claim; got != claim {
		t.Fatalf("an update changed the claim %q to %q", claim, got)
	}
	if err := e.p.Deprovision(e.ctx, resized); err != nil {
		t.Fatalf("the replacement's destroy: %v", err)
	}
	if _, err := e.p.CheckResource(e.ctx, resized, updated); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("after the replacement's destroy: %v, want the runtime gone", err)
	}
}
