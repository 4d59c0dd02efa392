package kubernetes

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	e.destroyedAndGone("the replacement", resized, updated)
}

// A create of a named runtime that fails part-way (a policy that refuses its Deployment, a Ctrl-C
// between two of its objects) has written its new claim on the objects it applied, and its error
// keeps no state (it adopted the runtime: it created nothing to undo), so the state that held the
// runtime still does, with its own claim on the other objects. Found by a walk on the local
// control plane: a `terraform apply -replace` of a create_before_destroy runtime, whose Deployment
// a ValidatingAdmissionPolicy refused, claimed the volume claim anew; the next plan was empty, and
// `terraform destroy` left every object ("Runtime kept for the resource that replaced it") while no
// state held them. The holder's refresh must report the objects that carry another claim than its
// own as drift, and its apply must write its claim on them again. A create that took the whole
// runtime over (every object carries its claim) is no drift of the older state: the runtime is the
// later create's.
func TestIntegrationAClaimAFailedCreateLeftOnSomeObjectsIsDriftOfTheHolder(t *testing.T) {
	e := newEnv(t, "")
	holder, opts := e.namedRuntime("orders")
	claim := parseState(holder.State).Claim
	e.createRefusedAtTheDeployment(holder, opts)
	if claims := e.claims(holder); claims["Deployment"] != claim || !slices.ContainsFunc(slices.Collect(maps.Values(claims)), func(c string) bool { return c != claim }) {
		t.Fatalf("after the create cut short the objects carry the claims %v; want the holder's %q on the Deployment and another on some object", claims, claim)
	}
	if drift := strings.Join(e.driftWith(e.p, holder, opts), "\n"); !strings.Contains(drift, AnnotationClaim) {
		t.Fatalf("the holder's refresh reported drift %q, want the objects that carry another claim (%s)", drift, AnnotationClaim)
	}
	e.provision(e.p, holder, opts)
	if drift := e.driftWith(e.p, holder, opts); len(drift) != 0 {
		t.Fatalf("drift after the holder's apply: %q, want none", drift)
	}
	for kind, c := range e.claims(holder) {
		if c != claim {
			t.Errorf("after the holder's apply its %s carries the claim %q, want its own %q", kind, c, claim)
		}
	}

	// A create that takes the whole runtime over.
	later := e.provision(e.p, &provisioner.Resource{ID: holder.ID, Type: provisioner.ResourceTypeRuntime}, opts)
	if drift := e.driftWith(e.p, holder, opts); len(drift) != 0 {
		t.Fatalf("the older state's refresh after a create took the runtime over reported drift %q, want none", drift)
	}
	if claims := e.claims(holder); claims["Deployment"] != parseState(later.State).Claim {
		t.Fatalf("the older state's refresh changed the claims: %v", claims)
	}
}

// createRefusedAtTheDeployment runs another create of r's name (another workspace's) whose apply of
// the Deployment is refused (as by an admission policy): it claimed the objects applied before it.
func (e *env) createRefusedAtTheDeployment(r *provisioner.Resource, opts *provisioner.ResourceOptions) {
	e.t.Helper()
	refused := e.interceptingProvisioner("", func(req *http.Request) error {
		if kind, ok := requestKind(req, e.ns); ok && kind == "apply deployments" {
			return errors.New("refused by a policy")
		}
		return nil
	})
	refused.SetName("k8s")
	if _, err := refused.Provision(e.ctx, &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeRuntime}, opts); err == nil {
		e.t.Fatal("the create whose Deployment is refused succeeded")
	}
}

// The destroy of a named runtime leaves it only when a later create took it over: some object
// carries another claim and none carries the state's own (none at all, for a state from before the
// claim). Found by a walk on the local control plane: a `terraform destroy` right after a create of
// the name failed part-way (its claim on the volume claim, the holder's on the rest) left the
// runtime ("Runtime kept for the resource that replaced it") while no state held it; and the destroy
// of the deposed half of an interrupted replacement, whose state was from before the claim and
// never updated, deleted the runtime the replacement had claimed.
func TestIntegrationDestroyLeavesARuntimeOnlyWhenNoObjectCarriesItsStatesClaim(t *testing.T) {
	e := newEnv(t, "")
	holder, opts := e.namedRuntime("cut-short")
	e.createRefusedAtTheDeployment(holder, opts)
	e.destroyedAndGone("the holder of a runtime a failed create claimed in part", holder, opts)

	unclaimed, opts := e.namedRuntime("from-before")
	delete(unclaimed.State, StateClaim)
	e.eraseClaims(unclaimed)
	e.destroyedAndGone("a state from before the claim, of objects that carry none", unclaimed, opts)

	deposed, opts := e.namedRuntime("deposed")
	delete(deposed.State, StateClaim)
	e.eraseClaims(deposed)
	deposedState := maps.Clone(deposed.State)
	replacement := e.provision(e.p, &provisioner.Resource{ID: deposed.ID, Type: provisioner.ResourceTypeRuntime}, opts)
	before := e.claims(replacement)
	if err := e.p.Deprovision(e.ctx, &provisioner.Resource{ID: deposed.ID, Type: provisioner.ResourceTypeRuntime, State: deposedState}); !errors.Is(err, provisioner.ErrTakenOver) {
		t.Fatalf("the destroy of a deposed instance from before the claim: %v, want an error wrapping provisioner.ErrTakenOver", err)
	}
	if after := e.claims(replacement); !maps.Equal(after, before) {
		t.Fatalf("the destroy of the deposed instance changed the replacement's objects: %v, then %v", before, after)
	}
	e.destroyedAndGone("the replacement", replacement, opts)
}

// destroyedAndGone deprovisions r, which must succeed, and checks that a fresh read (as the next
// Terraform command's) finds the runtime gone; what names r in the failures.
func (e *env) destroyedAndGone(what string, r *provisioner.Resource, opts *provisioner.ResourceOptions) {
	e.t.Helper()
	if err := e.p.Deprovision(e.ctx, r); err != nil {
		e.t.Fatalf("%s: the destroy: %v, want the runtime deleted", what, err)
	}
	e.p.ForgetReads()
	if _, err := e.p.CheckResource(e.ctx, r, opts); !errors.Is(err, provisioner.ErrResourceNotFound) {
		e.t.Fatalf("%s: after the destroy: %v, want the runtime gone", what, err)
	}
}

// claims returns the claim (AnnotationClaim) each of r's objects carries, by kind.
func (e *env) claims(r *provisioner.Resource) map[string]string {
	e.t.Helper()
	st, _, names, err := e.p.resolve(r)
	if err != nil {
		e.t.Fatal(err)
	}
	live, err := e.p.readLive(e.ctx, e.c, e.p.namespaceOf(st), names, getObject)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, u := range live {
		out[u.GetKind()] = u.GetAnnotations()[AnnotationClaim]
	}
	return out
}

// Of two states that declare one name (two workspaces), the destroy of the one whose create adopted
// the runtime last frees it, and the other's leaves it (ErrTakenOver), as on a static pool. An
// update of the other (older) state must not take the runtime back: found by a walk on the local
// control plane (two Terraform workspaces, "default" created the runtime, "b" adopted it, then
// default's `apply -var slots=2`): the update wrote default's claim on every object again, so b's
// destroy left the runtime ("Runtime kept for the resource that replaced it") and default's would
// have deleted it, volume and all, while b held it. A static pool's update keeps the ledger's
// created_at. The update applies its arguments, writes the later create's claim, and its state
// keeps its own.
func TestIntegrationAnUpdateOfAStateALaterCreateTookOverDoesNotTakeItBack(t *testing.T) {
	e := newEnv(t, "")
	older, opts := e.namedRuntime("orders")
	own := parseState(older.State).Claim
	later := e.provision(e.p, &provisioner.Resource{ID: older.ID, Type: provisioner.ResourceTypeRuntime}, opts)
	taken := parseState(later.State).Claim
	resized := args(2, "v1", false)
	resized.Name = "orders"
	updated := e.provision(e.p, older, resized)
	if got := parseState(updated.State).Claim; got != own {
		t.Fatalf("the older state's update recorded the claim %q, want its own %q", got, own)
	}
	for kind, c := range e.claims(older) {
		if c != taken {
			t.Errorf("after the older state's update its %s carries the claim %q, want the later create's %q", kind, c, taken)
		}
	}
	if drift := e.driftWith(e.p, older, resized); len(drift) != 0 {
		t.Errorf("drift after the older state's update: %q, want none", drift)
	}
	if err := e.p.Deprovision(e.ctx, older); !errors.Is(err, provisioner.ErrTakenOver) {
		t.Fatalf("the older state's destroy after its update: %v, want an error wrapping provisioner.ErrTakenOver", err)
	}
	e.destroyedAndGone("the later create", later, resized)
}

// A named runtime created before the claim (its state records none, its objects carry none) was
// deleted by the destroy of the deposed half of an interrupted create_before_destroy replacement
// however long it had been managed since, as its state never got a claim: found by a walk on the
// local control plane (created by the provider before the claim, `apply -var slots=2` with this
// one, then a `-replace` whose old instance was put back deposed, as an interruption leaves it: the
// next apply deleted the Deployment, Service and volume claim, and the plan after it was "Runtime no
// longer exists", "Plan: 1 to add"). A static pool's update records the ledger's created_at. An
// update of such a state writes a claim and records it; of one whose objects carry a later
// create's claim, records that one, as the static update records the ledger's.
func TestIntegrationAnUpdateOfAStateFromBeforeTheClaimRecordsOne(t *testing.T) {
	e := newEnv(t, "")
	old, opts := e.namedRuntime("orders")
	delete(old.State, StateClaim)
	e.eraseClaims(old)
	resized := args(2, "v1", false)
	resized.Name = "orders"
	updated := e.provision(e.p, old, resized)
	claim := parseState(updated.State).Claim
	if claim == "" {
		t.Fatal("the update of a state from before the claim recorded none")
	}
	for kind, c := range e.claims(updated) {
		if c != claim {
			t.Errorf("after the update its %s carries the claim %q, want the recorded %q", kind, c, claim)
		}
	}
	deposed := &provisioner.Resource{ID: updated.ID, Type: provisioner.ResourceTypeRuntime, State: maps.Clone(updated.State)}
	replacement := e.provision(e.p, &provisioner.Resource{ID: updated.ID, Type: provisioner.ResourceTypeRuntime}, resized)
	if err := e.p.Deprovision(e.ctx, deposed); !errors.Is(err, provisioner.ErrTakenOver) {
		t.Fatalf("the destroy of the deposed instance: %v, want an error wrapping provisioner.ErrTakenOver", err)
	}

	// A state from before the claim whose runtime a later create claimed manages it as that create does.
	unclaimed := &provisioner.Resource{ID: updated.ID, Type: provisioner.ResourceTypeRuntime, State: maps.Clone(replacement.State), Config: replacement.Config}
	delete(unclaimed.State, StateClaim)
	if got := parseState(e.provision(e.p, unclaimed, opts).State).Claim; got != parseState(replacement.State).Claim {
		t.Fatalf("the update of a state from before the claim, of objects a later create claimed, recorded %q, want that create's %q", got, parseState(replacement.State).Claim)
	}
}

// eraseClaims removes the claim annotation from r's objects, as a runtime made before the claim has
// none (a JSON merge patch: another field manager).
func (e *env) eraseClaims(r *provisioner.Resource) {
	e.t.Helper()
	st, _, names, err := e.p.resolve(r)
	if err != nil {
		e.t.Fatal(err)
	}
	live, err := e.p.readLive(e.ctx, e.c, e.p.namespaceOf(st), names, getObject)
	if err != nil {
		e.t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"annotations":{"` + AnnotationClaim + `":null}}}`)
	for _, u := range live {
		gvr, err := e.c.resourceFor(e.ctx, u.GroupVersionKind())
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.c.dynamic.Resource(gvr).Namespace(u.GetNamespace()).Patch(e.ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// A create in another workspace that adopts a named runtime between its destroy's read of the
// objects and its deletes keeps it, volume included: each delete is conditional on the object as
// read (its UID and resourceVersion), and the adoption's apply wrote its own claim on every object.
// Before, the read and the deletes were separate steps and the deletes unconditional: the destroy
// deleted the objects and the volume the adoption had just claimed, and reported success. An
// adoption that lands between the deletes (after the Ingresses') stops them too, before the volume:
// it applies the volume first, the destroy deletes it last.
func TestIntegrationDestroyOfANamedRuntimeLeavesItToACreateThatAdoptsItAfterTheRead(t *testing.T) {
	for what, at := range map[string]string{"before the first delete": "", "between the deletes, before the Service's": "Service"} {
		t.Run(what, func(t *testing.T) {
			e := newEnv(t, "")
			old, named := e.namedRuntime("orders")
			name := "runtime-" + pidOf(old)
			before, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			other := e.provisioner("", zaptest.NewLogger(t)) // another workspace's provider
			other.SetName("k8s")
			adopted := &provisioner.Resource{ID: old.ID, Type: provisioner.ResourceTypeRuntime}
			t.Cleanup(func() { _ = other.Deprovision(e.ctx, adopted) })
			beforeClaimedDelete = func(kind string) {
				if adopted.State == nil && (at == "" || kind == at) {
					e.provision(other, adopted, named)
				}
			}
			t.Cleanup(func() { beforeClaimedDelete = nil })

			err = e.p.Deprovision(e.ctx, &provisioner.Resource{ID: old.ID, Type: provisioner.ResourceTypeRuntime, State: old.State})
			beforeClaimedDelete = nil
			if adopted.State == nil || parseState(adopted.State).Claim == parseState(old.State).Claim {
				t.Fatalf("the adoption did not run during the destroy, or kept the old claim")
			}
			if !errors.Is(err, provisioner.ErrTakenOver) {
				t.Fatalf("the destroy: %v, want an error wrapping provisioner.ErrTakenOver", err)
			}
			after, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil || after.UID != before.UID || after.DeletionTimestamp != nil {
				t.Fatalf("the adoption's volume after the destroy: %v (UID %s, before %s; being deleted: %v), want it kept", err, uidOf(after), before.UID, after != nil && after.DeletionTimestamp != nil)
			}
			if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || dep.DeletionTimestamp != nil {
				t.Fatalf("the adoption's Deployment after the destroy: %v, want it kept", err)
			}
			if at == "" {
				if _, err := other.CheckResource(e.ctx, adopted, named); err != nil {
					t.Fatalf("the adoption's runtime after the destroy: %v", err)
				}
			}
		})
	}
}

func uidOf(pvc *corev1.PersistentVolumeClaim) types.UID {
	if pvc == nil {
		return ""
	}
	return pvc.UID
}

// Writes that keep the runtime's claim (a controller's: a Deployment's status, a volume claim's
// binding) between the destroy's read and its deletes refuse the conditional deletes too; the destroy
// reads those objects again and deletes them as they are then.
func TestIntegrationDestroyOfANamedRuntimeDeletesObjectsWrittenSinceItsReadThatKeepItsClaim(t *testing.T) {
	e := newEnv(t, "")
	r, named := e.namedRuntime("billing")
	name := "runtime-" + pidOf(r)
	edit := []byte(`{"metadata": {"annotations": {"example.com/written": "after the read"}}}`)
	written := false
	beforeClaimedDelete = func(string) {
		if written {
			return
		}
		written = true
		if _, err := e.core.PersistentVolumeClaims(e.ns).Patch(e.ctx, name, types.MergePatchType, edit, metav1.PatchOptions{FieldManager: "another-writer"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, edit, metav1.PatchOptions{FieldManager: "another-writer"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { beforeClaimedDelete = nil })
	e.destroyedAndGone("the runtime", r, named)
}
