package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Claiming a named runtime's ID. Server-side apply creates an object or applies over it alike, and
// says neither, so two creates of one name at the same instant (two configurations, two CI jobs)
// cannot tell from their applies which of them made the runtime: both read nothing at the ID, and
// both apply. The create of a runtime whose objects it found missing therefore creates its first
// object (the volume claim, with the default templates) with a plain create first: the API server
// stores an object under a name once, so exactly one caller's create succeeds and the others' fail
// with AlreadyExists. The one that succeeded created the runtime (provisioner.CreationReporter); the
// others adopt what it makes, as they adopt any object at the ID.
//
// The create records the fields it set under an Update entry of this provisioner's field manager,
// whereas its applies own theirs under an Apply entry: left so, a field that a later template drops
// would stay on the object, owned by the Update entry. The claim therefore turns that entry into the
// Apply entry, which then owns exactly what a server-side apply creating the object would own (or,
// when another call's apply came first, removes it). The rendered object is the one the apply that
// follows applies (Rill's templates included), so the claim changes nothing of what the runtime is
// made of.

// claim creates obj, the first object of a runtime whose objects were all missing, and reports
// whether this call created it: false when the API server says it exists (another call claimed the
// runtime since they were read). A refusal the server answered (forbidden, invalid, ...) created
// nothing; a create whose outcome is unknown (no answer, a timeout) reports true with its error,
// as what is there can only be this call's or come after it.
func claim(ctx context.Context, c *clients, ro *renderedObject, log *zap.Logger) (bool, error) {
	obj := ro.obj
	gvr, err := c.resourceFor(ctx, obj.GroupVersionKind())
	if err != nil {
		return false, err
	}
	ri := c.dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		log.Info("another call created the runtime since its objects were read: adopting it", zap.String("kind", obj.GetKind()), zap.String("name", obj.GetName()))
		return false, nil
	case err != nil:
		return !refused(err), fmt.Errorf("creating %s %s/%s: %w%s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err, applyHint(err, false))
	}
	log.Info("created the runtime's first object: this call creates the runtime", zap.String("kind", obj.GetKind()), zap.String("name", obj.GetName()))
	if err := rewriteManagedFields(ctx, ri, obj, createdEntryToApply, log); err != nil {
		return true, fmt.Errorf("handing the fields of %s %s/%s, just created, to server-side apply: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return true, nil
}

// createdEntryToApply turns the Update entry of this provisioner's field manager (what its create
// set) into its Apply entry (a managedFieldsRewrite). When an Apply entry of its own is there
// already (another call's apply came first), the Update entry is removed instead: the Apply entry
// owns what the applies set.
func createdEntryToApply(entries []metav1.ManagedFieldsEntry) []jsonPatchOp {
	update, applied := -1, false
	for i, f := range entries {
		if f.Manager != FieldManager || f.Subresource != "" {
			continue
		}
		switch f.Operation {
		case metav1.ManagedFieldsOperationApply:
			applied = true
		case metav1.ManagedFieldsOperationUpdate:
			update = i
		}
	}
	switch {
	case update < 0:
		return nil
	case applied:
		return []jsonPatchOp{{Op: "remove", Path: managedFieldsPath(update, "")}}
	default:
		return []jsonPatchOp{{Op: "replace", Path: managedFieldsPath(update, "operation"), Value: string(metav1.ManagedFieldsOperationApply)}}
	}
}

// refused reports whether the API server answered a request with a refusal that leaves nothing
// done: a 4xx status other than a timeout. Anything else (no answer, a 5xx, a timeout) may have
// been done.
func refused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := int(status.Status().Code)
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}
