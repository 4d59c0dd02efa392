package kubernetes

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The warning for a volume that is kept larger than the slots ask for gives both sizes in binary
// units, with the bytes, whatever spelling the claim's template uses (the default template writes
// bare bytes, as Rill's does); a size that is no whole number of KiB is given in bytes alone. It said
// "stays at 128849018880 (128849018880 bytes): 2 slot(s) ask for 85899345920 bytes" before.
func TestVolumeKeptWarningGivesSizesInBinaryUnits(t *testing.T) {
	for _, tc := range []struct{ have, want, out string }{
		{"128849018880", "85899345920",
			"volume rill/runtime-1 stays at 120Gi (128849018880 bytes): 2 slot(s) ask for 80Gi (85899345920 bytes), but volumes are never shrunk"},
		{"120Gi", "80Gi",
			"volume rill/runtime-1 stays at 120Gi (128849018880 bytes): 2 slot(s) ask for 80Gi (85899345920 bytes), but volumes are never shrunk"},
		{"100G", "1500000001",
			"volume rill/runtime-1 stays at 100000000000 bytes: 2 slot(s) ask for 1500000001 bytes, but volumes are never shrunk"},
	} {
		got := volumeKeptWarning("rill", "runtime-1", resource.MustParse(tc.have), resource.MustParse(tc.want), "2")
		if got != tc.out {
			t.Errorf("have %s, want %s:\n got %q\nwant %q", tc.have, tc.want, got, tc.out)
		}
	}
}

// A 403 on an apply is either RBAC refusing a verb or the admission of a claim's growth that the
// StorageClass does not allow; the hint names the cause of each, in the API server's own wording
// (both messages as kube-apiserver 1.34 sends them). Before, every 403 on a claim, also the create
// of a runtime in a namespace where the credentials may not patch claims, said "growing a volume
// needs a StorageClass with allowVolumeExpansion: true".
func TestApplyHintTellsRBACFromAVolumeThatCannotGrow(t *testing.T) {
	pvcs := schema.GroupResource{Resource: "persistentvolumeclaims"}
	rbac := apierrors.NewForbidden(pvcs, "runtime-1", errors.New(`User "system:serviceaccount:rill:rill-provisioner" cannot patch resource "persistentvolumeclaims" in API group "" in the namespace "rill"`))
	resize := apierrors.NewForbidden(pvcs, "runtime-1", errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	const rbacHint = " (the credentials lack this verb: examples/kubernetes/rbac.yaml in the provider's repository is the least they need)"
	const resizeHint = " (growing a volume needs a StorageClass with allowVolumeExpansion: true and a bound claim)"
	for _, tc := range []struct {
		name  string
		err   error
		grows bool
		want  string
	}{
		{"RBAC on a create", rbac, false, rbacHint},
		{"RBAC on a growth", rbac, true, rbacHint},
		{"resize refused", resize, true, resizeHint},
		{"another 403, no growth", resize, false, ""},
		{"not a 403", apierrors.NewNotFound(pvcs, "runtime-1"), true, ""},
		{"no API error", errors.New("connection refused"), true, ""},
	} {
		if got := applyHint(fmt.Errorf("wrapped: %w", tc.err), tc.grows); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
