package kubernetes

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/static"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// A set entry's type edited in place ("pool" was static, is kubernetes now) hands the kubernetes
// provisioner a static runtime's state, from a Terraform state written before the Terraform layer
// recorded the type that made each resource. Every call that reads the state (refresh, the plan's
// existence and provision checks, an update, a destroy, the wait) refuses it before any request,
// naming the type that wrote it and a key that says so, as an identity mismatch and never as "not
// found". Before, the state, without a namespace or cluster_id, passed for a kubernetes one from
// before cluster identities: the refresh looked in the spec's namespace, found nothing, and reported
// the runtime gone (Terraform planned it anew and left its slots booked in the ledger), the destroy
// deleted nothing and succeeded, and an update applied a new runtime.
func TestAStateWrittenByAStaticProvisionerIsRefusedBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	// The state a static pool really returns, as the Terraform layer keeps it.
	pool, err := static.New([]byte(`{"runtimes": [{"host": "http://a", "slots": 4}]}`),
		ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db")), nil)
	if err != nil {
		t.Fatal(err)
	}
	allocated, err := pool.Provision(ctx, runtimeResource(), &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()})
	if err != nil {
		t.Fatal(err)
	}
	r := &provisioner.Resource{ID: allocated.ID, Type: provisioner.ResourceTypeRuntime, State: provisioner.WithoutObservations(allocated.State),
		Config: allocated.Config}

	srv := newFakeNonKubernetesServer(t)
	p := mustProvisioner(t, `{"host": "http://*.rill.test", "namespace": "rill", "kubeconfig_path": "`+
		k8stest.WriteKubeconfig(t, "", srv.URL, "test-token")+`"}`)
	p.SetName("pool")
	opts := &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 2}).AsMap()}
	_, errCheck := p.CheckResource(ctx, r, opts)
	_, errExists := p.ResourceExists(ctx, r)
	_, errPlan := p.CheckProvision(r, opts)
	_, errUpdate := p.Provision(ctx, r, opts)
	errDelete := p.Deprovision(ctx, r)
	errWait := p.AwaitReady(ctx, r)
	for op, err := range map[string]error{"CheckResource": errCheck, "ResourceExists": errExists, "CheckProvision": errPlan,
		"Provision": errUpdate, "Deprovision": errDelete, "AwaitReady": errWait} {
		var fe *provisioner.ForeignStateError
		if !errors.As(err, &fe) || !errors.Is(err, provisioner.ErrIdentityMismatch) || errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Fatalf("%s: %v; want a ForeignStateError wrapping ErrIdentityMismatch, never ErrResourceNotFound", op, err)
		}
		for _, w := range []string{"this runtime's state was written by a static provisioner (it records ledger_id)", r.ID, "terraform state rm"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error lacks %q: %v", op, w, err)
			}
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("the cluster got %d requests, want none", n)
	}

	// An empty state is no other type's: the plan's check of a create renders as before.
	if _, err := p.CheckProvision(&provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeRuntime}, opts); err != nil {
		t.Fatalf("CheckProvision of a create: %v", err)
	}
}
