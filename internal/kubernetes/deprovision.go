package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Deprovision deletes the runtime's five objects (volume included) with foreground propagation and
// waits until they are gone, bounded by timeout_seconds and ctx. Objects already gone are success.
func (p *Provisioner) Deprovision(ctx context.Context, r *provisioner.Resource) error {
	st, _, names, err := p.resolve(r)
	if err != nil {
		return err
	}
	ctx, cancel, limit := p.specWaitLimit(ctx)
	defer cancel()
	// A request that the wait's bound ended says which bound that was: its own error says "until the
	// operation's deadline" also when timeout_seconds, not the resource's timeouts.delete, ended it.
	bounded := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("deleting runtime %s (%s): %w", r.ID, limit.reason(), err)
		}
		return err
	}
	c, err := p.clients.get(ctx)
	if err != nil {
		return bounded(err)
	}
	// Deleting in another cluster would find nothing, succeed, and leave the runtime running.
	if _, err := p.checkCluster(ctx, c, r.ID, st); err != nil {
		return bounded(err)
	}
	defer wrote(c, st.Namespace)
	log := p.logger.With(zap.String("resource_id", r.ID), zap.String("namespace", st.Namespace))
	takenOver := func(u *unstructured.Unstructured) error {
		log.Info("runtime was taken over by a later create of its name: leaving it", zap.String("kind", u.GetKind()), zap.String("name", u.GetName()))
		return &TakenOverError{ResourceID: r.ID, Name: u.GetAnnotations()[AnnotationName], Namespace: st.Namespace}
	}
	var live map[string]*unstructured.Unstructured
	// A named runtime's objects are read first, and deleted as read (deleteAsRead); so are those of
	// a named runtime whose state is from before the claim, which a later create may have claimed.
	claimed := st.Claim != "" || st.Name != ""
	if claimed {
		// A named runtime that a later create took over (this is the old half of an interrupted
		// create_before_destroy replacement, say) is the later instance's: deleting it would delete
		// the objects and the volume that instance uses.
		if live, err = p.readLive(ctx, c, st.Namespace, names, getObject); err != nil {
			return bounded(err)
		}
		if taker := takenOverBy(live, st.Claim); taker != nil {
			return takenOver(taker)
		}
	}

	type target struct {
		kind, name string
		gvr        schema.GroupVersionResource
	}
	var targets []target
	var errs []error
	// Reverse apply order: Ingresses and Service first, the volume last.
	for i := len(p.templates.templates) - 1; i >= 0; i-- {
		mt := p.templates.templates[i]
		name := mt.slot.name(names)
		gvr, err := c.resourceFor(ctx, mt.gvk)
		if err != nil {
			if meta.IsNoMatchError(errors.Unwrap(err)) {
				continue // the cluster does not serve the kind: no such object can exist
			}
			errs = append(errs, err)
			continue
		}
		fg := metav1.DeletePropagationForeground
		opts := metav1.DeleteOptions{PropagationPolicy: &fg}
		objects := c.dynamic.Resource(gvr).Namespace(st.Namespace)
		if !claimed {
			err = objects.Delete(ctx, name, opts)
		} else if read := live[mt.slot.field]; read == nil {
			continue // missing when read: nothing of this instance's to delete (an adoption may have made it since)
		} else {
			if beforeClaimedDelete != nil {
				beforeClaimedDelete(mt.gvk.Kind)
			}
			var taker *unstructured.Unstructured
			if taker, err = deleteAsRead(ctx, objects, read, st.Claim, opts); taker != nil {
				// Deleted so far: only objects after the one the adoption had reached (see
				// deleteAsRead); its apply makes them again as it goes on.
				return takenOver(taker)
			}
		}
		switch {
		case err == nil:
			log.Info("deleting", zap.String("kind", mt.gvk.Kind), zap.String("name", name))
			targets = append(targets, target{kind: mt.gvk.Kind, name: name, gvr: gvr})
		case apierrors.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("deleting %s %s/%s: %w%s", mt.gvk.Kind, st.Namespace, name, err, rbacHint(err)))
		}
	}
	if len(errs) > 0 {
		return bounded(errors.Join(errs...))
	}

	// Wait until every object is gone (foreground deletion keeps the Deployment until its pods are
	// gone; the volume's protection finalizer keeps the claim until no pod uses it).
	backoff := 100 * time.Millisecond
	for {
		var remaining []string
		for _, t := range targets {
			obj, err := c.dynamic.Resource(t.gvr).Namespace(st.Namespace).Get(ctx, t.name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil && ctx.Err() == nil:
				return fmt.Errorf("checking that %s %s/%s is gone: %w", t.kind, st.Namespace, t.name, err)
			default:
				desc := t.kind + " " + t.name
				if obj != nil {
					desc += finalizersOf(obj)
				}
				remaining = append(remaining, desc)
			}
		}
		if len(remaining) == 0 {
			log.Info("runtime deleted")
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("runtime objects in namespace %s still exist (%s): %s", st.Namespace, limit.reason(), strings.Join(remaining, "; "))
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// beforeClaimedDelete, when set (by tests only; nil in production), runs in Deprovision of a claimed
// runtime before each object's delete, with its kind: the first call comes between the read of the
// objects and the deletes, where a create adopting the runtime can land, the others between deletes.
var beforeClaimedDelete func(kind string)

// takenOverBy returns an object of live that shows that a later create of the name took the runtime
// over from the state whose claim is claim ("" for a state from before the claim), or nil: one that
// carries another claim, when none carries the state's. A create that failed part-way wrote its
// claim on the objects it applied and kept no state (it adopted the runtime: see claimDrift), so
// while one object still carries the state's claim the runtime is that state's: its destroy deletes
// it and its update writes its claim again. Objects of a state from before the claim carry none,
// unless a later create claimed them. Of several other claims (a create that took the runtime over,
// then another that failed part-way), the object returned is the first in the order of the keys of
// live, so that every call answers alike.
func takenOverBy(live map[string]*unstructured.Unstructured, claim string) *unstructured.Unstructured {
	var taker *unstructured.Unstructured
	for _, k := range slices.Sorted(maps.Keys(live)) {
		u := live[k]
		if u.GetAnnotations()[AnnotationClaim] == claim {
			return nil
		}
		if taker == nil && claimedByAnother(u, claim) {
			taker = u
		}
	}
	return taker
}

// claimedByAnother reports whether u carries a claim (AnnotationClaim) other than claim: a later create
// of the name took it over. An object without one is not another's: runtimes made before claims
// have none.
func claimedByAnother(u *unstructured.Unstructured, claim string) bool {
	c := u.GetAnnotations()[AnnotationClaim]
	return c != "" && c != claim
}

// deleteAsRead deletes obj, one of a claimed runtime's objects as Deprovision read it, only while the
// server holds it as read: the delete's preconditions are its UID and resourceVersion. A create that
// adopts the runtime applies its objects with its own claim, and each apply gives the object a new
// resourceVersion, so that whatever the adoption wrote since the read is not deleted.
//
// Why this keeps the volume of an adoption: the adoption applies in apply order, the volume first,
// and Deprovision deletes in reverse, the volume last. An adoption that wrote anything after the
// read wrote the volume first, so the volume's delete (if no earlier one) is refused; the objects
// deleted before that are only those the adoption had not applied yet, which its apply makes again
// as it goes on (one it applies while still being deleted, foreground deletion waiting for its
// dependents, goes after all: its next plan finds it missing and applies it again). An adoption
// that wrote before the read left its claim there, and Deprovision stopped before any delete.
//
// Controllers write too (a Deployment's status, a volume claim's binding), which also refuses the
// delete (409 Conflict): obj is then read again, and deleted as read then while it carries claim (or
// none); one that carries another claim is returned (taker) and left. It tries until ctx ends.
func deleteAsRead(ctx context.Context, objects dynamic.ResourceInterface, obj *unstructured.Unstructured, claim string, opts metav1.DeleteOptions) (taker *unstructured.Unstructured, err error) {
	for refused := 0; ; refused++ {
		uid, rv := obj.GetUID(), obj.GetResourceVersion()
		opts.Preconditions = &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}
		err = objects.Delete(ctx, obj.GetName(), opts)
		if err == nil || !apierrors.IsConflict(err) {
			if err != nil && refused > 0 && !apierrors.IsNotFound(err) {
				err = fmt.Errorf("waiting for it to stop changing (a controller writing it) to delete it as read, %d deletes refused: %w", refused, err)
			}
			return nil, err
		}
		if obj, err = objects.Get(ctx, obj.GetName(), metav1.GetOptions{}); err != nil {
			if !apierrors.IsNotFound(err) {
				err = fmt.Errorf("reading it again after its delete was refused because it had changed since it was read: %w", err)
			}
			return nil, err
		}
		if claimedByAnother(obj, claim) {
			return obj, nil
		}
	}
}

// TakenOverError says that Deprovision left a named runtime because a later create of its name
// took it over: its objects carry another claim (AnnotationClaim) than this state recorded. It
// wraps provisioner.ErrTakenOver. Nothing the later create had written was deleted (see deleteAsRead).
type TakenOverError struct {
	ResourceID, Name, Namespace string
}

func (e *TakenOverError) Error() string {
	return fmt.Sprintf("runtime %s (name %q) in namespace %s was not deleted: a later create of its name took its objects over, "+
		"after this instance had created or adopted them (the old half of a create_before_destroy replacement whose apply "+
		"was interrupted before this destroy, or another state or workspace that declares the name), and that create's "+
		"state manages it now", e.ResourceID, e.Name, e.Namespace)
}

// Unwrap returns provisioner.ErrTakenOver.
func (e *TakenOverError) Unwrap() error { return provisioner.ErrTakenOver }
