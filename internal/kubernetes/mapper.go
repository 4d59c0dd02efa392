package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// resourceMapper maps the kinds templates render to the resources the cluster serves them as. It
// reads the discovery document of one group-version (GET /api/v1, /apis/<group>/<version>) the first
// time a kind of it is asked for, and keeps it for the provisioner's life: only the group-versions
// the templates use are ever read, where client-go's discovery REST mapper reads them all, and links
// every Kubernetes API type into the binary through k8s.io/client-go/kubernetes/scheme.
//
// A kind missing from what was read is looked up again (a CRD installed since, say) before it is an
// error, so only what the cluster serves is ever cached.
type resourceMapper struct {
	client rest.Interface
	// lock is held while reading a document; a channel, so that a waiting caller honours its ctx.
	lock   chan struct{}
	served map[schema.GroupVersion]map[string]resourceMapping // kind -> resource
}

// resourceMapping is where the objects of a kind live.
type resourceMapping struct {
	resource   schema.GroupVersionResource
	namespaced bool
}

func newResourceMapper(client rest.Interface) *resourceMapper {
	return &resourceMapper{client: client, lock: make(chan struct{}, 1), served: map[schema.GroupVersion]map[string]resourceMapping{}}
}

// mapping returns the resource of gvk. A kind the cluster does not serve in that version (or a group
// or version it does not serve at all) is a *meta.NoKindMatchError, as with client-go's REST mapper;
// a failure to read the discovery document is returned as it is.
func (m *resourceMapper) mapping(ctx context.Context, gvk schema.GroupVersionKind) (resourceMapping, error) {
	select {
	case m.lock <- struct{}{}:
	case <-ctx.Done():
		return resourceMapping{}, ctx.Err()
	}
	defer func() { <-m.lock }()
	gv := gvk.GroupVersion()
	if r, ok := m.served[gv][gvk.Kind]; ok {
		return r, nil
	}
	noMatch := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	if gvk.Version == "" || gvk.Kind == "" {
		return resourceMapping{}, noMatch
	}
	kinds, err := m.read(ctx, gv)
	if apierrors.IsNotFound(err) {
		return resourceMapping{}, noMatch
	}
	if err != nil {
		return resourceMapping{}, err
	}
	m.served[gv] = kinds
	if r, ok := kinds[gvk.Kind]; ok {
		return r, nil
	}
	return resourceMapping{}, noMatch
}

// read reads the discovery document of one group-version: its kinds and their resources.
func (m *resourceMapper) read(ctx context.Context, gv schema.GroupVersion) (map[string]resourceMapping, error) {
	path := "/apis/" + url.PathEscape(gv.Group) + "/" + url.PathEscape(gv.Version)
	if gv.Group == "" {
		path = "/api/" + url.PathEscape(gv.Version)
	}
	body, err := m.client.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: not a discovery document: %w", path, err)
	}
	kinds := map[string]resourceMapping{}
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") {
			continue // a subresource (deployments/scale), whose kind (Scale) is not the object's
		}
		m := resourceMapping{resource: gv.WithResource(r.Name), namespaced: r.Namespaced}
		// Like client-go's mapper, also the lower-case kind; the exact one wins over another's.
		if lower := strings.ToLower(r.Kind); lower != r.Kind {
			if _, taken := kinds[lower]; !taken {
				kinds[lower] = m
			}
		}
		kinds[r.Kind] = m
	}
	return kinds, nil
}
