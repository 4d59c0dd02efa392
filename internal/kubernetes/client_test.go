package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// fakeAPIServer answers like a Kubernetes API server in which no Deployment exists, or, in the
// other modes, like a server that refuses (403) or like a web server that is not Kubernetes at all.
type fakeAPIServer struct {
	*httptest.Server
	requests atomic.Int64
	mode     atomic.Value // "ok", "forbidden", "not-kubernetes"
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	f := &fakeAPIServer{}
	f.mode.Store("ok")
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		switch f.mode.Load().(string) {
		case "forbidden":
			status(w, 403, "Forbidden", `deployments.apps is forbidden: User "u" cannot get resource "deployments"`)
			return
		case "not-kubernetes":
			http.NotFound(w, r)
			return
		}
		switch {
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"major":"1","minor":"34","gitVersion":"v1.34.4"}`)
		case strings.HasSuffix(r.URL.Path, "/deployments"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"1"},"items":[]}`)
		default:
			name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			status(w, 404, "NotFound", fmt.Sprintf(`deployments.apps %q not found`, name))
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`, msg, reason, code)
}

func runtimeResource() *provisioner.Resource {
	return &provisioner.Resource{ID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff", Type: provisioner.ResourceTypeRuntime}
}

func TestInitializerDoesNotContactTheClusterAndClientIsBuiltLazily(t *testing.T) {
	srv := newFakeAPIServer(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig") // does not exist yet (a cluster created later in the same apply)
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+kubeconfig+`"}`)
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("the initializer made %d requests", n)
	}
	ctx := context.Background()
	err := p.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "kubeconfig_path") {
		t.Fatalf("want an error naming kubeconfig_path, got %v", err)
	}
	// The failure is not cached: once the file exists, the next call builds the client.
	k8stest.WriteKubeconfig(t, kubeconfig, srv.URL, "test-token")
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

func TestCheckResourceReportsNotFoundOnlyForARealNotFound(t *testing.T) {
	srv := newFakeAPIServer(t)
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", srv.URL, "test-token")+`"}`)
	ctx := context.Background()

	_, err := p.CheckResource(ctx, runtimeResource(), nil)
	if !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("a 404 from the API server must be ErrResourceNotFound, got %v", err)
	}

	srv.mode.Store("forbidden")
	_, err = p.CheckResource(ctx, runtimeResource(), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("a 403 must be a plain error, got %v", err)
	}

	srv.mode.Store("not-kubernetes")
	_, err = p.CheckResource(ctx, runtimeResource(), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("a 404 from something that is not an API server must be a plain error, got %v", err)
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
	if !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("the error should say why: %v", err)
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
