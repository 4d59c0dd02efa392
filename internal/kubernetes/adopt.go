package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// Adopting the runtimes of Rill's admin service. Its objects have the names and the instance label
// that this provisioner uses, but are labelled managed-by rill-cloud-admin, were applied by another
// field manager, and carry none of our annotations. Importing `<provisioner>/<resource ID>` finds
// them (the snapshots' LISTs select both managed-by values), CheckResource reads slots and version from
// the objects themselves and reports the adoption as drift, and the next Provision takes the objects
// over with a forced server-side apply, keeping the Deployment's immutable selector when Rill's
// templates chose another one.

// adoptedFromRill reports whether any live object was last applied by Rill's admin service.
func adoptedFromRill(live map[string]*unstructured.Unstructured) bool {
	for _, u := range live {
		if u.GetLabels()[LabelManagedBy] == RillManagedByValue {
			return true
		}
	}
	return false
}

// liveImageTag returns the tag the Deployment runs the spec's image with ("" when no container runs
// that repository).
func liveImageTag(dep *appsv1.Deployment, image string) string {
	for _, ct := range dep.Spec.Template.Spec.Containers {
		if repo, tag := splitImage(ct.Image); repo == image {
			return tag
		}
	}
	return ""
}

// slotsFromObjects finds the slots a runtime was applied with when its Deployment does not say (no
// rill.provisioner/slots annotation: Rill's admin service does not write one; or one edited by hand,
// see annotationEditedByHand). The candidates are
// what the live CPU, memory and volume correspond to at 1 CPU, 4 GiB and 40 GiB per slot; the first
// for which the templates render exactly the live container resources wins. It returns 0 when none
// does (the templates size runtimes differently): the caller keeps what it had, and the resource
// drift shows.
func (p *Provisioner) slotsFromObjects(dep *appsv1.Deployment, pvc *unstructured.Unstructured, base *TemplateData) int {
	var candidates []int
	add := func(n int) {
		if n >= 1 && n <= math.MaxInt32 && !containsInt(candidates, n) {
			candidates = append(candidates, n)
		}
	}
	for _, ct := range dep.Spec.Template.Spec.Containers {
		for _, l := range []corev1.ResourceList{ct.Resources.Requests, ct.Resources.Limits} {
			if q, ok := l[corev1.ResourceCPU]; ok {
				add(int(math.Ceil(float64(q.MilliValue()) / 1000 / provisioner.CPUPerSlot)))
			}
			if q, ok := l[corev1.ResourceMemory]; ok {
				add(int(math.Ceil(float64(q.Value()) / float64(provisioner.MemoryGBPerSlot<<30))))
			}
		}
	}
	if pvc != nil {
		if q, err := renderedStorage(pvc); err == nil {
			add(int(math.Ceil(float64(q.Value()) / float64(provisioner.StorageBytesPerSlot))))
		}
	}
	for _, n := range candidates {
		d := *base
		d.Slots = n
		d.CPU, d.MemoryGB, d.StorageBytes = provisioner.NewRuntimeSizes(n)
		objs, _, err := p.templates.render(&d)
		if err != nil {
			continue
		}
		for _, ro := range objs {
			if ro.slot.field == "deployment" && resourcesMatch(dep, ro.obj) {
				return n
			}
		}
	}
	return 0
}

func containsInt(l []int, n int) bool {
	for _, v := range l {
		if v == n {
			return true
		}
	}
	return false
}

// resourcesMatch reports whether every rendered container has the live container's requests and
// limits. A lone rendered container is compared with a lone live one whatever their names (Rill's
// documented template calls it cloud-runtime, the default here runtime).
func resourcesMatch(live *appsv1.Deployment, rendered *unstructured.Unstructured) bool {
	want := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, want); err != nil {
		return false
	}
	byName := map[string]corev1.Container{}
	for _, ct := range live.Spec.Template.Spec.Containers {
		byName[ct.Name] = ct
	}
	lone := len(live.Spec.Template.Spec.Containers) == 1 && len(want.Spec.Template.Spec.Containers) == 1
	for _, wc := range want.Spec.Template.Spec.Containers {
		lc, ok := byName[wc.Name]
		if !ok && lone {
			lc, ok = live.Spec.Template.Spec.Containers[0], true
		}
		if !ok || len(resourceDrift("", wc.Name, "requests", lc.Resources.Requests, wc.Resources.Requests, nil)) > 0 ||
			len(resourceDrift("", wc.Name, "limits", lc.Resources.Limits, wc.Resources.Limits, nil)) > 0 {
			return false
		}
	}
	return true
}

// keepLiveSelector makes the rendered objects apply over a live Deployment whose selector differs
// from the rendered one, as an adopted runtime of Rill's admin service may have (Rill's documented
// templates select app.kubernetes.io/name: runtime-<id>). A Deployment's selector is immutable, so
// the live one is kept: it replaces the rendered selector, its labels are added to the pod template
// (a selector must match its pods), and a rendered Service that selected the rendered Deployment's
// pods selects them by the kept labels. It returns whether it changed anything, and the live
// Deployment (nil when there is none).
func keepLiveSelector(ctx context.Context, c *clients, objs []*renderedObject, log *zap.Logger) (bool, *unstructured.Unstructured, error) {
	var dep, svc *unstructured.Unstructured
	for _, ro := range objs {
		switch ro.slot.field {
		case "deployment":
			dep = ro.obj
		case "service":
			svc = ro.obj
		}
	}
	if dep == nil {
		return false, nil, nil
	}
	u, err := c.apps.Resource(deploymentsResource).Namespace(dep.GetNamespace()).Get(ctx, dep.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("reading Deployment %s/%s: %w", dep.GetNamespace(), dep.GetName(), err)
	}
	live, err := fromUnstructured[appsv1.Deployment](u)
	if err != nil {
		return false, nil, err
	}
	if live.Spec.Selector == nil {
		return false, u, nil
	}
	rendered, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
	_, hasExpr, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "selector", "matchExpressions")
	if !hasExpr && len(live.Spec.Selector.MatchExpressions) == 0 && reflect.DeepEqual(rendered, live.Spec.Selector.MatchLabels) {
		return false, u, nil
	}
	sel, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live.Spec.Selector)
	if err != nil {
		return false, nil, err
	}
	if err := unstructured.SetNestedMap(dep.Object, sel, "spec", "selector"); err != nil {
		return false, nil, err
	}
	podLabels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	if err := unstructured.SetNestedStringMap(dep.Object, merge(podLabels, live.Spec.Selector.MatchLabels), "spec", "template", "metadata", "labels"); err != nil {
		return false, nil, err
	}
	if svc != nil {
		if svcSel, found, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector"); found && reflect.DeepEqual(svcSel, rendered) {
			if err := unstructured.SetNestedStringMap(svc.Object, live.Spec.Selector.MatchLabels, "spec", "selector"); err != nil {
				return false, nil, err
			}
		}
	}
	log.Info("keeping the live Deployment's selector, which is immutable and differs from the templates'",
		zap.String("deployment", live.Namespace+"/"+live.Name), zap.Any("live", live.Spec.Selector.MatchLabels), zap.Any("templates", rendered))
	return true, u, nil
}

// takeOverFromRill hands what Rill's admin service's field manager applied on a runtime's objects to
// this provisioner's field manager, before the apply that adopts them: the forced apply then owns
// every field Rill set, so that the fields the templates here do not render are removed (without
// this, a Deployment would keep Rill's container beside the one rendered here, under another name).
// The volume is left out: its spec is immutable once bound, so Rill's fields on it (a StorageClass
// name, say) stay as Rill's.
func takeOverFromRill(ctx context.Context, c *clients, objs []*renderedObject, log *zap.Logger) error {
	for _, ro := range objs {
		if ro.slot.field == "pvc" {
			continue
		}
		gvr, err := c.resourceFor(ctx, ro.obj.GroupVersionKind())
		if err != nil {
			return err
		}
		ri := c.dynamic.Resource(gvr).Namespace(ro.obj.GetNamespace())
		err = rewriteManagedFields(ctx, ri, ro.obj, takeOverEntry, log)
		if err != nil {
			return fmt.Errorf("taking over %s %s/%s from %s: %w", ro.obj.GetKind(), ro.obj.GetNamespace(), ro.obj.GetName(), RillFieldManager, err)
		}
	}
	return nil
}

// takeOverEntry renames the rill-cloud-admin Apply entry of an object's managed fields to ours
// (a managedFieldsRewrite), unless ours is there already.
func takeOverEntry(entries []metav1.ManagedFieldsEntry) []jsonPatchOp {
	rill, ours := -1, false
	for i, f := range entries {
		if f.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		switch f.Manager {
		case RillFieldManager:
			rill = i
		case FieldManager:
			ours = true
		}
	}
	if rill < 0 || ours {
		return nil
	}
	return []jsonPatchOp{{Op: "replace", Path: managedFieldsPath(rill, "manager"), Value: FieldManager}}
}

// The backoff between a managed-fields patch that an intervening write refused and the next read:
// it starts short (a claim's volume is written by the volume controller and the binder a few times
// within its first second, and by the applies of the creates that lost the claim) and doubles, with
// jitter so that writers retrying together fall apart, up to a second.
const (
	managedFieldsBackoff    = 10 * time.Millisecond
	managedFieldsBackoffMax = time.Second
)

// jsonPatchOp is one operation of a JSON patch (RFC 6902).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// managedFieldsPath is the JSON patch path of an entry of the managed fields, or of one of its
// fields when field is not empty.
func managedFieldsPath(i int, field string) string {
	if field == "" {
		return fmt.Sprintf("/metadata/managedFields/%d", i)
	}
	return fmt.Sprintf("/metadata/managedFields/%d/%s", i, field)
}

// managedFieldsRewrite says how to rewrite an object's managed fields, given its entries: the JSON
// patch operations, none when there is nothing to do.
type managedFieldsRewrite func(entries []metav1.ManagedFieldsEntry) []jsonPatchOp

// rewriteManagedFields rewrites an object's managed fields with a JSON patch (managed fields can be
// changed by any request but an apply) that tests the resourceVersion it read, so that it changes
// the entries it looked at. A write in between (a controller's status write, another call's apply)
// fails that test, and the object is read again after a backoff, for as long as ctx allows: right
// after a claim, the volume controller, the binder and the applies of the creates that lost the
// claim write the volume claim several times, and under load a fixed number of tries could all
// lose. A refused patch of an object that the next read finds unchanged was refused for itself (a
// patch the server cannot apply), not for a write in between, and is returned at once. An object
// that is gone is left alone.
func rewriteManagedFields(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, rewrite managedFieldsRewrite, log *zap.Logger) error {
	w := managedFieldsWait{obj: obj, start: time.Now()}
	backoff := managedFieldsBackoff
	tested := "" // the resourceVersion that the last refused patch tested
	for attempt := 1; ; attempt++ {
		live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return w.failed(ctx, fmt.Errorf("reading %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err))
		case w.refused != nil && live.GetResourceVersion() == tested:
			return w.refused
		}
		ops := rewrite(live.GetManagedFields())
		if len(ops) == 0 {
			return nil
		}
		patch, err := json.Marshal(append([]jsonPatchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: live.GetResourceVersion()}}, ops...))
		if err != nil {
			return err
		}
		_, err = ri.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil:
			log.Info("rewrote the object's managed fields", zap.String("kind", live.GetKind()), zap.String("name", live.GetName()), zap.Any("patch", ops), zap.Int("attempt", attempt))
			return nil
		case !apierrors.IsInvalid(err) && !apierrors.IsConflict(err):
			return w.failed(ctx, err)
		}
		// A failed test op is a 422 Invalid without details, as is a patch the server cannot apply:
		// the next read tells them apart.
		w.refused, w.patches, tested = err, attempt, live.GetResourceVersion()
		sleep := backoff/2 + rand.N(backoff/2+1)
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(sleep).After(deadline) {
			// The next read would come after the deadline: giving up now is giving up on it.
			return w.failed(ctx, context.DeadlineExceeded)
		}
		log.Debug("the managed-fields patch was refused, maybe for a write since the read; reading the object again", zap.Int("attempt", attempt), zap.Duration("backoff", sleep), zap.Error(err))
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return w.failed(ctx, ctx.Err())
		case <-t.C:
		}
		backoff = min(backoff*2, managedFieldsBackoffMax)
	}
}

// managedFieldsWait is what rewriteManagedFields waited for so far, to say it when it gives up.
type managedFieldsWait struct {
	obj     *unstructured.Unstructured
	start   time.Time
	patches int   // the patches refused
	refused error // the last one's refusal; nil before the first
}

// failed is err, and when patches were refused before it, also how long the rewrite waited for the
// object to stay unchanged, until what, and the last refusal.
func (w *managedFieldsWait) failed(ctx context.Context, err error) error {
	if w.refused == nil {
		return err
	}
	until := "" // another error (the API server's, the rate limiter's) ended the wait
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		until = ", until " + waits.Until(ctx.Err())
	}
	return fmt.Errorf("waited %s for %s %s/%s to stay unchanged between a read and the patch of its managed fields (%d patches refused: other writers kept changing it)%s: %w; the last patch: %w",
		waits.Elapsed(w.start), w.obj.GetKind(), w.obj.GetNamespace(), w.obj.GetName(), w.patches, until, err, w.refused)
}
