package kubernetes

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Two creates of one named runtime at the same instant, by two provisioners on one namespace (two
// terraform processes): exactly one reports that it created the runtime, the other adopted it. Each
// provisioner holds its first write to the API server until the other has reached its own, so both
// have read the ID's objects (and found none) before either writes: a "created" decided from that
// read would be reported by both. The claim leaves the volume claim's fields owned as a server-side
// apply that created it would own them: by the Apply entry of this provisioner's field manager, with
// no Update entry of its own beside it.
func TestIntegrationConcurrentCreatesOfOneNameReportOneCreation(t *testing.T) {
	e := newEnv(t, "")
	id := provisioner.NamedResourceID("k8s", "orders")
	t.Cleanup(func() {
		_ = e.p.Deprovision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime})
	})
	var arrived atomic.Int32
	both := make(chan struct{})
	var ps [2]*Provisioner
	for i := range ps {
		var first sync.Once
		ps[i] = e.observedProvisioner("", func(req *http.Request) {
			if req.Method == http.MethodGet {
				return
			}
			first.Do(func() {
				if arrived.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-req.Context().Done():
				}
			})
		})
		ps[i].SetName("k8s")
	}
	opts := args(1, "v0.51.0", true)
	opts.Name = "orders"
	var wg sync.WaitGroup
	var created [2]bool
	var errs [2]error
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created[i], errs[i] = p.ProvisionReportingCreation(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("provision %d: %v", i, err)
		}
	}
	if arrived.Load() != 2 {
		t.Fatalf("%d of the two provisions wrote to the API server: they did not overlap", arrived.Load())
	}
	if created[0] == created[1] {
		t.Fatalf("created = %v: exactly one of two creates of one runtime may have created it", created)
	}

	e.claimOwnedByOneApplyEntry("runtime-" + pidOf(&provisioner.Resource{ID: id}))

	// Once the runtime exists, a create of its name creates nothing.
	if _, again, err := e.p.ProvisionReportingCreation(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts); err != nil || again {
		t.Fatalf("a third create of the runtime: created=%v err=%v, want false", again, err)
	}
}

// The controllers that bind a new volume claim (the volume controller, the binder) and the applies
// of the creates that lost the claim write the claim several times within its first second, each
// write failing the claim's managed-fields patch that tested the resourceVersion read before it.
// Here another field manager writes the claim right before each of the claim's first eight patches,
// which is what those writers do, on cue: the create outlasts them and leaves the claim owned by
// one Apply entry. Before, the claim gave up after five refused patches, and the create failed with
// "handing the fields of PersistentVolumeClaim ..., just created, to server-side apply: the server
// rejected our request due to an error in our request" (seen once under load with two creates).
func TestIntegrationClaimOutlastsWritesToTheVolumeClaimBetweenItsReadAndItsPatch(t *testing.T) {
	const writes = 8
	e := newEnv(t, "")
	id := provisioner.NamedResourceID("k8s", "orders")
	name := "runtime-" + pidOf(&provisioner.Resource{ID: id})
	t.Cleanup(func() {
		_ = e.p.Deprovision(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime})
	})
	var written atomic.Int32
	p := e.observedProvisioner("", func(req *http.Request) {
		if req.Method != http.MethodPatch || req.Header.Get("Content-Type") != string(types.JSONPatchType) || !strings.HasSuffix(req.URL.Path, "/persistentvolumeclaims/"+name) || written.Load() == writes {
			return
		}
		n := written.Add(1)
		edit := fmt.Sprintf(`{"metadata": {"annotations": {"example.com/written": "%d"}}}`, n)
		if _, err := e.core.PersistentVolumeClaims(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(edit), metav1.PatchOptions{FieldManager: "another-writer"}); err != nil {
			t.Errorf("writing the claim before its patch: %v", err)
		}
	})
	p.SetName("k8s")
	opts := args(1, "v0.51.0", true)
	opts.Name = "orders"
	_, created, err := p.ProvisionReportingCreation(e.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts)
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v, want a created runtime", created, err)
	}
	if got := written.Load(); got != writes {
		t.Fatalf("the claim was written before %d of its patches, want %d", got, writes)
	}
	e.claimOwnedByOneApplyEntry(name)
}

// claimOwnedByOneApplyEntry fails the test unless the volume claim's fields are owned as a
// server-side apply that created it would own them: by the Apply entry of this provisioner's field
// manager, with no Update entry of its own beside it.
func (e *env) claimOwnedByOneApplyEntry(name string) {
	e.t.Helper()
	pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var ours []string
	for _, f := range pvc.ManagedFields {
		if f.Manager == FieldManager {
			ours = append(ours, string(f.Operation))
		}
	}
	if len(ours) != 1 || ours[0] != string(metav1.ManagedFieldsOperationApply) {
		e.t.Fatalf("the claimed volume's managed fields of %s: %v, want one Apply entry", FieldManager, ours)
	}
}

// A create of a named runtime killed between its claim's create of the first object and the
// managed-fields rewrite that follows it (a kill -9 of terraform or of the provider, a lost runner)
// leaves that object with an Update entry of this provisioner's field manager. The next apply (from
// another workspace directory: no state) adopts the runtime and must leave the volume claim owned
// as the claim would have: by one Apply entry. Before, the Update entry stayed for good (found by the
// crash walk), so a field that a later template drops would have stayed on the volume claim.
func TestIntegrationAnAdoptionFoldsWhatAClaimCutShortLeft(t *testing.T) {
	e := newEnv(t, "")
	e.p.SetName("k8s")
	id := provisioner.NamedResourceID("k8s", "orders")
	opts := args(1, "v0.51.0", true)
	opts.Name = "orders"
	pid, err := provisionIDFor(id)
	if err != nil {
		t.Fatal(err)
	}
	rtArgs, err := provisioner.NewRuntimeArgs(opts.Args)
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := e.p.renderRuntime(e.p.runtimeData(pid, e.ns, rtArgs, opts))
	if err != nil {
		t.Fatal(err)
	}
	gvr, err := e.c.resourceFor(e.ctx, objs[0].obj.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	// What the killed claim did: its plain create of the first object, and nothing after it.
	if _, err := e.c.dynamic.Resource(gvr).Namespace(e.ns).Create(e.ctx, objs[0].obj, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		t.Fatal(err)
	}
	r := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	t.Cleanup(func() { _ = e.p.Deprovision(e.ctx, r) })
	e.provision(e.p, r, opts)
	e.claimOwnedByOneApplyEntry(objs[0].obj.GetName())
	got, err := e.p.CheckResource(e.ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d := provisioner.NewRuntimeObservation(got.State).Drift; len(d) > 0 {
		t.Fatalf("drift after the adopting apply: %v", d)
	}
}
