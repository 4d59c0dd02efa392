package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// clients are the Kubernetes clients of one provisioner. They are built on first use (never by the
// initializer, which runs during `terraform plan` and may see a kubeconfig that does not exist yet)
// and then shared by every call.
//
// Every object goes through the dynamic client, typed where convenient with fromUnstructured; no
// typed client, discovery client or REST mapper of client-go is used: those link
// k8s.io/client-go/kubernetes/scheme, and with it the types of every Kubernetes API group, which
// made the provider binary 26 MB larger and its idle RSS 16 MB higher (BENCHMARKS.md, "Memory").
// TestMainPackageLinksNoKubernetesScheme keeps it out.
type clients struct {
	config *rest.Config
	http   *http.Client
	// dynamic reads and writes the objects the templates render.
	dynamic dynamic.Interface
	// apps and core read what the provisioner watches and checks for itself: Deployments and
	// ReplicaSets (apps/v1); pods, claims and namespaces (v1). Like the typed clients they replace,
	// each client has its own rate limiter (qps, burst), so a rollout's watches and reads do not
	// queue behind the applies of other runtimes.
	apps, core dynamic.Interface
	// rest reaches the paths outside the resource API: /version and the discovery documents.
	rest   rest.Interface
	mapper *resourceMapper
}

// lazyClients builds clients once; a failed build is retried on the next call.
type lazyClients struct {
	mu      sync.Mutex
	spec    *Spec
	clients *clients
	// build is replaceable in tests.
	build func(*Spec) (*clients, error)
}

func (l *lazyClients) get(ctx context.Context) (*clients, error) {
	if ctx.Err() != nil {
		// Said like any wait's end: a bare "context deadline exceeded" left a refresh with a
		// `timeouts.read` shorter than the calls before it saying nothing of what it was to wait for.
		return nil, waits.Ended(ctx, time.Now(), "the Kubernetes API server "+l.where())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients != nil {
		return l.clients, nil
	}
	c, err := l.build(l.spec)
	if err != nil {
		return nil, err
	}
	l.clients = c
	return c, nil
}

// where names the cluster the clients reach: the API server's URL once they are built, else the
// kubeconfig (read only when they are).
func (l *lazyClients) where() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.clients != nil:
		return "at " + l.clients.config.Host
	case l.spec.KubeconfigPath != "":
		return "of kubeconfig_path " + l.spec.KubeconfigPath
	}
	return "of the in-cluster service account"
}

// close releases idle connections; the clients stay usable.
func (l *lazyClients) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients != nil {
		l.clients.http.CloseIdleConnections()
	}
}

// restConfig loads the client configuration: the kubeconfig file (and context) when set, else the
// in-cluster service account. It reads files but does not contact the cluster.
func restConfig(spec *Spec) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if spec.KubeconfigPath == "" {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig_path is empty, so the in-cluster service account is used, but: %w; set kubeconfig_path when running outside the cluster", err)
		}
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: spec.KubeconfigPath}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: spec.KubeconfigContext}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			where := "kubeconfig_path " + spec.KubeconfigPath
			if spec.KubeconfigContext != "" {
				where += " (context " + spec.KubeconfigContext + ")"
			}
			return nil, fmt.Errorf("loading %s: %w", where, err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	// No cfg.Timeout: every call passes the operation's context (the resource's timeouts, a data
	// source's read timeout, AwaitReady's waitLimit, the snapshot LIST's minute), and Go's transport
	// honours it while it dials, shakes hands, waits for the answer and reads the body, so a server
	// that accepts the connection and never answers holds a call only until then. A per-request
	// Timeout would also cut the watches of AwaitReady, which legitimately stay open for minutes.
	// What runs before the transport is bounded by deadlineTransport.
	cfg.QPS = float32(spec.QPS)
	cfg.Burst = spec.Burst
	cfg.UserAgent = "terraform-provider-rill"
	return cfg, nil
}

func buildClients(spec *Spec) (*clients, error) {
	cfg, err := restConfig(spec)
	if err != nil {
		return nil, err
	}
	return clientsFor(cfg)
}

// clientsFor builds the clients of a client configuration.
func clientsFor(cfg *rest.Config) (*clients, error) {
	// One HTTP client (one connection pool) for every client; each client has its own rate limiter.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes HTTP client: %w", err)
	}
	httpClient.Transport = &deadlineTransport{next: httpClient.Transport, host: cfg.Host,
		detach: cfg.ExecProvider != nil || cfg.AuthProvider != nil}
	var dyn [3]dynamic.Interface
	for i := range dyn {
		if dyn[i], err = dynamic.NewForConfigAndClient(cfg, httpClient); err != nil {
			return nil, err
		}
	}
	// The dynamic client's JSON configuration: errors decode into *metav1.Status (apierrors works).
	raw, err := rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(cfg), httpClient)
	if err != nil {
		return nil, err
	}
	return &clients{
		config:  cfg,
		http:    httpClient,
		dynamic: dyn[0],
		apps:    dyn[1],
		core:    dyn[2],
		rest:    raw,
		mapper:  newResourceMapper(raw),
	}, nil
}

// deadlineTransport says what a request waited for when its context ended, and with detach ends it
// then even while what runs under it does not return. Go's transport honours the context, but
// client-go's round trippers run a kubeconfig's credential plugin (exec: aws eks get-token, kubelogin,
// gke-gcloud-auth-plugin; or an auth-provider's token refresh) before it, with exec.Command and
// without the context: a plugin that hangs (a login waiting for a browser, a network that swallows
// packets) held the call, and the operation, past its deadline, for as long as the plugin ran. A
// detached request left behind ends when the plugin does, and its response is closed then. Detaching
// costs a goroutine, a channel and a few microseconds per request (3 allocations more than the ~50 us
// loopback round trip's 63), so only configurations with a plugin pay it.
type deadlineTransport struct {
	next   http.RoundTripper
	host   string // the API server, to name it in errors
	detach bool   // run next in a goroutine of its own: it may not honour the context
}

func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	start := time.Now()
	if !t.detach || ctx.Done() == nil {
		resp, err := t.next.RoundTrip(req)
		if err != nil && ctx.Err() != nil {
			return nil, t.waited(req, start, err)
		}
		return resp, err
	}
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := t.next.RoundTrip(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			return nil, t.waited(req, start, r.err)
		}
		return r.resp, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.resp != nil {
				_ = r.resp.Body.Close()
			}
		}()
		return nil, t.waited(req, start, ctx.Err())
	}
}

// waited says what a request whose context ended waited for, how long, and until what.
func (t *deadlineTransport) waited(req *http.Request, start time.Time, err error) error {
	return fmt.Errorf("waited %s for the Kubernetes API server at %s (or the kubeconfig's credential plugin) to answer %s %s, until %s: %w",
		waits.Elapsed(start), t.host, req.Method, req.URL.Path, waits.Until(req.Context().Err()), err)
}

// CloseIdleConnections closes the idle connections of the transport underneath (lazyClients.close).
func (t *deadlineTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// WrappedRoundTripper lets client-go's helpers reach the transport underneath.
func (t *deadlineTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// The resources the provisioner reads itself, beside what the templates render.
var (
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	replicaSetsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	podsResource        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pvcsResource        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	namespacesResource  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// fromUnstructured converts an object the dynamic client read into T, its type of k8s.io/api.
func fromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}

// wellKnown maps the kinds of the default templates to their resources without a discovery round trip.
var wellKnown = map[schema.GroupVersionKind]schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Kind: "Deployment"}:           deploymentsResource,
	{Version: "v1", Kind: "Service"}:                             {Version: "v1", Resource: "services"},
	{Version: "v1", Kind: "PersistentVolumeClaim"}:               pvcsResource,
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}: {Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
}

// resourceFor returns the resource of a kind; other kinds than the well-known ones (a Gateway API
// HTTPRoute instead of an Ingress, say) are looked up in the cluster's discovery documents. A kind
// the cluster does not serve is an error wrapping a *meta.NoKindMatchError.
func (c *clients) resourceFor(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if gvr, ok := wellKnown[gvk]; ok {
		return gvr, nil
	}
	m, err := c.mapper.mapping(ctx, gvk)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, fmt.Errorf("the cluster does not serve %s: %w", gvk.String(), err)
		}
		return schema.GroupVersionResource{}, fmt.Errorf("looking up %s in the cluster's API: %w", gvk.String(), err)
	}
	if !m.namespaced {
		return schema.GroupVersionResource{}, fmt.Errorf("%s is cluster-scoped; templates must render namespaced objects", gvk.Kind)
	}
	return m.resource, nil
}
