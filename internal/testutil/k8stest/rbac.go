package k8stest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// The kinds of examples/kubernetes/rbac.yaml, and whether each is namespaced.
var rbacKinds = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"ServiceAccount":     {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	"Role":               {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
	"RoleBinding":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
	"ClusterRole":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	"ClusterRoleBinding": {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
}

// ApplyExampleRBAC creates (or replaces) the objects of examples/kubernetes/rbac.yaml for namespace
// ns: namespaced ones in ns, cluster-scoped ones with ns appended to their name (deleted when the
// test ends). keepVerb, when set, filters the verbs of the roles' rules (a rule left without verbs
// is dropped).
func ApplyExampleRBAC(t testing.TB, ctx context.Context, dyn dynamic.Interface, ns string, keepVerb func(string) bool) {
	t.Helper()
	root, err := proc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "kubernetes", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		kind, ok := rbacKinds[obj.GetKind()]
		if !ok {
			t.Fatalf("examples/kubernetes/rbac.yaml: kind %s is not one ApplyExampleRBAC knows", obj.GetKind())
		}
		if kind.namespaced {
			obj.SetNamespace(ns)
		} else {
			obj.SetName(obj.GetName() + "-" + ns)
		}
		if ref, ok, _ := unstructured.NestedString(obj.Object, "roleRef", "name"); ok && obj.GetKind() == "ClusterRoleBinding" {
			_ = unstructured.SetNestedField(obj.Object, ref+"-"+ns, "roleRef", "name")
		}
		if subjects, ok, _ := unstructured.NestedSlice(obj.Object, "subjects"); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = ns
			}
			_ = unstructured.SetNestedSlice(obj.Object, subjects, "subjects")
		}
		if rules, ok, _ := unstructured.NestedSlice(obj.Object, "rules"); ok && keepVerb != nil {
			var keptRules []any
			for _, rule := range rules {
				m := rule.(map[string]any)
				var kept []any
				for _, v := range m["verbs"].([]any) {
					if keepVerb(v.(string)) {
						kept = append(kept, v)
					}
				}
				if len(kept) > 0 { // a rule without verbs is invalid
					m["verbs"] = kept
					keptRules = append(keptRules, m)
				}
			}
			_ = unstructured.SetNestedSlice(obj.Object, keptRules, "rules")
		}
		client := dyn.Resource(kind.gvr).Namespace(ns)
		if !kind.namespaced {
			client = dyn.Resource(kind.gvr)
			name := obj.GetName()
			t.Cleanup(func() { _ = client.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		if _, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "rbac-test", Force: true}); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// ServiceAccountKubeconfig writes a kubeconfig for the cluster of adminKubeconfig (its server and CA)
// that authenticates with a fresh token of ServiceAccount ns/sa (TokenRequest API, valid an hour) and
// defaults to namespace ns, and returns its path.
func ServiceAccountKubeconfig(t testing.TB, ctx context.Context, adminKubeconfig, ns, sa string) string {
	t.Helper()
	restCfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	core, err := corev1client.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tok, err := core.ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, sa, err)
	}
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	current := admin.Contexts[admin.CurrentContext]
	if current == nil {
		t.Fatalf("%s has no current context", adminKubeconfig)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = admin.Clusters[current.Cluster]
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Allowed asks the API server's authorizer (a SubjectAccessReview) whether ServiceAccount ns/sa may
// do verb on group/resource in ns (on the object called name; "" for any).
func Allowed(t testing.TB, ctx context.Context, dyn dynamic.Interface, ns, sa, verb, group, resource, name string) bool {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{
			"user":               "system:serviceaccount:" + ns + ":" + sa,
			"groups":             []any{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			"resourceAttributes": map[string]any{"namespace": ns, "verb": verb, "group": group, "resource": resource, "name": name},
		},
	}}
	out, err := dyn.Resource(gvr).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	return allowed
}

// WaitUntilAllowed waits, at most 30 seconds, until the authorizer (which follows RBAC objects
// through an informer) answers Allowed as wanted.
func WaitUntilAllowed(t testing.TB, ctx context.Context, dyn dynamic.Interface, ns, sa, verb, group, resource, name string, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for Allowed(t, ctx, dyn, ns, sa, verb, group, resource, name) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s %s/%s %s for ServiceAccount %s/%s: still allowed=%v after 30 s", verb, group, resource, name, ns, sa, !want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
