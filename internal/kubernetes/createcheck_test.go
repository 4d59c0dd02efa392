package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// The plan-time check of a new runtime (provisioner.CreateChecker) loads the kubeconfig and asks the
// API server what every Provision asks first. A kubeconfig that does not load and a server that does
// not answer are errors in the words of the apply's, on field kubeconfig_path (where the cluster and
// its credentials come from), never ErrCannotCreate: the file or the server may be there by the time
// of the apply. Before, the kubernetes provisioner had no such check, and such a plan was clean.
func TestCheckCreateLoadsTheKubeconfigAndReachesTheServer(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent", "kubeconfig")
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.For(t)) // nothing listens there
	for name, tc := range map[string]struct{ spec, want string }{
		"missing kubeconfig": {`{"host": "http://*.x", "kubeconfig_path": "` + missing + `"}`,
			"loading kubeconfig_path " + missing + ": stat " + missing + ": no such file or directory"},
		"unreachable server": {`{"host": "http://*.x", "kubeconfig_path": "` + k8stest.WriteKubeconfig(t, "", "https://"+addr, "test-token") + `"}`,
			"cannot reach the Kubernetes API server at https://" + addr},
	} {
		t.Run(name, func(t *testing.T) {
			cc, ok := any(mustProvisioner(t, tc.spec)).(provisioner.CreateChecker)
			if !ok {
				t.Fatal("the kubernetes provisioner has no plan-time check of a create (provisioner.CreateChecker)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := cc.CheckCreate(ctx, provisioner.ResourceTypeRuntime)
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) || fe.Path != "kubeconfig_path" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error on kubeconfig_path saying %q, got %v", tc.want, err)
			}
			if errors.Is(err, provisioner.ErrCannotCreate) {
				t.Fatalf("a check that could not be made must not fail the plan: %v", err)
			}
			if err := cc.CheckCreate(ctx, provisioner.ResourceTypeClickHouse); !errors.Is(err, provisioner.ErrCannotCreate) {
				t.Fatalf("a type it does not provision: want ErrCannotCreate, got %v", err)
			}
		})
	}
}

// Against a cluster that answers, the check passes.
func TestIntegrationCheckCreateOfAReachableCluster(t *testing.T) {
	needCluster(t)
	p := mustProvisioner(t, fmt.Sprintf(`{"host": "http://*.x", "kubeconfig_path": %q}`, testKubeconfig))
	cc, ok := any(p).(provisioner.CreateChecker)
	if !ok {
		t.Fatal("the kubernetes provisioner has no plan-time check of a create (provisioner.CreateChecker)")
	}
	if err := cc.CheckCreate(context.Background(), provisioner.ResourceTypeRuntime); err != nil {
		t.Fatal(err)
	}
}
