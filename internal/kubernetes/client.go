package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	if err := ctx.Err(); err != nil {
		return nil, err
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
