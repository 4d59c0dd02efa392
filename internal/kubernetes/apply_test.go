package kubernetes

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
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
