package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

const gib = int64(1024 * 1024 * 1024)

// env is one integration test's namespace and provisioner.
type env struct {
	t   *testing.T
	ctx context.Context
	ns  string
	p   *Provisioner
	c   *clients
	// Typed clients for the tests' own reads and edits (the provisioner has none: see clients).
	core corev1client.CoreV1Interface
	apps appsv1client.AppsV1Interface
}

// newEnv creates a namespace and a provisioner for it; extraSpec is appended to the spec object.
func newEnv(t *testing.T, extraSpec string) *env {
	t.Helper()
	needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ns := "rill-test-" + randomHex(4)
	e := &env{t: t, ctx: ctx, ns: ns}
	e.p = e.provisioner(extraSpec, zaptest.NewLogger(t))
	c, err := e.p.clients.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	if e.core, err = corev1client.NewForConfig(c.config); err != nil {
		t.Fatal(err)
	}
	if e.apps, err = appsv1client.NewForConfig(c.config); err != nil {
		t.Fatal(err)
	}
	if _, err := e.core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return e
}

func (e *env) provisioner(extraSpec string, logger *zap.Logger) *Provisioner {
	e.t.Helper()
	spec := fmt.Sprintf(`{"host": "http://*.rill.test", "namespace": %q, "kubeconfig_path": %q, "timeout_seconds": 60, "ping_path": ""%s}`,
		e.ns, testKubeconfig, extraSpec)
	p, err := newProvisioner([]byte(spec), logger)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newRuntime returns a runtime resource with a fresh UUID-shaped ID; it is deprovisioned at cleanup.
func (e *env) newRuntime() *provisioner.Resource {
	h := randomHex(16)
	r := &provisioner.Resource{ID: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], Type: provisioner.ResourceTypeRuntime}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.p.Deprovision(ctx, r); err != nil {
			e.t.Logf("cleanup: %v", err)
		}
	})
	return r
}

// provisionedRuntime is a new runtime provisioned with one slot at v1 (not awaited), and the name
// of its objects.
func (e *env) provisionedRuntime() (*provisioner.Resource, string) {
	e.t.Helper()
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	return r, "runtime-" + pidOf(r)
}

func args(slots int, version string, hibernated bool) *provisioner.ResourceOptions {
	return &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: slots, Version: version, Hibernated: hibernated}).AsMap()}
}

// provision provisions r and stores the returned state and config in it, as the Terraform layer does.
func (e *env) provision(p *Provisioner, r *provisioner.Resource, opts *provisioner.ResourceOptions) *provisioner.Resource {
	e.t.Helper()
	out, err := p.Provision(e.ctx, r, opts)
	if err != nil {
		e.t.Fatalf("Provision: %v", err)
	}
	r.State, r.Config = out.State, out.Config
	return out
}

// namedRuntime provisions a runtime of args(1, "v1", false) named name, of e.p named "k8s" in the
// set, deprovisioned at the test's end, and returns it with its options.
func (e *env) namedRuntime(name string) (*provisioner.Resource, *provisioner.ResourceOptions) {
	e.t.Helper()
	e.p.SetName("k8s")
	r := &provisioner.Resource{ID: provisioner.NamedResourceID("k8s", name), Type: provisioner.ResourceTypeRuntime}
	e.t.Cleanup(func() { _ = e.p.Deprovision(e.ctx, r) })
	opts := args(1, "v1", false)
	opts.Name = name
	e.provision(e.p, r, opts)
	return r, opts
}

// driftOf is the drift a fresh CheckResource of r through p reports (as the next Terraform command,
// which starts with ForgetReads, sees it), for a runtime of args(1, "v1", false).
func (e *env) driftOf(p *Provisioner, r *provisioner.Resource) []string {
	e.t.Helper()
	return e.driftWith(p, r, args(1, "v1", false))
}

// driftWith is driftOf for a runtime of opts.
func (e *env) driftWith(p *Provisioner, r *provisioner.Resource, opts *provisioner.ResourceOptions) []string {
	e.t.Helper()
	p.ForgetReads()
	checked, err := p.CheckResource(e.ctx, r, opts)
	if err != nil {
		e.t.Fatalf("CheckResource: %v", err)
	}
	return checked.State[StateDrift].([]string)
}

func (e *env) awaitReady(r *provisioner.Resource) {
	e.t.Helper()
	start := time.Now()
	if err := e.p.AwaitReady(e.ctx, r); err != nil {
		e.t.Fatalf("AwaitReady: %v", err)
	}
	e.t.Logf("ready after %s", time.Since(start).Round(time.Millisecond))
}

func pidOf(r *provisioner.Resource) string {
	pid, _ := provisionIDFor(r.ID)
	return pid
}

func (e *env) pvcSize(r *provisioner.Resource) int64 {
	e.t.Helper()
	pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.Value()
}

func TestIntegrationProvisionTwoRuntimes(t *testing.T) {
	e := newEnv(t, "")
	r1, r2 := e.newRuntime(), e.newRuntime()
	out1 := e.provision(e.p, r1, args(1, "v0.50.0", false))
	out2 := e.provision(e.p, r2, args(2, "", false))

	for _, tc := range []struct {
		r     *provisioner.Resource
		out   *provisioner.Resource
		slots int
		tag   string
	}{{r1, out1, 1, "v0.50.0"}, {r2, out2, 2, "latest"}} {
		pid := pidOf(tc.r)
		dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ct := dep.Spec.Template.Spec.Containers[0]
		if ct.Image != "rilldata/rill:"+tc.tag {
			t.Errorf("image %s", ct.Image)
		}
		cpu, mem := ct.Resources.Requests[corev1.ResourceCPU], ct.Resources.Limits[corev1.ResourceMemory]
		if cpu.Cmp(*resource.NewQuantity(int64(tc.slots), resource.DecimalSI)) != 0 || mem.Value() != int64(4*tc.slots)*gib {
			t.Errorf("%d slots: cpu %s memory %s", tc.slots, cpu.String(), mem.String())
		}
		if got := e.pvcSize(tc.r); got != int64(tc.slots)*40*gib {
			t.Errorf("%d slots: volume %d bytes", tc.slots, got)
		}
		// Every object, by name, with our labels and annotations.
		for _, obj := range []struct {
			gvr  schema.GroupVersionResource
			name string
		}{
			{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "runtime-" + pid},
			{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "runtime-" + pid},
			{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, "runtime-" + pid},
			{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "http-runtime-" + pid},
			{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "grpc-runtime-" + pid},
		} {
			o, err := e.c.dynamic.Resource(obj.gvr).Namespace(e.ns).Get(e.ctx, obj.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s %s: %v", obj.gvr.Resource, obj.name, err)
			}
			if l := o.GetLabels(); l[LabelManagedBy] != ManagedByValue || l[LabelInstance] != pid {
				t.Errorf("%s %s labels %v", obj.gvr.Resource, obj.name, l)
			}
			a := o.GetAnnotations()
			if a[AnnotationSlots] != fmt.Sprint(tc.slots) || a[AnnotationVersion] != tc.tag || a[AnnotationHibernated] != "false" || a[AnnotationTemplatesChecksum] != e.p.templates.checksum {
				t.Errorf("%s %s annotations %v", obj.gvr.Resource, obj.name, a)
			}
			for _, mf := range o.GetManagedFields() {
				if mf.Operation == metav1.ManagedFieldsOperationApply && mf.Manager != FieldManager {
					t.Errorf("%s %s applied by %q", obj.gvr.Resource, obj.name, mf.Manager)
				}
			}
		}
		cfg, err := provisioner.NewRuntimeConfig(tc.out.Config)
		if err != nil {
			t.Fatal(err)
		}
		want := provisioner.RuntimeConfig{Host: "http://" + pid + ".rill.test", Audience: "http://" + pid + ".rill.test",
			CPU: tc.slots, MemoryGB: 4 * tc.slots, StorageBytes: int64(tc.slots) * 40 * gib}
		if *cfg != want {
			t.Errorf("config %+v, want %+v", *cfg, want)
		}
	}

	// Both become ready (kwok runs the pods); the shared client serves both waits at once.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []*provisioner.Resource{r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.p.AwaitReady(e.ctx, r)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	// Idempotent: the same args again change nothing, and CheckResource agrees with Provision.
	before, _ := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r1), metav1.GetOptions{})
	again := e.provision(e.p, r1, args(1, "v0.50.0", false))
	after, _ := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r1), metav1.GetOptions{})
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("a repeated Provision changed the Deployment (resourceVersion %s -> %s)", before.ResourceVersion, after.ResourceVersion)
	}
	if !reflect.DeepEqual(again.State, out1.State) || !reflect.DeepEqual(again.Config, out1.Config) {
		t.Errorf("repeated Provision returned %v / %v, first %v / %v", again.State, again.Config, out1.State, out1.Config)
	}
	checked, err := e.p.CheckResource(e.ctx, r1, args(1, "v0.50.0", false))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(checked.State, out1.State) || !reflect.DeepEqual(checked.Config, out1.Config) {
		t.Errorf("CheckResource returned\n%v / %v\nProvision returned\n%v / %v", checked.State, checked.Config, out1.State, out1.Config)
	}
}

func TestIntegrationSlotsGrowTheVolumeButNeverShrinkIt(t *testing.T) {
	e := newEnv(t, "")
	core, logs := observer.New(zap.WarnLevel)
	e.p.logger = zap.New(core)
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)

	out := e.provision(e.p, r, args(2, "v1", false))
	e.awaitReady(r)
	if got := e.pvcSize(r); got != 80*gib {
		t.Fatalf("1 -> 2 slots: volume %d bytes, want %d", got, 80*gib)
	}
	if out.Config["storage_bytes"] != 80*gib || out.Config["cpu"] != 2 {
		t.Fatalf("config %v", out.Config)
	}
	if w := out.State[StateWarnings].([]string); len(w) != 0 {
		t.Fatalf("unexpected warnings %v", w)
	}

	out = e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	if got := e.pvcSize(r); got != 80*gib {
		t.Fatalf("2 -> 1 slots: volume %d bytes, want it kept at %d", got, 80*gib)
	}
	warnings := out.State[StateWarnings].([]string)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "never shrunk") {
		t.Fatalf("want one warning about the volume, got %v", warnings)
	}
	if logs.FilterMessageSnippet("never shrunk").Len() != 1 {
		t.Fatalf("the warning must be logged too: %v", logs.All())
	}
	if out.Config["storage_bytes"] != 80*gib || out.Config["cpu"] != 1 || out.Config["memory_gb"] != 4 {
		t.Fatalf("config %v", out.Config)
	}
	dep, _ := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if cpu := dep.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; cpu.Value() != 1 {
		t.Fatalf("cpu %s after going back to 1 slot", cpu.String())
	}
	// Reading back gives the same state, warning included: no perpetual diff.
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(checked.State, out.State) || !reflect.DeepEqual(checked.Config, out.Config) {
		t.Fatalf("CheckResource %v / %v, Provision %v / %v", checked.State, checked.Config, out.State, out.Config)
	}
}

// A growth that the volume's StorageClass refuses (allowVolumeExpansion false) fails with the API
// server's reason and the hint that names the field, and changes nothing. The control plane's
// StorageClass is set so for the test and set back after it; on a cluster of RILL_TEST_KUBECONFIG,
// whose StorageClass is not the control plane's, the test is skipped rather than edit it.
func TestIntegrationGrowthTheStorageClassRefusesNamesAllowVolumeExpansion(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := pvc.Spec.StorageClassName; sc == nil || *sc != "kwok-volume" {
		t.Skipf("the claim's StorageClass is %v, not the local control plane's kwok-volume: not editing it", sc)
	}
	classes := e.c.dynamic.Resource(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"})
	expansion := func(allow bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"allowVolumeExpansion": %t}`, allow)
		if _, err := classes.Patch(context.Background(), "kwok-volume", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	class, err := classes.Get(e.ctx, "kwok-volume", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allowed, _, _ := unstructured.NestedBool(class.Object, "allowVolumeExpansion")
	expansion(false)
	t.Cleanup(func() { expansion(allowed) })

	out, err := e.p.Provision(e.ctx, r, args(2, "v1", false))
	if err == nil {
		t.Fatalf("growing a volume whose StorageClass does not allow it succeeded: %v", out.Config)
	}
	if !strings.Contains(err.Error(), "allowVolumeExpansion: true") || strings.Contains(err.Error(), "rbac.yaml") {
		t.Errorf("growth refused by the StorageClass: %v; want the allowVolumeExpansion hint and none about RBAC", err)
	}
	if got := e.pvcSize(r); got != 40*gib {
		t.Errorf("volume %d bytes after the refused growth, want %d", got, 40*gib)
	}
}

func TestIntegrationVersionChangeUpdatesTheImage(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	out := e.provision(e.p, r, &provisioner.ResourceOptions{Args: args(1, "", false).Args, RillVersion: "v2"})
	e.awaitReady(r)
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "rilldata/rill:v2" {
		t.Fatalf("image %s", img)
	}
	if !RolledOut(dep, false) {
		t.Fatalf("AwaitReady returned before the rollout finished: %+v", dep.Status)
	}
	if out.State[StateVersion] != "" || out.State[StateImageTag] != "v2" {
		t.Fatalf("state %v", out.State)
	}
}

func TestIntegrationHibernateScalesToZeroAndBack(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)

	e.provision(e.p, r, args(1, "v1", true))
	e.awaitReady(r)
	dep, _ := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if *dep.Spec.Replicas != 0 || dep.Status.Replicas != 0 {
		t.Fatalf("hibernated: spec %d replicas, status %d", *dep.Spec.Replicas, dep.Status.Replicas)
	}
	if e.pvcSize(r) != 40*gib {
		t.Fatal("the volume must stay while hibernated")
	}
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", true))
	if err != nil {
		t.Fatal(err)
	}
	if checked.State[StateHibernated] != true || len(checked.State[StateDrift].([]string)) != 0 {
		t.Fatalf("state %v", checked.State)
	}

	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	dep, _ = e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if !RolledOut(dep, false) {
		t.Fatalf("woken up: %+v", dep.Status)
	}
}

// A Deployment deleted by hand, next to the runtime's other objects, is drift that Provision repairs
// under the same name and on the same volume; a runtime none of whose objects is left is gone.
func TestIntegrationDeletedDeploymentIsDriftAndAllObjectsDeletedIsNotFound(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	pid := pidOf(r)
	name := "runtime-" + pid
	pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.deleteAndWait(gvrOf("deployments"), name)

	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource: %v", err)
	}
	drift := checked.State[StateDrift].([]string)
	want := fmt.Sprintf("Deployment %s/%s is missing: apply re-creates it under the same name, on the existing volume %s/%s", e.ns, name, e.ns, name)
	if len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift %q, want [%q]", drift, want)
	}
	if checked.State[StateSlots] != 1 || checked.State[StateVersion] != "v1" {
		t.Fatalf("state %v", checked.State)
	}

	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	after, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != pvc.UID {
		t.Fatalf("the volume was replaced: uid %s, was %s", after.UID, pvc.UID)
	}
	checked, err = e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil || len(checked.State[StateDrift].([]string)) != 0 {
		t.Fatalf("after the repair: err %v, state %v", err, checked.State)
	}

	// Every object deleted by hand: gone (in the next Terraform command, which starts with
	// ForgetReads; TestIntegrationChecksShareOneSnapshot shows how long a snapshot serves without it).
	e.deleteRuntimeByHand(r)
	e.p.ForgetReads()
	_, err = e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("want ErrResourceNotFound, got %v", err)
	}
}

// The spec's host is a template input, not a template (the templates' checksum stays the same): once
// it changes, CheckResource reports each Ingress that still serves the old host as drift, so Terraform
// plans the update that re-applies them; before, the plan was empty while the runtime's host attribute
// already named the new URL, which no Ingress served. A hand edit of an Ingress's host is drift too.
func TestIntegrationHostChangedInTheSpecIsIngressDrift(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	pid := pidOf(r)
	spec := fmt.Sprintf(`{"host": "https://*.moved.test", "namespace": %q, "kubeconfig_path": %q, "timeout_seconds": 60, "ping_path": ""}`, e.ns, testKubeconfig)
	moved, err := newProvisioner([]byte(spec), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("spec.host: the runtime was applied with %s.rill.test, the spec now says %s.moved.test", pid, pid),
		fmt.Sprintf("Ingress %s/http-runtime-%s serves host(s) %s.rill.test, want %s.moved.test", e.ns, pid, pid, pid),
		fmt.Sprintf("Ingress %s/grpc-runtime-%s serves host(s) %s.rill.test, want %s.moved.test", e.ns, pid, pid, pid),
	}
	if drift := e.driftOf(moved, r); !reflect.DeepEqual(drift, want) {
		t.Fatalf("drift %q, want %q", drift, want)
	}

	e.provision(moved, r, args(1, "v1", false))
	if drift := e.driftOf(moved, r); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}
	ing, err := e.c.dynamic.Resource(gvrOf("ingresses")).Namespace(e.ns).Get(e.ctx, "http-runtime-"+pid, metav1.GetOptions{})
	if err != nil || !slices.Equal(ingressHosts(ing), []string{pid + ".moved.test"}) {
		t.Fatalf("after the apply the Ingress serves %v (%v)", ingressHosts(ing), err)
	}
}

// The spec's data_dir feeds the Deployment as data (the mount path and RILL_RUNTIME_DATA_DIR), not as
// template text: once it changes, CheckResource reports it as drift naming both values, so Terraform
// plans the update that re-applies the Deployment; before, the plan was empty and the runtime kept the
// old data dir. Objects without the record of their inputs (applied by an earlier version of this
// provider) are no drift: the plan after upgrading stays empty.
func TestIntegrationDataDirChangedInTheSpecIsDrift(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	moved := e.provisioner(`, "data_dir": "/mnt/data"`, zaptest.NewLogger(t))
	want := []string{"spec.data_dir: the runtime was applied with /data, the spec now says /mnt/data"}
	if drift := e.driftOf(moved, r); !reflect.DeepEqual(drift, want) {
		t.Fatalf("drift %q, want %q", drift, want)
	}

	e.provision(moved, r, args(1, "v1", false))
	if drift := e.driftOf(moved, r); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}
	name := "runtime-" + pidOf(r)
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct := dep.Spec.Template.Spec.Containers[0]
	if len(ct.VolumeMounts) != 1 || ct.VolumeMounts[0].MountPath != "/mnt/data" || !slices.Contains(ct.Env, corev1.EnvVar{Name: "RILL_RUNTIME_DATA_DIR", Value: "/mnt/data"}) {
		t.Fatalf("after the apply the Deployment mounts %v with env %v", ct.VolumeMounts, ct.Env)
	}

	// Upgrading from a version that did not record the inputs: no object carries the annotation.
	strip := []byte(`{"metadata": {"annotations": {"` + AnnotationTemplateInputs + `": null}}}`)
	for _, resource := range []string{"deployments", "services", "persistentvolumeclaims"} {
		if _, err := e.c.dynamic.Resource(gvrOf(resource)).Namespace(e.ns).Patch(e.ctx, name, types.MergePatchType, strip, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ingress := range []string{"http-" + name, "grpc-" + name} {
		if _, err := e.c.dynamic.Resource(gvrOf("ingresses")).Namespace(e.ns).Patch(e.ctx, ingress, types.MergePatchType, strip, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if drift := e.driftOf(moved, r); len(drift) != 0 {
		t.Fatalf("objects without the inputs annotation: drift %q", drift)
	}
}

// A Service port edited by hand (kubectl patch or edit) is drift, so the plan shows it (the apply
// repairs it: the next test); before, the plan was empty while the Ingresses routed to a port the
// Service no longer had.
func TestIntegrationServicePortEditedByHandIsDrift(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	patch := []byte(`[{"op": "replace", "path": "/spec/ports/0/port", "value": 1234}]`)
	if _, err := e.core.Services(e.ns).Patch(e.ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.p.ForgetReads()
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource: %v", err)
	}
	want := fmt.Sprintf("Service %s/%s: spec.ports[http].port is 1234, want 8080", e.ns, name)
	if drift := checked.State[StateDrift].([]string); len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift %q, want [%q]", drift, want)
	}
}

// A provider label removed by hand is drift, and the apply puts it back: without it the runtime
// dropped out of what lists a cluster's runtimes (rill_allocations, the recovery guide's kubectl
// query) while its plan stayed empty (found by a walkthrough).
func TestIntegrationALabelRemovedByHandIsDriftAndRepairedByTheApply(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	patch := []byte(`{"metadata": {"labels": {"app.kubernetes.io/managed-by": null}}}`)
	if _, err := e.core.Services(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Service %s/%s: label %s is missing, want %q", e.ns, name, LabelManagedBy, ManagedByValue)
	if drift := e.driftOf(e.p, r); len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift %q, want [%q]", drift, want)
	}
	e.provision(e.p, r, args(1, "v1", false))
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}
}

// The provisioner's annotations are its record of what it applied, which an import, rill_allocations
// and the recovery guide read back: one edited or removed by hand is drift, and the apply writes it
// again. Before, the plan stayed empty (the version is observed from the image, hibernated from the
// replicas, so nothing else differed). What others annotate (kubectl, a controller) is no drift, and
// the apply leaves it.
func TestIntegrationAProvisionerAnnotationEditedByHandIsDriftAndRepairedByTheApply(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	// The Deployment also carries the deployment controller's deployment.kubernetes.io/revision.
	edit, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		AnnotationVersion: "v9", "kubectl.kubernetes.io/last-applied-configuration": "{}",
	}}})
	if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, edit, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	remove := []byte(`{"metadata": {"annotations": {"` + AnnotationHibernated + `": null}}}`)
	if _, err := e.core.Services(e.ns).Patch(e.ctx, name, types.MergePatchType, remove, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("Deployment %s/%s: annotation %s is %q, want %q", e.ns, name, AnnotationVersion, "v9", "v1"),
		fmt.Sprintf("Service %s/%s: annotation %s is missing, want %q", e.ns, name, AnnotationHibernated, "false"),
	}
	if drift := e.driftOf(e.p, r); !reflect.DeepEqual(drift, want) {
		t.Fatalf("drift %q, want %q", drift, want)
	}
	e.provision(e.p, r, args(1, "v1", false))
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := dep.Annotations; a[AnnotationVersion] != "v1" || a["kubectl.kubernetes.io/last-applied-configuration"] != "{}" {
		t.Fatalf("after the apply: annotations %v, want %s v1 and kubectl's left as it was", a, AnnotationVersion)
	}
}

// A slots annotation edited by hand is not the runtime's size: the objects' sizes say (the
// annotation's field belongs to kubectl's field manager then, not to the provisioner's apply), and
// the edit is drift, which the apply repairs. Before, the runtime was reported at the edited size,
// and the drift blamed its volume and containers for being too small.
func TestIntegrationASlotsAnnotationEditedByHandIsDriftNotTheRuntimesSize(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	patch := []byte(`{"metadata": {"annotations": {"` + AnnotationSlots + `": "3"}}}`)
	// As kubectl annotate --overwrite patches it (the test's client would patch as the provisioner).
	if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	e.p.ForgetReads()
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource: %v", err)
	}
	want := []string{fmt.Sprintf("Deployment %s/%s: annotation %s is %q, want %q", e.ns, name, AnnotationSlots, "3", "1")}
	if slots, drift := checked.State[StateSlots], checked.State[StateDrift].([]string); slots != 1 || !reflect.DeepEqual(drift, want) {
		t.Fatalf("slots %v, drift %q; want 1, %q", slots, drift, want)
	}
	e.provision(e.p, r, args(1, "v1", false))
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}

	// Edited, then set back by hand to the value the apply writes, before the apply: server-side
	// apply then shares the field between kubectl's manager and the apply, and keeps it shared. That
	// value is the apply's, no hand edit; taking it for one made the objects' sizes say the slots at
	// every refresh (wrong for templates that do not size by slots: a plan never empty).
	for _, v := range []string{"3", "1"} {
		patch := []byte(`{"metadata": {"annotations": {"` + AnnotationSlots + `": "` + v + `"}}}`)
		if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
			t.Fatal(err)
		}
	}
	e.provision(e.p, r, args(1, "v1", false))
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kubectlOwns bool
	for _, mf := range dep.ManagedFields {
		kubectlOwns = kubectlOwns || mf.Manager == "kubectl-annotate" && fieldsAt(mf, "f:metadata", "f:annotations", "f:"+AnnotationSlots) != nil
	}
	if !kubectlOwns {
		t.Fatalf("kubectl's manager does not share the slots annotation with the apply (%v): this test proves nothing", dep.ManagedFields)
	}
	if annotationEditedByHand(dep.ManagedFields, AnnotationSlots) {
		t.Fatal("a slots annotation that holds the apply's value, shared with kubectl's manager, is taken for a hand edit")
	}
	live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	if err != nil {
		t.Fatal(err)
	}
	if kept := checkedOwners(&unstructured.Unstructured{Object: live}); len(kept) != 0 {
		t.Fatalf("the snapshot keeps %d managed-fields entries, want none (the slots annotation holds the apply's value)", len(kept))
	}
}

// A runtime applied with other args than the refresh is given (resized, hibernated and moved to
// another tag by another configuration or an apply this state did not record): its record says what
// is there, which is no drift; the observed slots, version and hibernated plan the update.
func TestIntegrationARecordThatSaysWhatIsThereIsNoDrift(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(2, "v2", true))
	e.p.ForgetReads()
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource: %v", err)
	}
	st := checked.State
	if drift := st[StateDrift].([]string); len(drift) != 0 || st[StateSlots] != 2 || st[StateVersion] != "v2" || st[StateHibernated] != true {
		t.Fatalf("drift %q, slots %v, version %v, hibernated %v; want no drift, 2, v2, true", drift, st[StateSlots], st[StateVersion], st[StateHibernated])
	}
}

// A named runtime's name annotation removed by hand is drift, which the apply repairs: the objects
// still say by their name-hash label which name they were made for. Before, the apply refused them
// as another runtime's ("carries the name \"\", not \"orders\""), and every plan showed the drift.
func TestIntegrationANamedRuntimesNameAnnotationRemovedByHandIsRepairedByTheApply(t *testing.T) {
	e := newEnv(t, "")
	r, opts := e.namedRuntime("orders")
	name := "runtime-" + pidOf(r)
	remove := []byte(`{"metadata": {"annotations": {"` + AnnotationName + `": null}}}`)
	if _, err := e.core.Services(e.ns).Patch(e.ctx, name, types.MergePatchType, remove, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Service %s/%s: annotation %s is missing, want %q", e.ns, name, AnnotationName, "orders")
	if drift := e.driftWith(e.p, r, opts); len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift %q, want [%q]", drift, want)
	}
	e.provision(e.p, r, opts)
	if drift := e.driftWith(e.p, r, opts); len(drift) != 0 {
		t.Fatalf("after the apply: drift %q", drift)
	}
}

// The drift above is what the apply repairs: server-side apply alone merges spec.ports by (port,
// protocol) and keeps the entry kubectl's field manager changed beside the rendered one, both named
// "http", which the API server refused ("spec.ports[1].name: Duplicate value"); Provision replaces
// the list first, so the Service has exactly the rendered ports, the drift is gone, and a second
// Provision changes nothing. A named runtime's Service comes from the objects Provision reads anyway,
// an unnamed one's from a GET of the Service.
func TestIntegrationServicePortEditedByHandIsRepairedByTheApply(t *testing.T) {
	for _, name := range []string{"", "orders"} {
		t.Run("name="+name, func(t *testing.T) {
			e := newEnv(t, "")
			core, logs := observer.New(zap.InfoLevel)
			e.p.logger = zap.New(core)
			opts := args(1, "v1", false)
			opts.Name = name
			r := e.newRuntime()
			e.provision(e.p, r, opts)
			svcName := "runtime-" + pidOf(r)
			services := e.core.Services(e.ns)
			patch := []byte(`[{"op": "replace", "path": "/spec/ports/0/port", "value": 1234}]`)
			if _, err := services.Patch(e.ctx, svcName, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
				t.Fatal(err)
			}
			if drift := e.driftOf(e.p, r); len(drift) != 1 || !strings.Contains(drift[0], "spec.ports[http].port is 1234, want 8080") {
				t.Fatalf("drift %q, want the edited port", drift)
			}
			e.provision(e.p, r, opts)
			if drift := e.driftOf(e.p, r); len(drift) != 0 {
				t.Fatalf("drift after the apply %q, want none", drift)
			}
			svc, err := services.Get(e.ctx, svcName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var ports []string
			for _, p := range svc.Spec.Ports {
				ports = append(ports, fmt.Sprintf("%s %d->%s", p.Name, p.Port, p.TargetPort.String()))
			}
			slices.Sort(ports)
			if want := []string{"grpc 9090->grpc", "http 8080->http"}; !slices.Equal(ports, want) {
				t.Errorf("ports %q, want %q", ports, want)
			}
			repaired := logs.FilterMessage("replaced lists edited outside Terraform").All()
			if len(repaired) != 1 || !strings.Contains(fmt.Sprint(repaired[0].ContextMap()["had"]), "spec.ports[http].port is 1234, want 8080") {
				t.Errorf("repair logged %v, want one entry with the edited port", repaired)
			}
			e.provision(e.p, r, opts)
			again, err := services.Get(e.ctx, svcName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if again.ResourceVersion != svc.ResourceVersion {
				t.Errorf("a second Provision changed the Service (resourceVersion %s -> %s)", svc.ResourceVersion, again.ResourceVersion)
			}
		})
	}
}

// A volume claim being deleted (a destroy that a finalizer held up, as in the troubleshooting guide's
// "objects still exist") is no volume to re-create the runtime on: CheckResource says so in the drift
// instead of promising the Deployment back "on the existing volume", and Provision refuses at once,
// naming the claim and its finalizers, before it writes anything (it returns no resource, so the
// update's error can say "unchanged"); before, it re-created the Deployment on the claim and waited
// the whole timeout_seconds for a pod that can never be scheduled.
func TestIntegrationVolumeBeingDeletedIsDriftAndRefusedBeforeAnyWrite(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime() // its pod runs: no pod of its ReplicaSet can come after the delete below
	const finalizer = "rill.test/hold"
	pvcs := e.core.PersistentVolumeClaims(e.ns)
	patch := []byte(`{"metadata":{"finalizers":["` + finalizer + `"]}}`)
	if _, err := pvcs.Patch(e.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pvcs.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	// In the foreground, once its pod runs: a pod of the Deployment still there mounts the claim and,
	// run by no Deployment, is what the refusal names (delete it) instead of the finalizer this test
	// is about. Deleted in the background, the Deployment left its pod until the garbage collector
	// deleted it, and a wait for no pod mounting the claim could end before the ReplicaSet had even
	// made the pod (it failed so in CI). A ReplicaSet being deleted makes no pod.
	k8stest.DeleteWithDependentsAndWait(t, e.ctx, e.c.dynamic, gvrOf("deployments"), e.ns, name)
	if pods := e.podsMounting(name); len(pods) > 0 {
		t.Fatalf("pods %v mount the claim after their Deployment was deleted in the foreground", pods)
	}
	if err := pvcs.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.p.ForgetReads()

	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource: %v", err)
	}
	// The volume's own protection finalizer may be there too, and the pod that mounts it, while the
	// pod goes away.
	beingDeleted := fmt.Sprintf(`^volume %s/%s is being deleted \(finalizers: [^)]*%s[^)]*\)(, mounted by pods? \S+)?`, e.ns, name, regexp.QuoteMeta(finalizer))
	drift := checked.State[StateDrift].([]string)
	wantDeployment := fmt.Sprintf("Deployment %s/%s is missing: apply re-creates it under the same name", e.ns, name)
	if len(drift) != 2 || !regexp.MustCompile(beingDeleted+`: apply fails until it is gone$`).MatchString(drift[0]) || drift[1] != wantDeployment {
		t.Fatalf("drift %q, want [%q, %q]", drift, beingDeleted+": apply fails until it is gone", wantDeployment)
	}

	start := time.Now()
	out, err := e.p.Provision(e.ctx, r, args(1, "v1", false))
	// It names what holds the claim and what to do.
	refused := beingDeleted + `: nothing was applied: finalizer ` + regexp.QuoteMeta(finalizer) + ` is not Kubernetes' volume protection, .*, then plan again$`
	if err == nil || !regexp.MustCompile(refused).MatchString(err.Error()) {
		t.Fatalf("Provision: %v, want an error matching %q", err, refused)
	}
	if out != nil {
		t.Errorf("Provision returned %v with its error: nothing was written, so nothing is to be recorded", out)
	}
	if _, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err == nil {
		t.Errorf("the Deployment was re-created on the volume being deleted")
	}
	t.Logf("refused after %s (timeout_seconds is 60)", time.Since(start).Round(time.Millisecond))
}

// gvrOf is the resource of the default templates' kinds by resource name.
func gvrOf(resource string) schema.GroupVersionResource {
	for _, gvr := range wellKnown {
		if gvr.Resource == resource {
			return gvr
		}
	}
	panic("not a well-known resource: " + resource)
}

// deleteAndWait deletes an object of the test's namespace by hand and waits until it is gone.
func (e *env) deleteAndWait(gvr schema.GroupVersionResource, name string) {
	e.t.Helper()
	k8stest.DeleteAndWait(e.t, e.ctx, e.c.dynamic, gvr, e.ns, name)
}

// The CheckResource calls of a refresh share one snapshot per kind: 12 runtimes cost exactly one
// paged LIST per kind (plus the cluster identity, once), whether the calls run at once or one after
// the other, with the answers Provision gave; an object the LIST does not select (its managed-by
// label edited by hand) is still found with a GET. Staleness is bounded: a read within the idle
// window answers from the snapshot, one after it (or after maxAge, though reads keep coming) lists
// anew; and a write of this process (another provisioner's Provision or Deprovision in the
// namespace) or ForgetReads (each Terraform command) drops the snapshot.
func TestIntegrationChecksShareOneSnapshot(t *testing.T) {
	e := newEnv(t, "")
	const n, page = 12, 5
	rs := make([]*provisioner.Resource, n)
	want := make([]map[string]any, n)
	for i := range rs {
		rs[i] = e.newRuntime()
		want[i] = e.provision(e.p, rs[i], args(1, "v1", false)).State
	}
	// The managed-by label edited by hand on one runtime's Service: the LIST no longer selects it.
	edited := "runtime-" + pidOf(rs[0])
	patch := []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"edited-by-hand"}}}`)
	if _, err := e.core.Services(e.ns).Patch(e.ctx, edited, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Found, and the edit is drift (TestIntegrationALabelRemovedByHandIsDriftAndRepairedByTheApply).
	want[0][StateDrift] = []string{fmt.Sprintf("Service %s/%s: label %s is %q, want %q", e.ns, edited, LabelManagedBy, "edited-by-hand", ManagedByValue)}

	p, log := e.recordingProvisioner("")
	p.reads.pageSize = page
	clock := time.Now()
	p.reads.now = func() time.Time { return clock }
	pages := func(objects int) int { return (objects + page - 1) / page }
	// Deployments, claims, Services (one not selected), Ingresses (two per runtime).
	lists := pages(n) + pages(n) + pages(n-1) + pages(2*n)
	check := func(r *provisioner.Resource, opts *provisioner.ResourceOptions) (map[string]any, error) {
		checked, err := p.CheckResource(e.ctx, r, opts)
		if err != nil {
			return nil, err
		}
		return checked.State, nil
	}

	got := make([]map[string]any, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = check(r, args(1, "v1", false))
		}()
	}
	wg.Wait()
	for i := range rs {
		if errs[i] != nil {
			t.Fatalf("runtime %d: %v", i, errs[i])
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("runtime %d: checked %v, provisioned %v", i, got[i], want[i])
		}
	}
	for i, r := range rs { // and one after the other, from the same snapshot
		if st, err := check(r, args(1, "v1", false)); err != nil || !reflect.DeepEqual(st, want[i]) {
			t.Errorf("runtime %d, sequential: %v / %v", i, err, st)
		}
	}
	t.Logf("%d concurrent and %d sequential checks: %d requests: %v", n, n, log.len(), log.summary())
	if l, g, all := log.lists(e.ns), log.gets(e.ns), log.len(); l != lists || g != 2 || all != lists+2+1 {
		t.Fatalf("%d LISTs (want %d), %d GETs of single objects (want 2, the edited Service's), %d requests (want %d: and the cluster identity)", l, lists, g, all, lists+3)
	}

	// Within the idle window a read answers from the snapshot: a Service deleted by hand since is
	// still there (at most idle old, and never older than the command). After the window: missing.
	svc := "runtime-" + pidOf(rs[1])
	e.deleteAndWait(gvrOf("services"), svc)
	before := log.len()
	clock = clock.Add(p.reads.idle)
	if st, err := check(rs[1], args(1, "v1", false)); err != nil || len(st[StateDrift].([]string)) != 0 || log.len() != before {
		t.Fatalf("within the idle window: %v, drift %v, %d requests (want none)", err, st, log.len()-before)
	}
	clock = clock.Add(p.reads.idle + time.Millisecond)
	wantMissing := "Service " + e.ns + "/" + svc + " is missing"
	if st, err := check(rs[1], args(1, "v1", false)); err != nil || !slices.Contains(st[StateDrift].([]string), wantMissing) {
		t.Fatalf("after the idle window: %v, state %v; want drift %q", err, st, wantMissing)
	}

	// Reads that keep coming (every idle/2) do not keep a snapshot beyond maxAge: over 2 × maxAge
	// after one was taken, one more is.
	before = log.listsOf(e.ns, "deployments")
	for range int(4 * p.reads.maxAge / p.reads.idle) {
		clock = clock.Add(p.reads.idle / 2)
		if _, err := check(rs[2], args(1, "v1", false)); err != nil {
			t.Fatal(err)
		}
	}
	if l := log.listsOf(e.ns, "deployments") - before; l != pages(n) {
		t.Fatalf("reads every idle/2 for 2 × maxAge: %d LISTs of deployments, want %d (one more snapshot)", l, pages(n))
	}

	// Writes of another provisioner of this process drop the snapshot: an update is seen at once...
	other := e.provisioner("", zaptest.NewLogger(t))
	e.provision(other, rs[2], args(1, "v2", false))
	if st, err := check(rs[2], args(1, "v2", false)); err != nil || st[StateVersion] != "v2" || len(st[StateDrift].([]string)) != 0 {
		t.Fatalf("after another provisioner's update: %v, state %v", err, st)
	}
	// ... and so is a Deprovision.
	if err := other.Deprovision(e.ctx, rs[3]); err != nil {
		t.Fatal(err)
	}
	if _, err := check(rs[3], args(1, "v1", false)); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("after another provisioner's Deprovision: want ErrResourceNotFound, got %v", err)
	}

	// ForgetReads (the next Terraform command) drops it too: a runtime deleted by hand is gone.
	if _, err := check(rs[4], args(1, "v1", false)); err != nil {
		t.Fatal(err)
	}
	e.deleteRuntimeByHand(rs[4])
	p.ForgetReads()
	if _, err := check(rs[4], args(1, "v1", false)); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("after ForgetReads: want ErrResourceNotFound, got %v", err)
	}
}

// deleteRuntimeByHand deletes every object of a runtime and waits until they are gone.
func (e *env) deleteRuntimeByHand(r *provisioner.Resource) {
	e.t.Helper()
	name := "runtime-" + pidOf(r)
	for _, o := range []struct{ resource, name string }{
		{"deployments", name}, {"services", name}, {"persistentvolumeclaims", name},
		{"ingresses", "http-" + name}, {"ingresses", "grpc-" + name},
	} {
		e.deleteAndWait(gvrOf(o.resource), o.name)
	}
}

// requestLog records the requests of a provisioner to the API server as "METHOD path".
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) add(req *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, req.Method+" "+req.URL.Path)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// count counts the GETs of paths under namespace ns whose last segments after it are depth many:
// 1 for a LIST (.../namespaces/<ns>/<resource>), 2 for one object.
func (l *requestLog) count(ns string, depth int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		method, path, _ := strings.Cut(r, " ")
		parts := strings.Split(strings.Trim(path, "/"), "/")
		if method == http.MethodGet && len(parts) > depth && parts[len(parts)-1-depth] == ns {
			n++
		}
	}
	return n
}

func (l *requestLog) lists(ns string) int { return l.count(ns, 1) }
func (l *requestLog) gets(ns string) int  { return l.count(ns, 2) }

// listsOf counts the LISTs of one resource in namespace ns.
func (l *requestLog) listsOf(ns, resource string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if strings.HasSuffix(r, "/namespaces/"+ns+"/"+resource) && strings.HasPrefix(r, http.MethodGet+" ") {
			n++
		}
	}
	return n
}

func (l *requestLog) summary() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, r := range l.reqs {
		out[r]++
	}
	return out
}

// recordingProvisioner returns a provisioner for the env's namespace that records its requests.
func (e *env) recordingProvisioner(extraSpec string) (*Provisioner, *requestLog) {
	log := &requestLog{}
	return e.observedProvisioner(extraSpec, log.add), log
}

// observedProvisioner returns a provisioner for the env's namespace that calls observe with each of
// its requests to the API server before sending it.
func (e *env) observedProvisioner(extraSpec string, observe func(*http.Request)) *Provisioner {
	return e.interceptingProvisioner(extraSpec, func(req *http.Request) error {
		observe(req)
		return nil
	})
}

// interceptingProvisioner returns a provisioner for the env's namespace that calls intercept with
// each of its requests to the API server, and fails the request with intercept's error instead of
// sending it when there is one.
func (e *env) interceptingProvisioner(extraSpec string, intercept func(*http.Request) error) *Provisioner {
	p := e.provisioner(extraSpec, zaptest.NewLogger(e.t))
	p.clients.build = func(spec *Spec) (*clients, error) {
		cfg, err := restConfig(spec)
		if err != nil {
			return nil, err
		}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if err := intercept(req); err != nil {
					return nil, err
				}
				return rt.RoundTrip(req)
			})
		})
		return clientsFor(cfg)
	}
	return p
}

// requestKind names a request to the API server by verb and resource ("apply deployments", "watch
// pods", "get persistentvolumeclaims"), and reports whether it was in namespace ns.
func requestKind(req *http.Request, ns string) (string, bool) {
	_, rest, ok := strings.Cut(req.URL.Path, "/namespaces/"+ns+"/")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	verb := strings.ToLower(req.Method)
	switch {
	case req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true":
		verb = "watch"
	case req.Method == http.MethodGet && len(parts) == 1:
		verb = "list"
	case req.Method == http.MethodPatch && req.Header.Get("Content-Type") == "application/apply-patch+yaml":
		verb = "apply"
	}
	return verb + " " + parts[0], true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestIntegrationCheckResourceReportsDriftAndProvisionRepairsIt(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	pid := pidOf(r)

	// An image edited by hand shows as a different version, and as drift.
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"runtime","image":"rilldata/rill:hacked"}]}}}}`)
	if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, "runtime-"+pid, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	// A Service deleted by hand shows as drift.
	if err := e.core.Services(e.ns).Delete(e.ctx, "runtime-"+pid, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatal(err)
	}
	drift := strings.Join(checked.State[StateDrift].([]string), "\n")
	if checked.State[StateVersion] != "hacked" || !strings.Contains(drift, "runs image rilldata/rill:hacked, want rilldata/rill:v1") ||
		!strings.Contains(drift, "Service "+e.ns+"/runtime-"+pid+" is missing") {
		t.Fatalf("state %v", checked.State)
	}

	// Templates edited on disk show as drift.
	b, err := os.ReadFile("../../templates/service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := writeTemplate(t, "service.yaml", string(b)+"# edited\n")
	p2 := e.provisioner(`, "template_paths": {"service": "`+edited+`"}`, zaptest.NewLogger(t))
	checked, err = p2.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatal(err)
	}
	if d := strings.Join(checked.State[StateDrift].([]string), "\n"); !strings.Contains(d, "templates:") {
		t.Fatalf("drift %s", d)
	}

	// Provision repairs all of it.
	out := e.provision(p2, r, args(1, "v1", false))
	if err := p2.AwaitReady(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	checked, err = p2.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatal(err)
	}
	if d := checked.State[StateDrift].([]string); len(d) != 0 || !reflect.DeepEqual(checked.State, out.State) {
		t.Fatalf("after repair: %v, provision said %v", checked.State, out.State)
	}
}

func TestIntegrationDeprovisionLeavesNothing(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	if err := e.p.Deprovision(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: LabelInstance + "=" + pidOf(r)}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apps", Version: "v1", Resource: "replicasets"},
		{Version: "v1", Resource: "pods"},
		{Version: "v1", Resource: "services"},
		{Version: "v1", Resource: "persistentvolumeclaims"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
	} {
		list, err := e.c.dynamic.Resource(gvr).Namespace(e.ns).List(e.ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("%d %s left", len(list.Items), gvr.Resource)
		}
	}
	// Already gone is success.
	if err := e.p.Deprovision(e.ctx, r); err != nil {
		t.Fatalf("second Deprovision: %v", err)
	}
	if _, err := e.p.CheckResource(e.ctx, r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("CheckResource after Deprovision: %v", err)
	}
}

// requestCounter counts a provisioner's requests in the env's namespace by requestKind; requests
// outside it (the cluster's identity, read once per provisioner) are not counted.
type requestCounter struct {
	mu  sync.Mutex
	got map[string]int
}

func (e *env) countingProvisioner() (*Provisioner, *requestCounter) {
	rc := &requestCounter{got: map[string]int{}}
	p := e.observedProvisioner("", func(req *http.Request) {
		if kind, ok := requestKind(req, e.ns); ok {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			rc.got[kind]++
		}
	})
	// Due at half the wait (podWatchAfter: 30 s of timeout_seconds=60): the local control plane rolls
	// a lone Deployment out in well under that.
	p.podWatchDelay = time.Hour
	return p, rc
}

func (rc *requestCounter) check(t *testing.T, what string, want map[string]int) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !reflect.DeepEqual(rc.got, want) {
		t.Fatalf("requests of %s: %v, want %v", what, rc.got, want)
	}
}

// The create of an unnamed runtime (Provision, then AwaitReady, as rill_runtime's Create calls them)
// sends six requests when the rollout ends before its pods are due (podWatchDelay): five applies and
// a WATCH of the Deployment. Its random ID is fresh, so nothing is read before the applies (the
// Deployment's selector and the claim's size only matter where the objects may exist); the wait
// starts from the Deployment the apply returned and watches from its resourceVersion
// (appliedDeployments), and a quick rollout is followed by its Deployment alone. It sent twelve: a
// GET of the Deployment and of the claim (both 404), LISTs of the Deployment, its ReplicaSets and
// pods, and a WATCH of the pods beside the Deployment's.
func TestIntegrationCreatingAnUnnamedRuntimeSendsSixRequests(t *testing.T) {
	e := newEnv(t, "")
	p, requests := e.countingProvisioner()
	r := e.newRuntime()
	e.provision(p, r, args(1, "v1", false))
	if err := p.AwaitReady(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	requests.check(t, "a create", map[string]int{
		"apply persistentvolumeclaims": 1, "apply deployments": 1, "apply services": 1, "apply ingresses": 2,
		"watch deployments": 1,
	})
}

func TestIntegrationAwaitReadyFailsFastWhenUnschedulable(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	// A day's timeout: a wait that does not fail fast ends only at e.ctx's deadline, with another error.
	e.p.spec.TimeoutSeconds = 24 * 3600
	e.provision(e.p, r, args(64, "v1", false)) // 64 cpu: more than the node has
	err := e.p.AwaitReady(e.ctx, r)
	if err == nil || !strings.Contains(err.Error(), "cannot be scheduled") || !strings.Contains(err.Error(), "Insufficient cpu") ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the scheduler's reason, got %v", err)
	}
	t.Log(err)
}

// chaosTemplate returns a deployment template whose pods carry the label that makes kwok's chaos
// stage report the given container waiting reason.
func chaosTemplate(t *testing.T, reason string) string {
	t.Helper()
	const podLabels = "      labels:\n        app.kubernetes.io/name: rill-runtime\n"
	return deploymentTemplateWith(t, podLabels, podLabels+"        container-waiting.stage.rill.test/reason: "+reason+"\n")
}

func TestIntegrationAwaitReadyFailsFastWithThePodsReason(t *testing.T) {
	needCluster(t)
	if !testChaos {
		ci.Skip(t, "needs kwok's chaos stages (set RILL_TEST_CHAOS=1 with a cluster that has them)")
	}
	for _, reason := range []string{"CrashLoopBackOff", "ErrImagePull"} {
		t.Run(reason, func(t *testing.T) {
			e := newEnv(t, `, "template_paths": {"deployment": "`+chaosTemplate(t, reason)+`"}`)
			// A day's timeout: a wait that does not fail fast ends only at e.ctx's deadline, with another error.
			e.p.spec.TimeoutSeconds = 24 * 3600
			r := e.newRuntime()
			e.provision(e.p, r, args(1, "v1", false))
			err := e.p.AwaitReady(e.ctx, r)
			if err == nil || !strings.Contains(err.Error(), "is "+reason) || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("want %s, got %v", reason, err)
			}
			t.Log(err)
		})
	}
}

// pingServer answers /v1/ping for any host; the provisioner's HTTP client is pointed at it.
func pingServer(t *testing.T, p *Provisioner, failures int64) *atomic.Int64 {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path != "/v1/ping" || !strings.HasSuffix(r.Host, ".rill.test") {
			http.Error(w, "unexpected request "+r.Host+r.URL.Path, http.StatusNotFound)
			return
		}
		if failures < 0 || n <= failures {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprint(w, `{"version":"v1"}`)
	}))
	t.Cleanup(srv.Close)
	var d net.Dialer
	p.httpClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}}
	return &calls
}

func TestIntegrationAwaitReadyPingsTheRuntime(t *testing.T) {
	e := newEnv(t, `, "ping_path": "/v1/ping"`)
	calls := pingServer(t, e.p, 2)
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	if calls.Load() != 3 {
		t.Fatalf("want 3 pings (2 failures, 1 success), got %d", calls.Load())
	}
}

func TestIntegrationAwaitReadyTimesOutWithTheLastPingAnswer(t *testing.T) {
	e := newEnv(t, `, "ping_path": "/v1/ping"`)
	pingServer(t, e.p, 0)
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	// Rolled out first, under the env's 60 s: the 4 s below then go to pings alone, however long a
	// loaded machine takes to roll the runtime out (a rollout still under way would be the answer).
	e.awaitReady(r)
	e.p.spec.TimeoutSeconds = 4
	pingServer(t, e.p, -1)
	err := e.p.AwaitReady(e.ctx, r)
	if err == nil || !strings.Contains(err.Error(), "http://"+pidOf(r)+".rill.test/v1/ping") || !strings.Contains(err.Error(), "503") ||
		!strings.Contains(err.Error(), "timeout_seconds=4 ended the wait") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestIntegrationAwaitReadyTimeoutSaysWhereTheRolloutStands(t *testing.T) {
	// With a grace period (a cluster with a node autoscaler), an unschedulable pod is waited for,
	// and the timeout names what the scheduler said.
	e := newEnv(t, `, "unschedulable_grace_seconds": 600`)
	e.p.spec.TimeoutSeconds = 3
	r := e.newRuntime()
	e.provision(e.p, r, args(64, "v1", false))
	// The scheduler's verdict first: on a loaded machine it could come after the 3 s wait.
	e.podUnschedulable()
	err := e.p.AwaitReady(e.ctx, r)
	if err == nil || !strings.Contains(err.Error(), "is not ready: after") || !strings.Contains(err.Error(), "timeout_seconds=3 ended the wait") ||
		!strings.Contains(err.Error(), "0 available") || !strings.Contains(err.Error(), "not scheduled: 0/1 nodes are available: 1 Insufficient cpu") ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// podUnschedulable waits, within the test's context, until a pod of the test's namespace has been
// found unschedulable by the scheduler.
func (e *env) podUnschedulable() {
	e.t.Helper()
	for {
		pods, err := e.core.Pods(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			e.t.Fatalf("waiting for the scheduler to find the pod unschedulable: %v", err)
		}
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					return
				}
			}
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("waiting for the scheduler to find the pod unschedulable: %v", e.ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Check passes with the cluster's admin credentials and fails, saying which step and where, for a
// ServiceAccount that may not list Deployments in the namespace.
// Credentials the API server rejects (a token from `kubectl create token` past its --duration, as
// the Kubernetes on kind guide makes one) fail every operation at its first request, with an error
// that names the server and the kubeconfig and says what to renew; it said "reading the identity of
// the cluster at ... (namespace kube-system): Unauthorized" alone.
func TestIntegrationRejectedCredentialsSayWhichAndWhatToRenew(t *testing.T) {
	e := newEnv(t, "")
	kubeconfig := k8stest.WriteKubeconfig(t, "", e.c.config.Host, "expired-"+randomHex(8))
	p := e.provisionerWith(kubeconfig)
	want := fmt.Sprintf("the Kubernetes API server at %s did not accept the credentials of kubeconfig_path %s (a token that expired or was revoked", e.c.config.Host, kubeconfig)
	_, err := p.Provision(e.ctx, e.newRuntime(), args(1, "v1", false))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("Provision with a rejected token: %v\nwant it to contain %q and Unauthorized", err, want)
	}
}

func TestIntegrationCheck(t *testing.T) {
	e := newEnv(t, "")
	if err := e.p.Check(e.ctx); err != nil {
		t.Fatal(err)
	}
	const sa = "no-permissions"
	if _, err := e.core.ServiceAccounts(e.ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := e.provisionerAs(sa).Check(e.ctx)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("cannot list deployments in namespace %q", e.ns)) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("Check as a ServiceAccount without permissions: %v", err)
	}
}

// A duplicate key that only a runtime's data makes (an annotation naming a label the template sets
// already) is accepted as Rill accepts it, the last value kept, and reported with the apply, as a
// warning in the state and the log, and by every refresh; one the plan's sample render showed already
// is not repeated, even at another line. Before, the apply kept the last value in silence.
func TestIntegrationADuplicateKeyOnlyARuntimesDataMakesIsReportedByTheApply(t *testing.T) {
	// The range renders one line per annotation before the duplicate the plan shows: 7 with the
	// sample's, 1 with the runtime's, so the line of that duplicate differs at apply.
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    {{- range $k, $v := .Annotations }}\n    a-{{ $k }}: x{{ end }}\n" +
		"    shown: a\n    shown: b\n    team: core\n" +
		"    {{- with .Annotations.extra_label }}\n    {{ . }}: extra{{ end }}\nspec:\n  selector:\n    app: x\n  ports:\n  - {name: http, port: 8080}\n  - {name: grpc, port: 9090}\n"
	path := writeTemplate(t, "service.yaml", service)
	e := newEnv(t, `, "template_paths": {"service": "`+path+`"}`)
	if w := e.p.SpecWarnings(); len(w) != 1 || !strings.Contains(w[0].Message, `duplicate key "shown"`) {
		t.Fatalf("the plan's warnings %v, want the sample render's duplicate key shown", w)
	}
	core, logs := observer.New(zap.WarnLevel)
	e.p.logger = zap.New(core)
	r := e.newRuntime()
	opts := args(1, "v1", false)
	opts.Annotations = map[string]string{"extra_label": "team"}
	out := e.provision(e.p, r, opts)
	warnings, _ := out.State[StateWarnings].([]string)
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], path+":") || !strings.Contains(warnings[0], `duplicate key "team"`) {
		t.Fatalf("the apply's warnings %v, want the duplicate key team only", warnings)
	}
	if logs.FilterMessageSnippet(`duplicate key "team"`).Len() != 1 {
		t.Fatalf("the warning must be logged too: %v", logs.All())
	}
	// A refresh reports what the apply reported.
	e.p.ForgetReads()
	checked, err := e.p.CheckResource(e.ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := checked.State[StateWarnings].([]string); !reflect.DeepEqual(got, warnings) {
		t.Fatalf("CheckResource's warnings %v, Provision's %v", got, warnings)
	}
	svc, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pidOf(r), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Labels["team"] != "extra" || svc.Labels["shown"] != "b" {
		t.Fatalf("labels %v, want the last values kept", svc.Labels)
	}
}

// A template that no longer renders with a runtime's data (a guard the platform tightened, a slots
// annotation edited by hand) is drift of that runtime, not a failed read: the refresh reports the
// runtime with the failure, so that the plan is an update (which the plan's own check then refuses
// with the template's message, or which repairs a hand edit) and a destroy, whose refresh this is,
// still deletes it. Before, the read failed, and plan, apply and destroy failed with it (found by a
// walkthrough; only destroy -refresh=false got out).
func TestIntegrationATemplateThatFailsWithTheRuntimesDataIsDriftNotAFailedRead(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(2, "v1", false))
	guard := `{{ if gt .Slots 1 }}{{ fail "at most 1 slot on this cluster" }}{{ end }}` + "\n"
	guarded := e.provisioner(`, "template_paths": {"deployment": "`+writeTemplate(t, "deployment.yaml", guard+defaultDeploymentTemplate(t))+`"}`, zaptest.NewLogger(t))
	drift := e.driftOf(guarded, r) // the new checksum is drift too
	if len(drift) == 0 || !strings.HasPrefix(drift[0], "templates: they do not render with this runtime's data (") || !strings.Contains(drift[0], "at most 1 slot on this cluster") {
		t.Fatalf("drift %q, want the template's failure first", drift)
	}
	if err := guarded.Deprovision(e.ctx, r); err != nil {
		t.Fatalf("Deprovision through the tightened templates: %v", err)
	}
}
