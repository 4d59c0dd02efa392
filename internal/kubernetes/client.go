package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// clients are the Kubernetes clients of one provisioner. They are built on first use (never by the
// initializer, which runs during `terraform plan` and may see a kubeconfig that does not exist yet)
// and then shared by every call.
type clients struct {
	config    *rest.Config
	http      *http.Client
	apps      appsv1client.AppsV1Interface
	core      corev1client.CoreV1Interface
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    meta.RESTMapper
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
	// One HTTP client (one connection pool, one rate limiter) for every typed client.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes HTTP client: %w", err)
	}
	apps, err := appsv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(disco)
	return &clients{
		config:    cfg,
		http:      httpClient,
		apps:      apps,
		core:      core,
		dynamic:   dyn,
		discovery: disco,
		mapper:    restmapper.NewDeferredDiscoveryRESTMapper(cached),
	}, nil
}

// wellKnown maps the kinds of the default templates to their resources without a discovery round trip.
var wellKnown = map[schema.GroupVersionKind]schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Kind: "Deployment"}:           {Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Kind: "Service"}:                             {Version: "v1", Resource: "services"},
	{Version: "v1", Kind: "PersistentVolumeClaim"}:               {Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}: {Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
}

// resourceFor returns the resource of a kind; other kinds than the well-known ones (a Gateway API
// HTTPRoute instead of an Ingress, say) are looked up through discovery.
func (c *clients) resourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if gvr, ok := wellKnown[gvk]; ok {
		return gvr, nil
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			// The cache may predate a CRD installed since; look again once.
			if r, ok := c.mapper.(meta.ResettableRESTMapper); ok {
				r.Reset()
				m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			}
		}
		if err != nil {
			return schema.GroupVersionResource{}, fmt.Errorf("the cluster does not serve %s: %w", gvk.String(), err)
		}
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return schema.GroupVersionResource{}, fmt.Errorf("%s is cluster-scoped; templates must render namespaced objects", gvk.Kind)
	}
	return m.Resource, nil
}
