package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/fakerilladmin"
)

// rillTemplatePaths writes the templates in the shape Rill's admin documents and returns them as a
// spec fragment (`, "template_paths": {...}`) and by key.
func rillTemplatePaths(t *testing.T) (string, map[string]string) {
	t.Helper()
	paths, err := fakerilladmin.Templates(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(paths)
	return `, "template_paths": ` + string(b), paths
}

// Templates in the shape Rill's admin service documents (no names, Sprig functions, .Environment,
// annotations the project does not have, sizes as bare numbers) render and apply on a real API
// server, and the runtime they make shows no drift.
func TestIntegrationRillShapedTemplatesApply(t *testing.T) {
	extra, _ := rillTemplatePaths(t)
	e := newEnv(t, extra)
	r := e.newRuntime()
	pid := pidOf(r)
	opts := &provisioner.ResourceOptions{
		Args:        (&provisioner.RuntimeArgs{Slots: 2, Version: "v0.60.0", Environment: "dev"}).AsMap(),
		Annotations: map[string]string{"organization_name": "Acme Corp!"}, // no organization_plan, no custom domain
	}
	e.provision(e.p, r, opts)
	e.awaitReady(r)

	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Labels; got["rill.io/organization"] != "acme-corp" || got["rill.io/environment"] != "dev" {
		t.Errorf("labels %v: want the sanitized organization and the environment", got)
	}
	if got := dep.Annotations; got["organization_plan"] != "free" || got["organization_custom_domain"] != "" {
		t.Errorf("annotations %v: a missing annotation renders empty (or its Sprig default)", got)
	}
	ct := dep.Spec.Template.Spec.Containers[0]
	if ct.Image != "rilldata/rill:v0.60.0" || ct.Resources.Limits.Cpu().Value() != 2 || ct.Resources.Limits.Memory().Value() != 8*gib {
		t.Errorf("container %s %v", ct.Image, ct.Resources)
	}
	if size := e.pvcSize(r); size != 80*gib {
		t.Errorf("volume %d bytes, want 80 GiB", size)
	}
	checked, err := e.p.CheckResource(e.ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d := checked.State[StateDrift].([]string); len(d) != 0 || checked.State[StateSlots] != 2 {
		t.Fatalf("state after apply: %v", checked.State)
	}
	// The server's defaults in the lists (ports' protocol, the container's imagePullPolicy) are no
	// hand edit either: the apply after writes no list (and changes no spec).
	svc, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.provision(e.p, r, opts)
	again, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcAgain, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Generation != dep.Generation || svcAgain.ResourceVersion != svc.ResourceVersion {
		t.Errorf("a second Provision changed the Deployment (generation %d -> %d) or the Service (resourceVersion %s -> %s)",
			dep.Generation, again.Generation, svc.ResourceVersion, svcAgain.ResourceVersion)
	}
}

// A runtime that Rill's admin service provisioned (its field manager, its labels, no annotation of
// ours) is imported by its resource ID, with its slots and version read from the objects; the first
// Provision takes the objects over without replacing them, keeping the Deployment's immutable
// selector when this provisioner's templates choose another; afterwards nothing drifts.
func TestIntegrationAdoptRuntimeOfRillAdmin(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sameTemplates bool // the provisioner uses Rill's templates, or its own defaults
	}{
		{"with Rill's templates", true},
		{"with the default templates", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra, paths := rillTemplatePaths(t)
			if !tc.sameTemplates {
				extra = ""
			}
			e := newEnv(t, extra)
			r := e.newRuntime()
			pid := pidOf(r)
			if err := fakerilladmin.ApplyKubernetesRuntime(e.ctx, testKubeconfig, e.ns, paths, fakerilladmin.Runtime{
				ResourceID: r.ID, Host: "http://*.rill.test", Image: "rilldata/rill", Version: "v0.60.0", Slots: 3,
				Annotations: map[string]string{"organization_name": "Acme", "organization_plan": "team", "organization_custom_domain": ""},
			}); err != nil {
				t.Fatal(err)
			}
			before := e.uids(pid)
			rillDep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}

			// Import: neither a state nor args, as Terraform's Read after `terraform import`.
			p, log := e.recordingProvisioner(extra)
			imported, err := p.CheckResource(e.ctx, &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeRuntime}, &provisioner.ResourceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if imported.State[StateSlots] != 3 || imported.State[StateVersion] != "v0.60.0" {
				t.Fatalf("imported state %v: want slots 3 and version v0.60.0 read from the objects", imported.State)
			}
			if d := strings.Join(imported.State[StateDrift].([]string), "\n"); !strings.Contains(d, "adopting runtime "+pid+" from Rill's admin service") {
				t.Fatalf("drift %q: want the adoption", d)
			}
			if n := log.gets(e.ns); n != 0 {
				t.Errorf("%d GETs of single objects: the snapshot's LIST must find Rill's objects", n)
			}
			if got := imported.Config["storage_bytes"]; got != 120*gib {
				t.Errorf("storage_bytes %v, want the live 120 GiB", got)
			}

			// The first apply, with the args the configuration now gives.
			r.State = imported.State
			opts := args(3, "v0.60.0", false)
			out := e.provision(e.p, r, opts)
			e.awaitReady(r)
			if after := e.uids(pid); !reflect.DeepEqual(after, before) {
				t.Fatalf("objects replaced: UIDs %v, before %v", after, before)
			}
			dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if dep.Labels[LabelManagedBy] != ManagedByValue || dep.Annotations[AnnotationSlots] != "3" {
				t.Errorf("labels %v, annotations %v: want ours", dep.Labels, dep.Annotations)
			}
			// Our labels go on the pod template, which Rill's lacks: the takeover rolls the pods out, even
			// with Rill's own templates (the migration guide says so: with Rill's Recreate strategy, the
			// runtime is down until its new pod is ready).
			if _, ok := rillDep.Spec.Template.Labels[LabelManagedBy]; ok || dep.Spec.Template.Labels[LabelManagedBy] != ManagedByValue ||
				dep.Generation <= rillDep.Generation {
				t.Errorf("pod labels %v (Rill's %v), generation %d (Rill's %d): want ours added, a new pod template",
					dep.Spec.Template.Labels, rillDep.Spec.Template.Labels, dep.Generation, rillDep.Generation)
			}
			if !ownsSpec(dep.ManagedFields, FieldManager) {
				t.Errorf("field managers %v: %s must own the spec after the takeover", managers(dep.ManagedFields), FieldManager)
			}
			// Rill's fields that the templates here do not render are gone: one container, no Rill annotations.
			if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
				t.Errorf("%d containers: the takeover must remove what only Rill's templates rendered", n)
			}
			if _, ok := dep.Annotations[RillAnnotationTemplatesChecksum]; ok {
				t.Errorf("annotations %v: Rill's checksum must be gone", dep.Annotations)
			}
			rillSelector := map[string]string{"app.kubernetes.io/name": "runtime-" + pid}
			if !reflect.DeepEqual(dep.Spec.Selector.MatchLabels, rillSelector) {
				t.Errorf("selector %v: Rill's %v must be kept (it is immutable)", dep.Spec.Selector.MatchLabels, rillSelector)
			}
			svc, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range svc.Spec.Selector {
				if dep.Spec.Template.Labels[k] != v {
					t.Errorf("the Service selects %v, which the pods (%v) do not match", svc.Spec.Selector, dep.Spec.Template.Labels)
				}
			}

			// No drift loop: the next check finds nothing to do.
			checked, err := e.p.CheckResource(e.ctx, r, opts)
			if err != nil {
				t.Fatal(err)
			}
			if d := checked.State[StateDrift].([]string); len(d) != 0 || !reflect.DeepEqual(checked.State, out.State) {
				t.Fatalf("after adoption: %v, provision said %v", checked.State, out.State)
			}
		})
	}
}

// uids returns the UIDs of a runtime's objects by kind.
func (e *env) uids(pid string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out["deployment"] = string(dep.UID)
	pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out["pvc"] = string(pvc.UID)
	svc, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out["service"] = string(svc.UID)
	return out
}

// ownsSpec reports whether manager applied the object's spec.template (server-side apply).
func ownsSpec(fields []metav1.ManagedFieldsEntry, manager string) bool {
	for _, f := range fields {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply && f.FieldsV1 != nil &&
			strings.Contains(string(f.FieldsV1.Raw), `"f:template"`) {
			return true
		}
	}
	return false
}

func managers(fields []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Manager+"/"+string(f.Operation))
	}
	return out
}

// An object that other writers keep changing holds the managed-fields rewrite only until the
// operation's context ends, and the error says what it waited for and how long. Before, the rewrite
// gave up after five refused patches, however long the operation had left.
func TestIntegrationManagedFieldsRewriteWaitsForOtherWritersUntilTheContextEnds(t *testing.T) {
	e := newEnv(t, "")
	target := e.configMapCreatedByUs("busy")
	var patches atomic.Int32
	ri := e.resourceObservingPatches(configMapsResource, func() {
		patches.Add(1)
		edit := fmt.Sprintf(`{"metadata": {"annotations": {"example.com/written": "%d"}}}`, patches.Load())
		if _, err := e.core.ConfigMaps(e.ns).Patch(e.ctx, target.GetName(), types.MergePatchType, []byte(edit), metav1.PatchOptions{FieldManager: "another-writer"}); err != nil {
			t.Errorf("writing the object before its patch: %v", err)
		}
	})
	const window = 2 * time.Second
	ctx, cancel := context.WithTimeout(e.ctx, window)
	defer cancel()
	start := time.Now()
	err := rewriteManagedFields(ctx, ri, target, createdEntryToApply, zaptest.NewLogger(t))
	took := time.Since(start)
	// The deadline ends the wait, or the client's rate limiter that would wait past it.
	if msg := fmt.Sprint(err); !strings.Contains(msg, "waited ") || !strings.Contains(msg, "ConfigMap "+e.ns+"/busy to stay unchanged") || !strings.Contains(msg, "deadline") {
		t.Fatalf("err = %v, want the wait for ConfigMap %s/busy ended by the deadline", err, e.ns)
	}
	// It may give up early only when its next try would come after the deadline: by at most its
	// longest backoff. A lower bound, which a loaded machine cannot break (a count of patches in the
	// window could: each try is three requests).
	if n := patches.Load(); n < 2 || took < window-managedFieldsBackoffMax {
		t.Errorf("%d patches, gave up after %v: the rewrite stopped trying before the context's %v (less its longest backoff, %v) had passed", n, took, window, managedFieldsBackoffMax)
	}
}

// A managed-fields patch that the server refuses although nothing wrote the object (a patch it
// cannot apply) is not waited out: the next read finds the object unchanged, and the refusal is
// returned at once. The API server answers it as it answers a failed test of the resourceVersion
// (422, no details).
func TestIntegrationManagedFieldsPatchRefusedWithoutAWriteIsReturnedAtOnce(t *testing.T) {
	e := newEnv(t, "")
	target := e.configMapCreatedByUs("unpatchable")
	var patches atomic.Int32
	ri := e.resourceObservingPatches(configMapsResource, func() { patches.Add(1) })
	err := rewriteManagedFields(e.ctx, ri, target, func([]metav1.ManagedFieldsEntry) []jsonPatchOp {
		return []jsonPatchOp{{Op: "remove", Path: managedFieldsPath(99, "")}}
	}, zaptest.NewLogger(t))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want the server's refusal (Invalid)", err)
	}
	if n := patches.Load(); n != 1 {
		t.Errorf("%d patches, want 1: nothing wrote the object, so the refusal was not a race", n)
	}
}

var configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// configMapCreatedByUs creates a ConfigMap with this provisioner's field manager (an Update entry
// of its own, as a claim's create leaves) and returns it.
func (e *env) configMapCreatedByUs(name string) *unstructured.Unstructured {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	if _, err := e.core.ConfigMaps(e.ns).Create(e.ctx, cm, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		e.t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetKind("ConfigMap")
	u.SetNamespace(e.ns)
	u.SetName(name)
	return u
}

// resourceObservingPatches is gvr in the test's namespace, through a dynamic client of its own that
// calls before ahead of each JSON patch it sends.
func (e *env) resourceObservingPatches(gvr schema.GroupVersionResource, before func()) dynamic.ResourceInterface {
	e.t.Helper()
	cfg := rest.CopyConfig(e.c.config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && req.Header.Get("Content-Type") == string(types.JSONPatchType) {
				before()
			}
			return rt.RoundTrip(req)
		})
	})
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return dyn.Resource(gvr).Namespace(e.ns)
}
