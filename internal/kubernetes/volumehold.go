package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	pid   string // the runtime's provision ID
	// ours and others name the pods that mount the claim: this runtime's (its LabelInstance, which
	// stampMetadata puts on the pod template) and anything else's, sorted.
	ours, others []string
	// podsUnread is set when the credentials may not list pods: nothing says who mounts the claim.
	podsUnread bool
	// runtimeDeleted is set when the runtime's Deployment is being deleted too: a destroy under way,
	// which stopping the pods would fight.
	runtimeDeleted bool
}

// readVolumeHold lists the pods of the claim's namespace to find those that mount it (no selector
// finds them: any pod may name any claim). pid is the runtime's provision ID; dep is its live
// Deployment, nil when there is none.
func readVolumeHold(ctx context.Context, c *clients, claim *unstructured.Unstructured, pid string, dep *unstructured.Unstructured) (*volumeHold, error) {
	h := &volumeHold{claim: claim, pid: pid, runtimeDeleted: dep != nil && dep.GetDeletionTimestamp() != nil}
	list, err := c.core.Resource(podsResource).Namespace(claim.GetNamespace()).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		h.podsUnread = true
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the pods that mount PersistentVolumeClaim %s/%s: %w", claim.GetNamespace(), claim.GetName(), err)
	}
	for i := range list.Items {
		pod, err := fromUnstructured[corev1.Pod](&list.Items[i])
		if err != nil {
			return nil, err
		}
		if !mountsClaim(pod, claim.GetName()) {
			continue
		}
		if pod.Labels[LabelInstance] == pid {
			h.ours = append(h.ours, pod.Name)
		} else {
			h.others = append(h.others, pod.Name)
		}
	}
	slices.Sort(h.ours)
	slices.Sort(h.others)
	return h, nil
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
		todo = fmt.Sprintf("%s of something other than this runtime mount%s it, which the apply does not stop: delete %s (or scale down what runs %s)", podList(h.others), verbS(h.others), them(h.others), them(h.others))
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
// live selector kept), live the one in the cluster (nil when there is none). It returns whether it
// wrote the Deployment.
func (p *Provisioner) freeVolume(ctx context.Context, c *clients, claim *unstructured.Unstructured, pid string, rendered, live *unstructured.Unstructured, log *zap.Logger) (bool, error) {
	h, err := readVolumeHold(ctx, c, claim, pid, live)
	if err != nil {
		return false, err
	}
	if !h.releasable() {
		return false, h.refusal()
	}
	return p.releaseVolume(ctx, c, h, rendered, live, log)
}

// releaseVolume frees a claim that is being deleted and that only this runtime's pods hold
// (releasable): it applies the runtime's Deployment at 0 replicas, as a hibernation does (the
// rendered object, ours to apply, so that server-side apply's ownership stays as the apply leaves
// it), and waits until the claim is gone, bounded by timeout_seconds and ctx. The apply then goes on
// as usual: it creates the claim again and applies the Deployment with its replicas. Interrupted, it
// leaves the Deployment at 0 replicas (drift) and the claim going or gone: the next apply repairs
// both. It returns whether it wrote the Deployment.
func (p *Provisioner) releaseVolume(ctx context.Context, c *clients, h *volumeHold, rendered, live *unstructured.Unstructured, log *zap.Logger) (bool, error) {
	log = log.With(zap.String("volume", h.claim.GetName()))
	wrote := false
	if rendered != nil {
		stopped := rendered.DeepCopy()
		if err := unstructured.SetNestedField(stopped.Object, int64(0), "spec", "replicas"); err != nil {
			return false, err
		}
		log.Warn("the runtime's volume is being deleted while its own pods mount it: stopping them so that it goes; the apply then creates it again, empty", zap.Strings("pods", h.ours))
		if _, err := c.apps.Resource(deploymentsResource).Namespace(stopped.GetNamespace()).Apply(ctx, stopped.GetName(), stopped, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return !refused(err), fmt.Errorf("stopping the pods of Deployment %s/%s so that its volume, being deleted, goes: %w", stopped.GetNamespace(), stopped.GetName(), err)
		}
		wrote = true
	}
	return wrote, p.awaitVolumeGone(ctx, c, h, live, log)
}

// awaitVolumeGone polls the claim (the least RBAC may get claims, not watch them) until it is gone or
// another claim of its name is there, logging the pods that still mount it as they change.
func (p *Provisioner) awaitVolumeGone(ctx context.Context, c *clients, h *volumeHold, dep *unstructured.Unstructured, log *zap.Logger) error {
	ctx, cancel, limit := p.specWaitLimit(ctx)
	defer cancel()
	ns, name, uid := h.claim.GetNamespace(), h.claim.GetName(), h.claim.GetUID()
	start, backoff := time.Now(), 100*time.Millisecond
	last := ""
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
			if now, rerr := readVolumeHold(ctx, c, u, h.pid, dep); rerr == nil {
				h.ours, h.others = now.ours, now.others
			}
			if state := terminatingVolume(u) + h.mounts(); state != last {
				log.Info("waiting until the volume being deleted is gone", zap.String("status", state))
				last = state
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s%s: the apply stopped this runtime's pods so that it goes, and waited for it in vain (%s): delete what still mounts it, then apply again",
				terminatingVolume(h.claim), h.mounts(), limit.reason())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}
