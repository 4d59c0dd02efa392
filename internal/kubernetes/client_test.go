package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// fakeNonKubernetesServer is a web server that is not a Kubernetes API server: it answers every
// request with a plain 404 and counts them. It stays a fake because no real API server answers so:
// its 404s are Status objects and its /version always answers.
type fakeNonKubernetesServer struct {
	*httptest.Server
	requests atomic.Int64
}

func newFakeNonKubernetesServer(t *testing.T) *fakeNonKubernetesServer {
	f := &fakeNonKubernetesServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func runtimeResource() *provisioner.Resource {
	return &provisioner.Resource{ID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff", Type: provisioner.ResourceTypeRuntime}
}

// The initializer reads no kubeconfig and contacts no cluster: it succeeds while the kubeconfig does
// not exist yet (a cluster created later in the same apply), and the first call that needs the
// cluster builds the clients, once.
func TestIntegrationInitializerNeedsNoClusterAndClientIsBuiltLazily(t *testing.T) {
	needCluster(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig") // does not exist yet
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+kubeconfig+`"}`)
	ctx := context.Background()
	err := p.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "kubeconfig_path") {
		t.Fatalf("want an error naming kubeconfig_path, got %v", err)
	}
	// The failure is not cached: once the file exists, the next call builds the client.
	b, err := os.ReadFile(testKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatalf("Check after the kubeconfig appeared: %v", err)
	}
	first, _ := p.clients.get(ctx)
	_ = p.Check(ctx)
	if second, _ := p.clients.get(ctx); first != second {
		t.Fatal("the clients must be built once and reused")
	}
	if cfg := first.config; cfg.QPS != DefaultQPS || cfg.Burst != DefaultBurst || cfg.UserAgent != "terraform-provider-rill" {
		t.Fatalf("rest config QPS %v burst %d agent %q", cfg.QPS, cfg.Burst, cfg.UserAgent)
	}
}

// A namespace that does not exist holds none of the runtime's objects: the API server's 404s (and
// empty lists) mean the runtime is gone, and CheckResource says so with ErrResourceNotFound.
func TestIntegrationCheckResourceInAMissingNamespaceIsNotFound(t *testing.T) {
	needCluster(t)
	ns := "rill-test-absent-" + randomHex(4)
	p := mustProvisioner(t, fmt.Sprintf(`{"host": "http://*.x", "namespace": %q, "kubeconfig_path": %q}`, ns, testKubeconfig))
	_, err := p.CheckResource(context.Background(), runtimeResource(), nil)
	if !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("the API server's 404s for namespace %s must be ErrResourceNotFound, got %v", ns, err)
	}
}

// A user the API server refuses (403: a ServiceAccount without any RBAC rights) learns nothing about
// the runtime: a plain error that says so, never ErrResourceNotFound (the runtime may well exist).
func TestIntegrationCheckResourceRefusedIsNotNotFound(t *testing.T) {
	e := newEnv(t, "")
	const sa = "no-rights"
	if _, err := e.core.ServiceAccounts(e.ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.provisionerAs(sa).CheckResource(e.ctx, runtimeResource(), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("a 403 must be a plain error saying forbidden, got %v", err)
	}
	t.Log(err)
}

// A server that answers 404 to everything but is no Kubernetes API server (a wrong URL in the
// kubeconfig) proves nothing about the runtime: a plain error, never ErrResourceNotFound.
func TestCheckResourceAgainstAServerThatIsNotKubernetesIsNotNotFound(t *testing.T) {
	srv := newFakeNonKubernetesServer(t)
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", srv.URL, "test-token")+`"}`)
	_, err := p.CheckResource(context.Background(), runtimeResource(), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("a 404 from something that is not an API server must be a plain error, got %v", err)
	}
	if srv.requests.Load() == 0 {
		t.Fatal("CheckResource never asked the server")
	}
	t.Log(err)
}

func TestCheckResourceAgainstAnUnreachableServerIsNotNotFound(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.For(t)) // nothing listens there
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", "https://"+addr, "test-token")+`"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := p.CheckResource(ctx, runtimeResource(), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("want a plain error, got %v", err)
	}
	if !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "cannot reach the Kubernetes API server at https://"+addr) {
		t.Fatalf("the error should say that the server cannot be reached (the troubleshooting guide's words), and why: %v", err)
	}
	if err := p.Check(ctx); err == nil {
		t.Fatal("Check must fail against an unreachable server")
	}
}

func TestInClusterWithoutServiceAccountSaysWhatToDo(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	p := mustProvisioner(t, `{"host": "http://*.x"}`)
	err := p.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "set kubeconfig_path") {
		t.Fatalf("got %v", err)
	}
}
