package kubernetes

import (
	"flag"
	"os"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// The integration tests (integration_test.go) need a Kubernetes API server, from k8stest:
//   - RILL_TEST_KUBECONFIG=<path>: use that cluster (it needs a default StorageClass that binds
//     claims; chaos tests run only when RILL_TEST_CHAOS=1 says kwok's chaos stages are loaded);
//   - otherwise the first integration test starts a private control plane (etcd, kube-apiserver,
//     controller-manager, scheduler, kwok with its chaos stages) with scripts/controlplane.sh in a
//     temporary state dir, shared by the others and stopped at the end; the first run builds the
//     binaries (about 12 minutes on 2 cores);
//   - otherwise, or with -short, they are skipped with the reason; with CI=true they fail instead.
var (
	testKubeconfig string
	testChaos      bool
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	defer k8stest.Stop() // waits until the control plane, if one was started, is stopped
	return m.Run()
}

// needCluster skips (or, in CI, fails) a test that needs a cluster when there is none, and
// otherwise sets testKubeconfig and testChaos.
func needCluster(t *testing.T) {
	t.Helper()
	c := k8stest.Get(t)
	testKubeconfig, testChaos = c.Kubeconfig, c.Chaos
}
