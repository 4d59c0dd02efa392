package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// The RBAC of examples/kubernetes/rbac.yaml is enough for a runtime's whole lifecycle: the local
// control plane runs with --authorization-mode=RBAC, and the provisioner runs as that ServiceAccount
// (a token from the TokenRequest API). Then, with "list" taken away from every rule, CheckResource
// still reads everything (one GET per object instead of the snapshots' LISTs).
func TestIntegrationTheExampleRBACIsEnough(t *testing.T) {
	e := newEnv(t, "")
	e.applyExampleRBAC(nil)
	e.waitUntilAllowedOn("rill-provisioner", "get", "", "namespaces", identityNamespace, true)
	p := e.provisionerAs("rill-provisioner")

	r := e.newRuntime()
	e.provision(p, r, args(1, "v1", false))
	if err := p.AwaitReady(e.ctx, r); err != nil {
		t.Fatalf("AwaitReady as the ServiceAccount: %v", err)
	}
	if ks, err := e.core.Namespaces().Get(e.ctx, identityNamespace, metav1.GetOptions{}); err != nil || r.State[StateClusterID] != string(ks.UID) {
		t.Fatalf("as the ServiceAccount, the runtime recorded cluster %v; want the kube-system UID (%v)", r.State[StateClusterID], err)
	}
	if err := p.Check(e.ctx); err != nil {
		t.Fatalf("Check as the ServiceAccount: %v", err)
	}
	checked, err := p.CheckResource(e.ctx, r, args(1, "v1", false))
	if err != nil {
		t.Fatalf("CheckResource as the ServiceAccount: %v", err)
	}
	if d := checked.State[StateDrift].([]string); len(d) != 0 {
		t.Fatalf("drift %q", d)
	}
	e.provision(p, r, args(2, "v2", false)) // an update: the claim's GET and the applies again
	if err := p.AwaitReady(e.ctx, r); err != nil {
		t.Fatalf("AwaitReady after the update: %v", err)
	}

	// Without "list": the snapshots' LISTs fail with 403 and the reads fall back to GETs.
	e.applyExampleRBAC(func(verb string) bool { return verb != "list" })
	e.waitUntilAllowed("rill-provisioner", "list", "apps", "deployments", false)
	p = e.provisionerAs("rill-provisioner")
	core, logs := observer.New(zapcore.DebugLevel)
	p.reads.logger = zap.New(core)
	checked, err = p.CheckResource(e.ctx, r, args(2, "v2", false))
	if err != nil {
		t.Fatalf("CheckResource without list: %v", err)
	}
	if n := logs.FilterMessage("listing failed; reading each object with a GET instead").Len(); n == 0 {
		t.Fatal("the LISTs did not fail without the list verb: the fallback was not exercised")
	}
	if d := checked.State[StateDrift].([]string); len(d) != 0 || checked.State[StateSlots] != 2 {
		t.Fatalf("without list: state %v", checked.State)
	}

	e.applyExampleRBAC(nil)
	e.waitUntilAllowed("rill-provisioner", "list", "apps", "deployments", true)
	p = e.provisionerAs("rill-provisioner")
	if err := p.Deprovision(e.ctx, r); err != nil {
		t.Fatalf("Deprovision as the ServiceAccount: %v", err)
	}
	if _, err := p.CheckResource(e.ctx, r, args(2, "v2", false)); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("after Deprovision: want ErrResourceNotFound, got %v", err)
	}
}

// applyExampleRBAC creates (or replaces) the objects of examples/kubernetes/rbac.yaml in the test's
// namespace (cluster-scoped ones get the namespace in their name, and are deleted when the test
// ends); keepVerb, when set, filters the Role's verbs.
func (e *env) applyExampleRBAC(keepVerb func(string) bool) {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "kubernetes", "rbac.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			e.t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		mapping, err := e.c.mapper.mapping(e.ctx, obj.GroupVersionKind())
		if err != nil {
			e.t.Fatal(err)
		}
		clusterScoped := !mapping.namespaced
		if clusterScoped {
			obj.SetName(obj.GetName() + "-" + e.ns)
		} else {
			obj.SetNamespace(e.ns)
		}
		if ref, ok, _ := unstructured.NestedString(obj.Object, "roleRef", "name"); ok && obj.GetKind() == "ClusterRoleBinding" {
			_ = unstructured.SetNestedField(obj.Object, ref+"-"+e.ns, "roleRef", "name")
		}
		if subjects, ok, _ := unstructured.NestedSlice(obj.Object, "subjects"); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = e.ns
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
				if len(kept) > 0 { // a rule without verbs is invalid: drop it
					m["verbs"] = kept
					keptRules = append(keptRules, m)
				}
			}
			_ = unstructured.SetNestedSlice(obj.Object, keptRules, "rules")
		}
		client := e.c.dynamic.Resource(mapping.resource).Namespace(e.ns)
		if clusterScoped {
			client = e.c.dynamic.Resource(mapping.resource)
			name := obj.GetName()
			e.t.Cleanup(func() { _ = client.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		if _, err := client.Apply(e.ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "rbac-test", Force: true}); err != nil {
			e.t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// provisionerAs returns a provisioner for the test's namespace whose kubeconfig holds a fresh token
// of the ServiceAccount (so RBAC changes apply to it at once: a new provisioner has new clients).
func (e *env) provisionerAs(serviceAccount string) *Provisioner {
	e.t.Helper()
	expiry := int64(600)
	tok, err := e.core.ServiceAccounts(e.ns).CreateToken(e.ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("TokenRequest for %s: %v", serviceAccount, err)
	}
	admin, err := clientcmd.LoadFromFile(testKubeconfig)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx := admin.Contexts[admin.CurrentContext]
	if ctx == nil {
		e.t.Fatalf("%s has no current context", testKubeconfig)
	}
	cluster := admin.Clusters[ctx.Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = cluster
	cfg.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: serviceAccount, Namespace: e.ns}
	cfg.CurrentContext = "test"
	path := filepath.Join(e.t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		e.t.Fatal(err)
	}
	spec := fmt.Sprintf(`{"host": "http://*.rill.test", "namespace": %q, "kubeconfig_path": %q, "timeout_seconds": 60, "ping_path": ""}`, e.ns, path)
	p, err := newProvisioner([]byte(spec), zaptest.NewLogger(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// waitUntilAllowed waits until the API server's authorizer (which follows RBAC objects through an
// informer) answers a SubjectAccessReview for the ServiceAccount as wanted.
func (e *env) waitUntilAllowed(serviceAccount, verb, group, resource string, want bool) {
	e.t.Helper()
	e.waitUntilAllowedOn(serviceAccount, verb, group, resource, "", want)
}

// waitUntilAllowedOn is waitUntilAllowed for one named object ("" for any).
func (e *env) waitUntilAllowedOn(serviceAccount, verb, group, resource, name string, want bool) {
	e.t.Helper()
	gvr := schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{
			"user":               "system:serviceaccount:" + e.ns + ":" + serviceAccount,
			"groups":             []any{"system:serviceaccounts", "system:serviceaccounts:" + e.ns, "system:authenticated"},
			"resourceAttributes": map[string]any{"namespace": e.ns, "verb": verb, "group": group, "resource": resource, "name": name},
		},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := e.c.dynamic.Resource(gvr).Create(e.ctx, review, metav1.CreateOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
		if allowed == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s %s/%s for %s: still allowed=%v after 30 s", verb, group, resource, serviceAccount, allowed)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
