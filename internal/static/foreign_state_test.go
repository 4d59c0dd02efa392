package static

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes" // registers the keys of its states
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// A set entry's type edited in place ("pool" was kubernetes, is static now) hands the static pool a
// Kubernetes runtime's state, from a Terraform state written before the Terraform layer recorded the
// type that made each resource. Every call that reads the state (refresh, the plan's existence check,
// an update, a destroy) refuses it, naming the type that wrote it and a key that says so, as an
// identity mismatch and never as "not found", and the ledger is left as it was. Before, the state,
// without a ledger_id, passed for a static one from before ledgers had identities: the refresh found
// no row at the ID and reported the runtime gone (Terraform planned it anew and left its Deployment
// to nobody), and the destroy freed nothing and succeeded.
func TestAStateWrittenByAKubernetesProvisionerIsRefusedNeverGone(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	p.SetName("pool")
	other, err := provision(t, p, "rt-other", 1)
	if err != nil {
		t.Fatal(err)
	}
	k8s := &provisioner.Resource{ID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff", Type: provisioner.ResourceTypeRuntime, State: map[string]any{
		kubernetes.StateNamespace: "rill", kubernetes.StateProvisionID: "6f9619ff8b86d011b42d00cf4fc964ff",
		kubernetes.StateImageTag: "v0.60.0", kubernetes.StateTemplatesChecksum: "abc", kubernetes.StateClusterID: "c0ffee",
		kubernetes.StateCluster: "https://k8s.example.com:6443", kubernetes.StateAdopting: false,
	}}
	before, err := db.ListAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, errCheck := p.CheckResource(ctx, k8s, runtimeOpts(1))
	_, errExists := p.ResourceExists(ctx, k8s)
	_, errUpdate := p.Provision(ctx, k8s, runtimeOpts(2))
	errDelete := p.Deprovision(ctx, k8s)
	for op, err := range map[string]error{"CheckResource": errCheck, "ResourceExists": errExists, "Provision": errUpdate, "Deprovision": errDelete} {
		var fe *provisioner.ForeignStateError
		if !errors.As(err, &fe) || !errors.Is(err, provisioner.ErrIdentityMismatch) || errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Fatalf("%s: %v; want a ForeignStateError wrapping ErrIdentityMismatch, never ErrResourceNotFound", op, err)
		}
		for _, w := range []string{"this runtime's state was written by a kubernetes provisioner (it records namespace)", k8s.ID, "terraform state rm"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error lacks %q: %v", op, w, err)
			}
		}
	}
	after, err := db.ListAllocations(ctx)
	if err != nil || len(after) != len(before) || len(after) != 1 || after[0].ResourceID != "rt-other" || after[0].Slots != 1 {
		t.Fatalf("the ledger changed: %+v (%v), was %+v", after, err, before)
	}

	// An empty state is no other type's: an import reads the runtime, a destroy frees it.
	imported := &provisioner.Resource{ID: other.ID, Type: provisioner.ResourceTypeRuntime}
	if got, err := p.CheckResource(ctx, imported, nil); err != nil || hostOf(got) != hostOf(other) {
		t.Fatalf("import: %+v, %v", got, err)
	}
	if err := p.Deprovision(ctx, other); err != nil {
		t.Fatal(err)
	}
}
