package kubernetes

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The fields a claim's create set are handed to this provisioner's Apply entry: its Update entry
// becomes the Apply entry, or is removed when another call's apply made one already; other
// managers' entries and a status subresource's are left alone.
func TestCreatedEntryToApply(t *testing.T) {
	update := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate}
	apply := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply}
	status := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	other := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}
	for name, tc := range map[string]struct {
		entries []metav1.ManagedFieldsEntry
		want    []jsonPatchOp
	}{
		"created":               {[]metav1.ManagedFieldsEntry{other, update}, []jsonPatchOp{{Op: "replace", Path: "/metadata/managedFields/1/operation", Value: "Apply"}}},
		"another's apply first": {[]metav1.ManagedFieldsEntry{update, other, apply}, []jsonPatchOp{{Op: "remove", Path: "/metadata/managedFields/0"}}},
		"already handed over":   {[]metav1.ManagedFieldsEntry{other, apply, status}, nil},
	} {
		if got := createdEntryToApply(tc.entries); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

// A claim the API server refused created nothing (its caller may not undo the ID); one without an
// answer, or with a timeout or a server error, may have created the object.
func TestRefusedTellsARefusalFromAnUnknownOutcome(t *testing.T) {
	gr := schema.GroupResource{Resource: "persistentvolumeclaims"}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"forbidden":         {apierrors.NewForbidden(gr, "runtime-x", errors.New("RBAC")), true},
		"invalid":           {apierrors.NewInvalid(schema.GroupKind{Kind: "PersistentVolumeClaim"}, "runtime-x", nil), true},
		"too many requests": {apierrors.NewTooManyRequests("slow down", 1), true},
		"request timeout":   {&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusRequestTimeout}}, false},
		"gateway timeout":   {apierrors.NewTimeoutError("the request timed out", 1), false},
		"server error":      {apierrors.NewInternalError(errors.New("etcd")), false},
		"no answer":         {&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
		"wrapped refusal":   {fmt.Errorf("creating: %w", apierrors.NewForbidden(gr, "runtime-x", errors.New("RBAC"))), true},
	} {
		if got := refused(tc.err); got != tc.want {
			t.Errorf("%s: refused = %v, want %v", name, got, tc.want)
		}
	}
}
