package kubernetes

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Templates may render other kinds than the default ones (a Gateway API HTTPRoute instead of an
// Ingress, say): the provisioner maps them to their resources through the cluster's discovery
// document of their group-version, read when first needed. A CRD installed during the test stands
// for such a kind. Before it exists the kind is not served: Provision fails saying so, and
// Deprovision skips it. Once it is installed it is found (a miss is looked up again), and a runtime
// whose HTTP ingress template renders it is provisioned, read and deleted; the document is read
// once. A cluster-scoped kind and an unknown kind of a served group are refused.
func TestIntegrationTemplatesMayRenderOtherKinds(t *testing.T) {
	e := newEnv(t, "")
	group := "t" + randomHex(4) + ".rill.test"
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Route"}
	gvr := gvk.GroupVersion().WithResource("routes")
	route := writeTemplate(t, "route.yaml", "apiVersion: "+group+"/v1\nkind: Route\nspec:\n  host: {{ quote .Hostname }}\n")
	var mu sync.Mutex
	gets := map[string]int{} // GETs by path
	p := e.observedProvisioner(`, "template_paths": {"http_ingress": "`+route+`"}`, func(req *http.Request) {
		if req.Method == http.MethodGet {
			mu.Lock()
			gets[req.URL.Path]++
			mu.Unlock()
		}
	})
	discoveryGets := func() int {
		mu.Lock()
		defer mu.Unlock()
		return gets["/apis/"+group+"/v1"]
	}
	c, err := p.clients.get(e.ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Not served yet.
	_, err = c.resourceFor(e.ctx, gvk)
	if err == nil || !meta.IsNoMatchError(errors.Unwrap(err)) || !strings.Contains(err.Error(), "the cluster does not serve "+group+"/v1, Kind=Route") {
		t.Fatalf("an unserved kind: %v", err)
	}
	r := e.newRuntime()
	if _, err := p.Provision(e.ctx, r, args(1, "v1", false)); err == nil || !strings.Contains(err.Error(), "applying Route "+e.ns+"/http-runtime-"+pidOf(r)+": the cluster does not serve") {
		t.Fatalf("Provision with an unserved kind: %v", err)
	}
	if err := p.Deprovision(e.ctx, r); err != nil {
		t.Fatalf("Deprovision must skip a kind the cluster does not serve: %v", err)
	}

	// Served once the CRD is installed.
	e.installRouteCRD(group)
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := c.resourceFor(e.ctx, gvk)
		if err == nil {
			if got != gvr {
				t.Fatalf("resource %v, want %v", got, gvr)
			}
			break
		}
		if !meta.IsNoMatchError(errors.Unwrap(err)) || time.Now().After(deadline) {
			t.Fatalf("the installed CRD's kind: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := discoveryGets()
	e.provision(p, r, args(1, "v1", false))
	obj, err := e.c.dynamic.Resource(gvr).Namespace(e.ns).Get(e.ctx, "http-runtime-"+pidOf(r), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Route was not applied: %v", err)
	}
	if host, _, _ := unstructured.NestedString(obj.Object, "spec", "host"); host != pidOf(r)+".rill.test" {
		t.Fatalf("Route spec.host %q", host)
	}
	checked, err := p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil || len(checked.State[StateDrift].([]string)) != 0 {
		t.Fatalf("CheckResource: %v, %v", checked, err)
	}
	if err := p.Deprovision(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.dynamic.Resource(gvr).Namespace(e.ns).Get(e.ctx, "http-runtime-"+pidOf(r), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Route after Deprovision: %v", err)
	}
	if n := discoveryGets() - before; n != 0 {
		t.Errorf("%d more GETs of /apis/%s/v1 once the kind was known; want none", n, group)
	}

	clusterScoped := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	if _, err := c.resourceFor(e.ctx, clusterScoped); err == nil || err.Error() != "ClusterRole is cluster-scoped; templates must render namespaced objects" {
		t.Fatalf("a cluster-scoped kind: %v", err)
	}
	unknown := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Nope"}
	if _, err := c.resourceFor(e.ctx, unknown); err == nil || !meta.IsNoMatchError(errors.Unwrap(err)) {
		t.Fatalf("an unknown kind of a served group: %v", err)
	}
	wrongVersion := schema.GroupVersionKind{Group: "apps", Version: "v1beta9", Kind: "Deployment"}
	if _, err := c.resourceFor(e.ctx, wrongVersion); err == nil || !meta.IsNoMatchError(errors.Unwrap(err)) {
		t.Fatalf("a version the cluster does not serve: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := gets["/apis/rbac.authorization.k8s.io/v1"]; n != 1 {
		t.Errorf("%d GETs of /apis/rbac.authorization.k8s.io/v1; want 1", n)
	}
}

// installRouteCRD installs a namespaced kind Route of the given group, version v1, which keeps any
// fields; it is removed at cleanup.
func (e *env) installRouteCRD(group string) {
	e.t.Helper()
	crds := e.c.dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "routes." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "routes", "singular": "route", "kind": "Route", "listKind": "RouteList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if _, err := crds.Create(e.ctx, crd, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating the CRD: %v", err)
	}
	e.t.Cleanup(func() {
		_ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{})
	})
}
