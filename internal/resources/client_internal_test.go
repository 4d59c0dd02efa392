package resources

import (
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Resolve's errors list the provisioners to choose from; with none to list they say so instead of
// ending in "one of: " and nothing.
func TestResolveErrorsNeverEndInAnEmptyList(t *testing.T) {
	for _, name := range []string{"", "pool"} {
		_, _, err := (&Client{}).Resolve(name, provisioner.ResourceTypeRuntime)
		if err == nil || strings.HasSuffix(strings.TrimSpace(err.Error()), ":") || !strings.Contains(err.Error(), "the provisioner set is empty") {
			t.Errorf("Resolve(%q) on an empty set: %v", name, err)
		}
	}
}
