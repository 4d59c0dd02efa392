package kubernetes

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
