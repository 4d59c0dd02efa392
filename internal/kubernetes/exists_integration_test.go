package kubernetes

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// ResourceExists, the plan-time question "is a runtime at this named ID already?", answers from the
// snapshots CheckResource shares: the plan of many new named runtimes costs one LIST per kind and
// not a single GET, whether the runtimes exist or not. A runtime counts as existing while any of its
// objects does (its Deployment deleted by hand: the apply adopts the rest).
func TestIntegrationResourceExistsCostsOneListPerKind(t *testing.T) {
	e := newEnv(t, "")
	e.p.SetName("k8s")
	named := func(name string) *provisioner.Resource {
		return &provisioner.Resource{ID: provisioner.NamedResourceID("k8s", name), Type: provisioner.ResourceTypeRuntime}
	}
	for _, name := range []string{"orders", "billing"} {
		r := named(name)
		t.Cleanup(func() { _ = e.p.Deprovision(e.ctx, r) })
		o := args(1, "v1", false)
		o.Name = name
		e.provision(e.p, r, o)
	}
	e.deleteAndWait(gvrOf("deployments"), "runtime-"+pidOf(named("billing")))

	p, log := e.recordingProvisioner("")
	p.SetName("k8s")
	clock := time.Now() // the snapshots' bounds do not run out on a slow machine
	p.reads.now = func() time.Time { return clock }
	const fresh = 20
	var wg sync.WaitGroup
	errs := make([]error, fresh)
	for i := range fresh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.ResourceExists(e.ctx, named(fmt.Sprintf("new-%d", i)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Errorf("new-%d: %v, want not found", i, err)
		}
	}
	for _, name := range []string{"orders", "billing"} {
		where, err := p.ResourceExists(e.ctx, named(name))
		if err != nil || !strings.Contains(where, "namespace "+e.ns) {
			t.Errorf("%s: %q, %v; want it found in namespace %s", name, where, err, e.ns)
		}
	}
	t.Logf("%d existence checks: %v", fresh+2, log.summary())
	// Deployments, Services, claims and Ingresses: one LIST each, nothing else.
	if l, g, all := log.lists(e.ns), log.gets(e.ns), log.len(); l != 4 || g != 0 || all != 4 {
		t.Fatalf("%d LISTs (want 4, one per kind), %d GETs of single objects (want 0), %d requests (want 4)", l, g, all)
	}
}
