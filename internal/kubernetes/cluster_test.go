package kubernetes

import (
	"errors"
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// A runtime records the cluster it was provisioned in (the UID of kube-system) and its namespace.
// Against another cluster, refresh, update and destroy are errors that name both clusters and the
// fix, never "gone", and touch nothing. The test control plane is one cluster, so "another cluster"
// is a recorded identity that differs from this cluster's: what the provisioner compares is exactly
// that pair of UIDs. A state from before identities adopts the cluster on the next refresh.
func TestIntegrationARuntimeInAnotherClusterIsAnErrorNeverGone(t *testing.T) {
	e := newEnv(t, "")
	ks, err := e.core.Namespaces().Get(e.ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	if r.State[StateClusterID] != string(ks.UID) || r.State[StateCluster] != e.c.config.Host || r.State[StateNamespace] != e.ns {
		t.Fatalf("Provision recorded cluster %v at %v, namespace %v; want %s at %s, %s",
			r.State[StateClusterID], r.State[StateCluster], r.State[StateNamespace], ks.UID, e.c.config.Host, e.ns)
	}

	const other = "0b6c3a52-1e0f-4c8e-9d51-5f2b7c1a9e40"
	elsewhere := &provisioner.Resource{ID: r.ID, Type: r.Type, State: maps.Clone(r.State), Config: r.Config}
	elsewhere.State[StateClusterID] = other
	elsewhere.State[StateCluster] = "https://old-cluster.example:6443"
	_, errCheck := e.p.CheckResource(e.ctx, elsewhere, args(1, "v1", false))
	_, errUpdate := e.p.Provision(e.ctx, elsewhere, args(2, "v1", false))
	errDelete := e.p.Deprovision(e.ctx, elsewhere)
	for op, err := range map[string]error{"CheckResource": errCheck, "Provision": errUpdate, "Deprovision": errDelete} {
		var me *ClusterMismatchError
		if !errors.As(err, &me) || !errors.Is(err, provisioner.ErrIdentityMismatch) || errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Fatalf("%s: %v; want a ClusterMismatchError, not ErrResourceNotFound", op, err)
		}
		for _, w := range []string{other, "https://old-cluster.example:6443", string(ks.UID), e.c.config.Host, "namespace " + e.ns, "kubeconfig_path " + testKubeconfig, "terraform state rm"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q: %v", op, w, err)
			}
		}
	}
	t.Logf("error: %v", errCheck)
	// Nothing was touched: the runtime is as it was, in this cluster.
	checked, err := e.p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil || checked.State[StateSlots] != 1 || len(checked.State[StateDrift].([]string)) != 0 {
		t.Fatalf("the runtime after the refused calls: %v, %v", checked, err)
	}

	// A state from before identities adopts this cluster.
	old := &provisioner.Resource{ID: r.ID, Type: r.Type, State: maps.Clone(r.State), Config: r.Config}
	delete(old.State, StateClusterID)
	delete(old.State, StateCluster)
	adopted, err := e.p.CheckResource(e.ctx, old, args(1, "v1", false))
	if err != nil || adopted.State[StateClusterID] != string(ks.UID) {
		t.Fatalf("CheckResource of a state without a cluster: %v, %v; want it to record %s", adopted, err, ks.UID)
	}
}
