package kubernetes

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
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
	// Named, so that its create claims the runtime (claim.go): a plain create and a patch of the
	// managed fields, as the ServiceAccount.
	named := func(o *provisioner.ResourceOptions) *provisioner.ResourceOptions { o.Name = "rbac"; return o }
	e.provision(p, r, named(args(1, "v1", false)))
	if err := p.AwaitReady(e.ctx, r); err != nil {
		t.Fatalf("AwaitReady as the ServiceAccount: %v", err)
	}
	if ks, err := e.core.Namespaces().Get(e.ctx, identityNamespace, metav1.GetOptions{}); err != nil || r.State[StateClusterID] != string(ks.UID) {
		t.Fatalf("as the ServiceAccount, the runtime recorded cluster %v; want the kube-system UID (%v)", r.State[StateClusterID], err)
	}
	if err := p.Check(e.ctx); err != nil {
		t.Fatalf("Check as the ServiceAccount: %v", err)
	}
	checked, err := p.CheckResource(e.ctx, r, named(args(1, "v1", false)))
	if err != nil {
		t.Fatalf("CheckResource as the ServiceAccount: %v", err)
	}
	if d := checked.State[StateDrift].([]string); len(d) != 0 {
		t.Fatalf("drift %q", d)
	}
	e.provision(p, r, named(args(2, "v2", false))) // an update: the volume claim's GET and the applies again, no claim of the ID (claim.go)
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

// applyExampleRBAC creates (or replaces) the objects of examples/kubernetes/rbac.yaml for the test's
// namespace (k8stest.ApplyExampleRBAC); keepVerb, when set, filters the Role's verbs.
func (e *env) applyExampleRBAC(keepVerb func(string) bool) {
	e.t.Helper()
	k8stest.ApplyExampleRBAC(e.t, e.ctx, e.c.dynamic, e.ns, keepVerb)
}

// provisionerAs returns a provisioner for the test's namespace whose kubeconfig holds a fresh token
// of the ServiceAccount (so RBAC changes apply to it at once: a new provisioner has new clients).
func (e *env) provisionerAs(serviceAccount string) *Provisioner {
	e.t.Helper()
	return e.provisionerWith(k8stest.ServiceAccountKubeconfig(e.t, e.ctx, testKubeconfig, e.ns, serviceAccount))
}

// provisionerWith is a provisioner for the test's namespace with the credentials of another kubeconfig.
func (e *env) provisionerWith(path string) *Provisioner {
	e.t.Helper()
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
	k8stest.WaitUntilAllowed(e.t, e.ctx, e.c.dynamic, e.ns, serviceAccount, verb, group, resource, name, want)
}

// Credentials that may read but not write in the namespace (the Role without create and patch, as
// when the spec's namespace is not the one the Role is in): a create is refused at its first apply
// and reports that it created nothing and returns no resource, so the Terraform layer has nothing to
// undo and keeps nothing in state; before, it reported a creation, whose undo was refused as well, and
// the runtime stayed in state, tainted, with "Undoing what it may have made failed too". An update is
// refused the same way and returns no resource either: the update's error says "unchanged".
func TestIntegrationProvisionRefusedBeforeAnyWriteReportsNothingMade(t *testing.T) {
	e := newEnv(t, "")
	e.applyExampleRBAC(func(verb string) bool { return verb != "create" && verb != "patch" })
	e.waitUntilAllowedOn("rill-provisioner", "get", "", "namespaces", identityNamespace, true)
	e.waitUntilAllowed("rill-provisioner", "patch", "", "persistentvolumeclaims", false)
	p := e.provisionerAs("rill-provisioner")

	out, created, err := p.ProvisionReportingCreation(e.ctx, e.newRuntime(), args(1, "v1", false))
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("create as a ServiceAccount that may not write: %v, want a forbidden error", err)
	}
	checkRBACHint(t, "create", err)
	// A named runtime's create claims its ID with a plain create of its first object (claim.go).
	namedArgs := args(1, "v1", false)
	namedArgs.Name = "refused"
	if _, _, err := p.ProvisionReportingCreation(e.ctx, e.newRuntime(), namedArgs); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("create of a named runtime as a ServiceAccount that may not write: %v, want a forbidden error", err)
	} else {
		checkRBACHint(t, "create of a named runtime", err)
	}
	if created || out != nil {
		t.Errorf("a create refused before any write reported created=%t and %v: it made nothing", created, out)
	}

	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	out, err = p.Provision(e.ctx, r, args(2, "v1", false))
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("update as a ServiceAccount that may not write: %v, want a forbidden error", err)
	}
	checkRBACHint(t, "update that grows the volume", err)
	if out != nil {
		t.Errorf("an update refused before any write returned %v: it changed nothing", out)
	}
}

// checkRBACHint fails unless err, a refusal by RBAC, points at the example RBAC and not at the
// StorageClass: before, every 403 on the volume claim said "growing a volume needs a StorageClass with
// allowVolumeExpansion: true", also on a create.
func checkRBACHint(t *testing.T, what string, err error) {
	t.Helper()
	if !strings.Contains(err.Error(), "examples/kubernetes/rbac.yaml") || strings.Contains(err.Error(), "allowVolumeExpansion") {
		t.Errorf("%s refused by RBAC: %v; want the hint at examples/kubernetes/rbac.yaml and none about allowVolumeExpansion", what, err)
	}
}
