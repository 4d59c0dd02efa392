package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// pvcProtectionFinalizer is Kubernetes' own finalizer on every claim (the StorageObjectInUseProtection
// admission plugin sets it): its controller removes it once no scheduled pod mounts the claim.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// volumeHold is what keeps a runtime's claim that is being deleted from going: its finalizers and the
// pods that mount it. A `kubectl delete pvc` while the runtime's pod mounts the claim leaves it held
// by pvc-protection for as long as such a pod exists, which the Deployment sees to forever: waiting
// never lets it go, and only stopping the runtime's pods does. One home for that fact: the refresh's
// drift, the apply's decision and error, and the wait for the claim all read it here.
type volumeHold struct {
	claim *unstructured.Unstructured
	// dep is the runtime's live Deployment, nil when there is none: what runs its pods (runsPod).
	dep *unstructured.Unstructured
	// ours and others name the pods that mount the claim: those dep runs (runsPod), which stopping
	// it removes, and anything else's, sorted.
	ours, others []string
	// podsUnread is set when the credentials may not list pods: nothing says who mounts the claim.
	podsUnread bool
	// runtimeDeleted is set when the runtime's Deployment is being deleted too: a destroy under way,
	// which stopping the pods would fight.
	runtimeDeleted bool
}

// readVolumeHold lists the pods of the claim's namespace to find those that mount it (no selector
// finds them: any pod may name any claim). dep is the runtime's live Deployment, nil when there is
// none.
func readVolumeHold(ctx context.Context, c *clients, claim, dep *unstructured.Unstructured) (*volumeHold, error) {
	h := &volumeHold{claim: claim, dep: dep, runtimeDeleted: dep != nil && dep.GetDeletionTimestamp() != nil}
	if err := h.readMounts(ctx, c); err != nil {
		return nil, err
	}
	return h, nil
}

// readMounts lists the pods that mount the claim now into ours and others; a LIST the credentials
// may not make sets podsUnread.
func (h *volumeHold) readMounts(ctx context.Context, c *clients) error {
	list, err := c.core.Resource(podsResource).Namespace(h.claim.GetNamespace()).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		h.podsUnread = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the pods that mount PersistentVolumeClaim %s/%s: %w", h.claim.GetNamespace(), h.claim.GetName(), err)
	}
	h.ours, h.others, h.podsUnread = nil, nil, false
	for i := range list.Items {
		pod, err := fromUnstructured[corev1.Pod](&list.Items[i])
		if err != nil {
			return err
		}
		if !mountsClaim(pod, h.claim.GetName()) {
			continue
		}
		if runsPod(h.dep, pod) {
			h.ours = append(h.ours, pod.Name)
		} else {
			h.others = append(h.others, pod.Name)
		}
	}
	slices.Sort(h.ours)
	slices.Sort(h.others)
	return nil
}

// runsPod says whether the Deployment dep runs pod, so that scaling dep to 0 removes it: the pod's
// controller is a ReplicaSet of dep's name and the pod's pod-template-hash ("<deployment>-<hash>",
// the name the Deployment controller gives every ReplicaSet it makes) and dep's selector matches the
// pod. Labels alone do not say it: a pod made by hand with the runtime's labels (kubectl debug
// --copy-to --keep-labels, which copies no owner) outlives the stop, which would then be an outage
// for nothing; and a runtime adopted from Rill's admin service runs pods without our instance label
// until our first apply. The name is checked, not the ReplicaSet's UID: that would cost a LIST of
// ReplicaSets at each refresh of such a claim, and a ReplicaSet of that name that dep does not
// control could only be one made by hand under the name its controller uses.
func runsPod(dep *unstructured.Unstructured, pod *corev1.Pod) bool {
	if dep == nil {
		return false
	}
	ref, hash := metav1.GetControllerOf(pod), pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if ref == nil || ref.Kind != "ReplicaSet" || hash == "" || ref.Name != dep.GetName()+"-"+hash {
		return false
	}
	d, err := fromUnstructured[appsv1.Deployment](dep)
	if err != nil || d.Spec.Selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
}

// mountsClaim says whether a pod has a volume of the claim named claim (its namespace's).
func mountsClaim(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

// releasable says whether the apply may stop the runtime's pods so that the claim goes: Kubernetes'
// protection is all that holds it, no pod of anything else mounts it (stopping ours would not free
// it, and theirs are not ours to stop), and the runtime is not being destroyed.
func (h *volumeHold) releasable() bool {
	return len(h.foreignFinalizers()) == 0 && len(h.others) == 0 && !h.podsUnread && !h.runtimeDeleted
}

// foreignFinalizers are the claim's finalizers other than Kubernetes' protection: something else's,
// which only it (or a person) removes.
func (h *volumeHold) foreignFinalizers() []string {
	var out []string
	for _, f := range h.claim.GetFinalizers() {
		if f != pvcProtectionFinalizer {
			out = append(out, f)
		}
	}
	return out
}

// drift is the refresh's drift entry: what the apply will do with the claim.
func (h *volumeHold) drift() string {
	if !h.releasable() {
		return terminatingVolume(h.claim) + h.mounts() + ": apply fails until it is gone"
	}
	if len(h.ours) == 0 {
		return terminatingVolume(h.claim) + ": the apply waits until it is gone, then creates it again (its data is lost)"
	}
	stops := "the pod"
	if len(h.ours) > 1 {
		stops = "the pods"
	}
	return fmt.Sprintf("volume %s/%s is being deleted while this runtime's %s mount%s it: the apply stops %s so that it goes, then creates it again (its data is lost)",
		h.claim.GetNamespace(), h.claim.GetName(), podList(h.ours), verbS(h.ours), stops)
}

// refusal is the apply's error when the claim is not releasable: what holds it, and what to do.
func (h *volumeHold) refusal() error {
	ns, name := h.claim.GetNamespace(), h.claim.GetName()
	var todo string
	switch {
	case h.runtimeDeleted:
		todo = fmt.Sprintf("Deployment %s/%s is being deleted too (a destroy that did not finish): let it finish (terraform destroy), or wait until both are gone", ns, name)
	case h.podsUnread:
		todo = "the credentials may not list pods, so the apply cannot tell what mounts it: delete the pods that do (kubectl -n " + ns + " get pods), or remove what holds it up"
	case len(h.others) > 0:
		todo = fmt.Sprintf("%s, which this runtime's Deployment does not run, mount%s it, and the apply does not stop %s: delete %s (or scale down what runs %s)", podList(h.others), verbS(h.others), them(h.others), them(h.others), them(h.others))
	default:
		todo = fmt.Sprintf("finalizer %s is not Kubernetes' volume protection, which the apply can release: let what set it finish, or remove it (kubectl -n %s edit pvc %s)", strings.Join(h.foreignFinalizers(), ", "), ns, name)
	}
	return fmt.Errorf("%s%s: nothing was applied: %s, then plan again", terminatingVolume(h.claim), h.mounts(), todo)
}

// mounts is ", mounted by pods a, b" naming every pod that mounts the claim, or "".
func (h *volumeHold) mounts() string {
	all := slices.Sorted(slices.Values(append(slices.Clone(h.ours), h.others...)))
	if len(all) == 0 {
		return ""
	}
	return ", mounted by " + podList(all)
}

func podList(names []string) string {
	if len(names) == 1 {
		return "pod " + names[0]
	}
	return "pods " + strings.Join(names, ", ")
}

func verbS(names []string) string {
	if len(names) == 1 {
		return "s"
	}
	return ""
}

func them(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}

// freeVolume is the apply's answer to the runtime's claim being deleted: it stops the runtime's pods
// and waits until the claim is gone when that is safe (releaseVolume), and refuses otherwise, before
// any write, naming what holds the claim. rendered is the Deployment the apply is about to apply (its
// live selector kept), nil when the templates have none. creating is set for a create (Provision
// without a recorded state): a named runtime's create that found the runtime's objects, which its
// plan did not say it would stop. It returns whether it wrote the Deployment.
func (p *Provisioner) freeVolume(ctx context.Context, c *clients, claim, rendered *unstructured.Unstructured, creating bool, log *zap.Logger) (bool, error) {
	// The Deployment is read again, not taken from the start of the apply: a destroy in another state
	// may have begun deleting it, or deleted it, since (runtimeDeleted; no Deployment runs a pod then).
	var dep *unstructured.Unstructured
	if rendered != nil {
		u, err := c.apps.Resource(deploymentsResource).Namespace(rendered.GetNamespace()).Get(ctx, rendered.GetName(), metav1.GetOptions{})
		switch {
		case err == nil:
			dep = u
		case !apierrors.IsNotFound(err):
			return false, fmt.Errorf("reading Deployment %s/%s: %w", rendered.GetNamespace(), rendered.GetName(), err)
		}
	}
	h, err := readVolumeHold(ctx, c, claim, dep)
	if err != nil {
		return false, err
	}
	if !h.releasable() {
		return false, h.refusal()
	}
	if creating && len(h.ours) > 0 {
		// The plan said "create", not "stop a running runtime": what runs is another state's (a named
		// runtime), whose apply says what it does.
		return false, fmt.Errorf("%s%s: nothing was applied: this runtime exists already, and a create does not stop its pods so that the volume goes: the configuration that manages it repairs it with an apply (or import it, and apply), then plan again",
			terminatingVolume(h.claim), h.mounts())
	}
	return p.releaseVolume(ctx, c, h, rendered, log)
}

// releaseVolume frees a claim that is being deleted and that only this runtime's pods hold
// (releasable): when its pods mount it, it applies the runtime's Deployment at 0 replicas, as a
// hibernation does (the rendered object, ours to apply, so that server-side apply's ownership stays
// as the apply leaves it); then it waits until the claim is gone, bounded by timeout_seconds and ctx.
// When no pod mounts it (no live Deployment, or one at 0 replicas) nothing is written: the claim goes
// by itself. The apply then goes on as usual: it creates the claim again and applies the Deployment
// with its replicas. Interrupted, it leaves the Deployment at 0 replicas (drift) and the claim going
// or gone: the next apply repairs both. It returns whether it wrote the Deployment.
func (p *Provisioner) releaseVolume(ctx context.Context, c *clients, h *volumeHold, rendered *unstructured.Unstructured, log *zap.Logger) (bool, error) {
	log = log.With(zap.String("volume", h.claim.GetName()))
	if len(h.ours) == 0 {
		log.Info("the runtime's volume is being deleted and no pod of the runtime mounts it: waiting until it is gone; the apply then creates it again, empty")
		return false, p.awaitVolumeGone(ctx, c, h, false, log)
	}
	// h.ours is not empty, so h.dep is the live Deployment of rendered's name (runsPod, freeVolume).
	stopped := rendered.DeepCopy()
	if err := unstructured.SetNestedField(stopped.Object, int64(0), "spec", "replicas"); err != nil {
		return false, err
	}
	// The Deployment as just read: server-side apply then fails with a conflict rather than create a
	// Deployment that a destroy deleted since (the UID: an apply creates an object that is gone
	// whatever resourceVersion it names) or write over one it began to delete (the resourceVersion).
	stopped.SetUID(h.dep.GetUID())
	stopped.SetResourceVersion(h.dep.GetResourceVersion())
	log.Warn("the runtime's volume is being deleted while its own pods mount it: stopping them so that it goes; the apply then creates it again, empty", zap.Strings("pods", h.ours))
	if _, err := c.apps.Resource(deploymentsResource).Namespace(stopped.GetNamespace()).Apply(ctx, stopped.GetName(), stopped, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return !refused(err), fmt.Errorf("stopping the pods of Deployment %s/%s so that its volume, being deleted, goes: %w", stopped.GetNamespace(), stopped.GetName(), err)
	}
	return true, p.awaitVolumeGone(ctx, c, h, true, log)
}

// volumePodsLogEvery is how often awaitVolumeGone lists the pods for its progress log: the claim is
// polled with a GET, and the pods (a LIST of the namespace's) are named only now and then and at the end.
const volumePodsLogEvery = 30 * time.Second

// awaitVolumeGone polls the claim (the least RBAC may get claims, not watch them) until it is gone or
// another claim of its name is there, logging now and then the pods that still mount it. stopped says
// whether the apply stopped the runtime's pods.
func (p *Provisioner) awaitVolumeGone(ctx context.Context, c *clients, h *volumeHold, stopped bool, log *zap.Logger) error {
	ctx, cancel, limit := p.specWaitLimit(ctx)
	defer cancel()
	ns, name, uid := h.claim.GetNamespace(), h.claim.GetName(), h.claim.GetUID()
	start, backoff := time.Now(), 100*time.Millisecond
	log.Info("waiting until the volume being deleted is gone", zap.String("status", terminatingVolume(h.claim)+h.mounts()))
	listed := start // when the pods were last listed (readVolumeHold just did) for the progress log
	for {
		u, err := c.core.Resource(pvcsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || err == nil && u.GetUID() != uid:
			log.Info("the volume being deleted is gone", zap.Duration("after", time.Since(start)))
			return nil
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("waiting until PersistentVolumeClaim %s/%s, being deleted, is gone: %w", ns, name, err)
		case err == nil:
			h.claim = u
			if time.Since(listed) >= volumePodsLogEvery {
				listed = time.Now()
				if h.readMounts(ctx, c) == nil {
					log.Info("waiting until the volume being deleted is gone", zap.String("status", terminatingVolume(u)+h.mounts()))
				}
			}
		}
		select {
		case <-ctx.Done():
			return h.waitedInVain(ctx, c, stopped, limit.reason())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// waitedInVain is awaitVolumeGone's error once its wait ended (ctx is done): the claim and what
// mounts it now, read once more with a few seconds of its own, and what to do.
func (h *volumeHold) waitedInVain(ctx context.Context, c *clients, stopped bool, reason string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	did := "the apply waited for it in vain"
	if stopped {
		did = "the apply stopped this runtime's pods so that it goes, and waited for it in vain"
	}
	todo := "delete what still mounts it, then apply again"
	if err := h.readMounts(rctx, c); err == nil && !h.podsUnread && len(h.ours)+len(h.others) == 0 {
		todo = "no pod mounts it any more, so it is going: apply again"
	}
	return fmt.Errorf("%s%s: %s (%s): %s", terminatingVolume(h.claim), h.mounts(), did, reason, todo)
}
