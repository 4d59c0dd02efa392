package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type applyResult struct {
	storageBytes int64    // the volume's requested size after apply
	warnings     []string // see StateWarnings
	applied      int      // objects applied (or maybe applied: see refused), also when applyAll failed
}

// liveObjects says what Provision knows of the objects at a runtime's ID before it applies them.
type liveObjects int

const (
	// objectsMayExist: an update, an adoption, or a named runtime whose objects were found.
	objectsMayExist liveObjects = iota
	// nothingFound: the create of a named runtime that found nothing at its ID, which another
	// create of the same name may fill meanwhile (claim.go).
	nothingFound
	// freshID: the create of an unnamed runtime, at a random ID that only this call uses, so that
	// nothing can be at it (see Provisioner.ProvisionReportingCreation).
	freshID
)

// applyAll applies the rendered objects in order with server-side apply, forced, so that it also takes
// over objects another field manager applied (Rill's admin service's, when adopting). The volume is
// never shrunk: when the rendered size is below the live one, the live size is kept and a warning is
// returned. A live Deployment's selector is kept (see keepLiveSelector). The result is never nil: on
// an error it counts the objects that were, or may have been, applied before it. live holds the
// objects already read (a named runtime's, by slot), and at says what may be at the ID: where the
// runtime's objects may exist (objectsMayExist) a list edited by hand is replaced before its object
// is applied (see repairLists); at a fresh ID nothing is read (no Deployment whose
// selector to keep, no claim that is larger or being deleted), which saves a create two requests.
// creating is set for a create (no recorded state), which does not stop a runtime it finds running
// (freeVolume).
func (p *Provisioner) applyAll(ctx context.Context, c *clients, objs []*renderedObject, live map[string]*unstructured.Unstructured, at liveObjects, creating bool, log *zap.Logger) (*applyResult, error) {
	res := &applyResult{}
	var liveDeployment *unstructured.Unstructured
	volumeGrows := false
	if at != freshID {
		var err error
		if _, liveDeployment, err = keepLiveSelector(ctx, c, objs, log); err != nil {
			return res, err
		}
	}
	for _, ro := range objs {
		obj := ro.obj
		if ro.slot.field == "pvc" {
			size, grows, warning, err := keepLargerVolume(ctx, c, obj, at != freshID, log)
			var deleting *volumeBeingDeleted
			if errors.As(err, &deleting) {
				// A claim being deleted is gone for the runtime (keepLargerVolume); when only the
				// runtime's own pods hold it, an update stops them, waits until it goes, and goes
				// on to create it again, else it refuses and names what holds it.
				var wrote bool
				wrote, err = p.freeVolume(ctx, c, deleting.claim, renderedDeployment(objs), creating, log)
				if wrote {
					res.applied++
				}
				if err == nil {
					size, grows, warning, err = keepLargerVolume(ctx, c, obj, true, log)
				}
			}
			if err != nil {
				return res, err
			}
			volumeGrows = grows
			res.storageBytes = size
			if warning != "" {
				res.warnings = append(res.warnings, warning)
			}
		}
		gvr, err := c.resourceFor(ctx, obj.GroupVersionKind())
		if err != nil {
			return res, fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		repaired, read := false, false
		var repairedPaths [][]string
		if at == objectsMayExist {
			// The Deployment keepLiveSelector read; another object from those read before (a named
			// runtime's), else read by repairLists when its kind has a list to repair (the Service).
			var u *unstructured.Unstructured
			u, read = live[ro.slot.field], live == nil
			if ro.slot.field == "deployment" {
				u, read = liveDeployment, false
			}
			if repaired, repairedPaths, err = repairLists(ctx, c, gvr, obj, u, read, log); err != nil {
				if repaired {
					res.applied++
				}
				return res, err
			}
		}
		out, err := c.dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err == nil && ro.slot.field == "deployment" {
			p.applied.put(out)
		}
		if err != nil {
			if repaired || !refused(err) {
				res.applied++ // repaired, or no answer, a timeout or a server error: it may have been applied
			}
			return res, fmt.Errorf("applying %s %s/%s: %w%s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err, applyHint(err, ro.slot.field == "pvc" && volumeGrows))
		}
		res.applied++
		log.Debug("applied", zap.String("kind", obj.GetKind()), zap.String("name", obj.GetName()))
		if at == objectsMayExist && read {
			// An atomic list the templates leave unset that a hand edit added (an Ingress's tls) is
			// no field of the apply's, so the apply left it; the object was not read before (that
			// would cost every update a GET per Ingress), but the apply answered with it.
			if _, _, err := repairLists(ctx, c, gvr, obj, out, false, log); err != nil {
				return res, err
			}
		}
		if repaired {
			// The repair's merge patch left an Update entry of our field manager that owns what it
			// put back, which the apply now owns too: dropped (createdEntryToApply), as after a
			// claim. Left, it would keep an entry that a later template drops, and it counts as a
			// hand edit (editedByAnother). Other managers' ownership of the repaired lists goes too
			// (repairedEntries). Best effort: the runtime is as rendered either way.
			if err := rewriteManagedFields(ctx, c.dynamic.Resource(gvr).Namespace(obj.GetNamespace()), obj, repairedEntries(repairedPaths), log); err != nil {
				log.Warn("could not drop the managed-fields entry of the lists' repair", zap.String("object", obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName()), zap.Error(err))
			}
		}
	}
	return res, nil
}

// rbacHint is what the error of a request that RBAC refused adds to the API server's reason (which
// names the verb, the resource and the namespace), or "": where the least RBAC the provider needs is.
func rbacHint(err error) string {
	if apierrors.IsForbidden(err) && rbacDenial.MatchString(err.Error()) {
		return " (the credentials lack this verb: examples/kubernetes/rbac.yaml in the provider's repository is the least they need)"
	}
	return ""
}

// applyHint is what the error of an apply adds to the API server's reason, or "". The server answers
// 403 Forbidden both for credentials that lack a verb (RBAC's "User ... cannot patch resource ...")
// and for a claim's growth that the StorageClass does not allow (admission's "only dynamically
// provisioned pvc can be resized ..."), so the hint tells them apart by RBAC's wording: the first
// points at the least RBAC, the second, only when the claim grows, names the StorageClass field.
// Before, every 403 on a claim got the StorageClass hint, also a create refused by RBAC.
func applyHint(err error, volumeGrows bool) string {
	if hint := rbacHint(err); hint != "" || !apierrors.IsForbidden(err) {
		return hint
	}
	if volumeGrows {
		return " (growing a volume needs a StorageClass with allowVolumeExpansion: true and a bound claim)"
	}
	return ""
}

// rbacDenial matches the message of the API server's authorizer
// (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.forbiddenMessage).
var rbacDenial = regexp.MustCompile(`is forbidden: User ".*" cannot [a-z]+ resource "`)

// keepLargerVolume compares the rendered volume size with the live claim's, which it reads when read
// is set (else there is none: a fresh ID). When the live one is larger it sets the rendered object to
// the live size (volumes never shrink) and returns a warning. It returns the size that will be
// applied, and whether that grows the live claim.
func keepLargerVolume(ctx context.Context, c *clients, obj *unstructured.Unstructured, read bool, log *zap.Logger) (int64, bool, string, error) {
	want, err := renderedStorage(obj)
	if err != nil {
		return 0, false, "", err
	}
	if !read {
		return want.Value(), false, "", nil
	}
	u, err := c.core.Resource(pvcsResource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return want.Value(), false, "", nil
	}
	if err != nil {
		return 0, false, "", fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	if u.GetDeletionTimestamp() != nil {
		// A claim being deleted (a destroy or a kubectl delete that a finalizer holds up) is gone
		// for the runtime: applied over, it stays Terminating, and a pod that mounts it is never
		// scheduled, so the readiness wait would run to its timeout. Nothing is applied over it
		// (see freeVolume).
		return 0, false, "", &volumeBeingDeleted{claim: u}
	}
	live, err := fromUnstructured[corev1.PersistentVolumeClaim](u)
	if err != nil {
		return 0, false, "", err
	}
	have, ok := live.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok || have.Cmp(want) <= 0 {
		return want.Value(), ok && have.Cmp(want) < 0, "", nil
	}
	slots := obj.GetAnnotations()[AnnotationSlots]
	warning := volumeKeptWarning(obj.GetNamespace(), obj.GetName(), have, want, slots)
	log.Warn(warning, zap.String("live", have.String()), zap.String("requested", want.String()))
	if err := unstructured.SetNestedField(obj.Object, have.String(), "spec", "resources", "requests", "storage"); err != nil {
		return 0, false, "", err
	}
	return have.Value(), false, warning, nil
}

// volumeBeingDeleted is keepLargerVolume's error for a claim that is being deleted.
type volumeBeingDeleted struct{ claim *unstructured.Unstructured }

func (e *volumeBeingDeleted) Error() string {
	return terminatingVolume(e.claim) + ": nothing was applied"
}

// renderedDeployment is the rendered Deployment among objs, nil when the templates have none.
func renderedDeployment(objs []*renderedObject) *unstructured.Unstructured {
	for _, ro := range objs {
		if ro.slot.field == "deployment" {
			return ro.obj
		}
	}
	return nil
}

// terminatingVolume describes a claim that is being deleted, with what holds it up.
func terminatingVolume(u *unstructured.Unstructured) string {
	return fmt.Sprintf("volume %s/%s is being deleted%s", u.GetNamespace(), u.GetName(), finalizersOf(u))
}

// finalizersOf is " (finalizers: a, b)", or "" when the object has none.
func finalizersOf(u *unstructured.Unstructured) string {
	if len(u.GetFinalizers()) == 0 {
		return ""
	}
	return " (finalizers: " + strings.Join(u.GetFinalizers(), ", ") + ")"
}

func volumeKeptWarning(ns, name string, have, want resource.Quantity, slots string) string {
	return fmt.Sprintf("volume %s/%s stays at %s: %s slot(s) ask for %s, but volumes are never shrunk",
		ns, name, sizeText(have.Value()), slots, sizeText(want.Value()))
}

// sizeText gives a size in whole TiB, GiB or MiB, with its bytes ("80Gi (85899345920 bytes)"), or in
// bytes alone: the templates may spell a claim's size as bare bytes (the default one and Rill's do).
func sizeText(b int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{1 << 40, "Ti"}, {1 << 30, "Gi"}, {1 << 20, "Mi"}} {
		if b >= u.n && b%u.n == 0 {
			return fmt.Sprintf("%d%s (%d bytes)", b/u.n, u.unit, b)
		}
	}
	return fmt.Sprintf("%d bytes", b)
}

// quantityText gives a quantity as written and, when it is a whole number of bytes, its bytes
// ("100Gi (107374182400 bytes)").
func quantityText(q resource.Quantity) string {
	if b, ok := q.AsInt64(); ok {
		if s := q.String(); s != strconv.FormatInt(b, 10) {
			return fmt.Sprintf("%s (%d bytes)", s, b)
		}
		return sizeText(b)
	}
	return q.String()
}

// renderedStorage reads spec.resources.requests.storage of a rendered claim.
func renderedStorage(obj *unstructured.Unstructured) (resource.Quantity, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "resources", "requests", "storage")
	if err != nil || !found {
		return resource.Quantity{}, fmt.Errorf("the PersistentVolumeClaim template must set spec.resources.requests.storage (e.g. \"{{ .StorageBytes }}\")")
	}
	q, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("the PersistentVolumeClaim's spec.resources.requests.storage %q is not a quantity: %v", fmt.Sprint(v), err)
	}
	return q, nil
}
