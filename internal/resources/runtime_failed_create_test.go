package resources_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// A rill_runtime create that fails half-way, and whose undo fails too, stays tracked: the provider
// runs as a ServiceAccount with the Role of examples/kubernetes/rbac.yaml less "delete", and a
// ResourceQuota allows no Service. Provision applies the volume claim and the Deployment, then the API server
// refuses the Service (quota); the undo's deletes are refused (403). The runtime is then in state,
// tainted, with its ID, and the error gives both failures and what happens next. With the causes
// fixed (the quota removed, delete granted), one plain apply replaces it: the failed create's claim
// and Deployment are deleted and exactly one healthy runtime's objects are left. The TestCase's
// destroy then leaves no object. (A failed create whose undo succeeds:
// TestAccRuntimeKubernetes_provisionFailingPartWayLeavesNothing.)
func TestAccRuntimeKubernetes_failedCreateWhoseUndoFailsIsKeptTainted(t *testing.T) {
	e, cfg, liftQuota, failedCreate := failingCreateWhoseUndoFails(t)
	const sa = "rill-provisioner"

	var oldID, oldPID string
	resource.Test(t, e.TestCase(
		failedCreate,
		resource.TestStep{
			PreConfig: func() {
				// The diagnostic names the runtime; what the failed create made is still there.
				oldID = idInCreateError(t, e.Rec.Take(acctest.ApplyResourceChange))
				oldPID = strings.ReplaceAll(oldID, "-", "")
				objs, err := e.ManagedObjects()
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"deployments/runtime-" + oldPID, "persistentvolumeclaims/runtime-" + oldPID} {
					if !slices.Contains(objs, want) {
						t.Fatalf("the failed create's %s is gone, or never existed: the undo did not fail as meant (objects: %v)", want, objs)
					}
				}
				// The causes fixed: the quota removed, delete granted.
				liftQuota()
				k8stest.ApplyExampleRBAC(t, e.Ctx, e.Dyn, e.NS, nil)
				k8stest.WaitUntilAllowed(t, e.Ctx, e.Dyn, e.NS, sa, "delete", "apps", "deployments", "", true)
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					expectTaintedWithID{addr: "rill_runtime.rt", id: &oldID},
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionDestroyBeforeCreate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.rt", acctest.RuntimeWant{Slots: 1}),
				func(s *terraform.State) error {
					pid, err := acctest.PidOf(s, "rill_runtime.rt")
					if err != nil {
						return err
					}
					if pid == oldPID {
						return fmt.Errorf("the runtime was not replaced: still %s", oldID)
					}
					// Exactly the new runtime's objects: its five, a ReplicaSet and a Pod.
					objs, err := e.ManagedObjects()
					if err != nil {
						return err
					}
					if len(objs) != 7 {
						return fmt.Errorf("want the 7 managed objects of runtime %s alone, got %d: %v", pid, len(objs), objs)
					}
					for _, o := range objs {
						if !strings.HasSuffix(o, pid) && !strings.Contains(o, pid+"-") {
							return fmt.Errorf("%s is not runtime %s's: the failed create's objects were left (all: %v)", o, pid, objs)
						}
					}
					return nil
				},
			),
		},
	))
}

// A runtime kept in state after a failed create whose undo failed too records where its objects are
// (the namespace and cluster the failed Provision returned), so that `terraform destroy` deletes them
// there even after the provisioner's spec moved to another namespace: a delete in the spec's new
// namespace would find nothing, succeed, and leave them.
func TestAccRuntimeKubernetes_failedCreateKeptTaintedIsDestroyedWhereItsObjectsAre(t *testing.T) {
	e, _, _, failedCreate := failingCreateWhoseUndoFails(t)
	moved := e.InNewNamespace()
	movedCfg := moved.ProviderConfig("") + acctest.RuntimeBlock("rt", 1)
	tc := e.TestCase(
		failedCreate,
		resource.TestStep{
			PreConfig: func() {
				if objs, err := e.ManagedObjects(); err != nil || len(objs) == 0 {
					t.Fatalf("the failed create left no object to destroy (%v): the undo did not fail as meant", err)
				}
			},
			// The spec now names another namespace, and the cluster's full credentials.
			Config:  movedCfg,
			Destroy: true,
			Check: func(*terraform.State) error {
				if left, err := e.ManagedObjects(); err != nil || len(left) > 0 {
					return fmt.Errorf("destroy left the failed create's objects in namespace %s (%v): %v", e.NS, err, left)
				}
				return nil
			},
		},
	)
	tc.CheckDestroy = resource.ComposeAggregateTestCheckFunc(e.CheckNoObjectLeft(), moved.CheckNoObjectLeft())
	resource.Test(t, tc)
}

// failingCreateWhoseUndoFails prepares a create that fails half-way and whose undo fails too: the
// provider runs as a ServiceAccount with the Role of examples/kubernetes/rbac.yaml less "delete", and
// a ResourceQuota allows no Service. It returns the environment, that provider's configuration with
// one runtime "rt", a func that lifts the quota, and the step that applies it and checks the error.
func failingCreateWhoseUndoFails(t *testing.T) (*acctest.KubeEnv, string, func(), resource.TestStep) {
	e := acctest.NewKubeEnv(t)
	liftQuota := e.ForbidServices()
	const sa = "rill-provisioner"
	k8stest.ApplyExampleRBAC(t, e.Ctx, e.Dyn, e.NS, func(verb string) bool { return verb != "delete" })
	k8stest.WaitUntilAllowed(t, e.Ctx, e.Dyn, e.NS, sa, "patch", "apps", "deployments", "", true)
	if k8stest.Allowed(t, e.Ctx, e.Dyn, e.NS, sa, "delete", "apps", "deployments", "") {
		ci.Skip(t, "the cluster does not authorize by RBAC (the ServiceAccount may delete without a Role that allows it): the undo cannot be made to fail")
	}
	cfg := e.ProviderConfigAs(k8stest.ServiceAccountKubeconfig(t, e.Ctx, e.Cluster.Kubeconfig, e.NS, sa), "") + acctest.RuntimeBlock("rt", 1)
	return e, cfg, liftQuota, resource.TestStep{
		Config: cfg,
		// Terraform wraps the detail, hence \s+ between words.
		ExpectError: regexp.MustCompile(`Provisioning the runtime failed(.|\n)*applying\s+Service(.|\n)*exceeded\s+quota` +
			`(.|\n)*Undoing\s+what\s+it\s+may\s+have\s+made\s+failed\s+too,\s+so\s+rill_runtime\s+[0-9a-f-]{36}\s+is\s+kept\s+in\s+state\s+as\s+tainted` +
			// What to do: the next apply's destroy would fail the same way.
			`\.\s+Fix\s+what\s+the\s+undo's\s+error\s+names,\s+then\s+the\s+next\s+apply\s+destroys\s+it\s+and\s+creates\s+it\s+again` +
			`(.|\n)*cannot\s+delete\s+resource(.|\n)*the\s+credentials\s+lack\s+this\s+verb`),
	}
}

// A create that cannot reach its ledger fails and leaves nothing in state: it made nothing, so there
// is nothing to undo, and nothing to keep tainted (which the next apply's destroy would meet the same
// unreachable ledger with). Once the ledger can be reached, a plain apply creates the runtime.
func TestAccRuntime_createAgainstAnUnreachableLedgerLeavesNothingInState(t *testing.T) {
	acctest.RequireAcc(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}}`
	body := "resource \"rill_runtime\" \"rt\" {\n  slots = 1\n}\n"
	unreachable := fmt.Sprintf("postgres://rill@127.0.0.1:%d/ledger?sslmode=disable&connect_timeout=5", freeport.For(t))
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", acctest.CLIHeader(fmt.Sprintf("%q", unreachable), set)+body)
	out, err := w.Run("apply", "-auto-approve")
	if err == nil || !acctest.WordsRegexp("Provisioning the runtime failed").MatchString(out) || !strings.Contains(out, "127.0.0.1") {
		t.Fatalf("apply against an unreachable ledger: want it to fail naming the ledger; err %v\n%s", err, acctest.Tail(out))
	}
	if strings.Contains(out, "Undoing") || strings.Contains(out, "tainted") {
		t.Errorf("a create that made nothing tried to undo it, or kept it tainted:\n%s", acctest.Tail(out))
	}
	if left := w.Must("state", "list"); strings.TrimSpace(left) != "" {
		t.Fatalf("the failed create left in state: %s", left)
	}

	w.Write("main.tf", acctest.CLIHeader(fmt.Sprintf("%q", "sqlite://"+filepath.Join(t.TempDir(), "ledger.db")), set)+body)
	w.Must("apply", "-auto-approve")
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		t.Errorf("the plan after the apply is not empty (%v):\n%s", err, acctest.Tail(out))
	}
	w.Must("destroy", "-auto-approve")
}

// idInCreateError is the runtime ID the failed create's error names as kept in state.
func idInCreateError(t *testing.T, calls []acctest.Call) string {
	t.Helper()
	re := regexp.MustCompile(`rill_runtime ([0-9a-f-]{36}) is kept in state as tainted`)
	for _, c := range calls {
		for _, d := range c.Diags {
			if d.Severity != tfprotov6.DiagnosticSeverityError {
				continue
			}
			if m := re.FindStringSubmatch(d.Detail); m != nil {
				t.Logf("the failed create said: %s: %s", d.Summary, d.Detail)
				return m[1]
			}
		}
	}
	t.Fatalf("no error of the apply says which runtime is kept in state as tainted: %+v", calls)
	return ""
}

// expectTaintedWithID is a plan check: the resource's prior state is tainted and holds the ID.
type expectTaintedWithID struct {
	addr string
	id   *string
}

func (c expectTaintedWithID) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil {
		resp.Error = errors.New("the plan has no prior state")
		return
	}
	for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		if id, _ := r.AttributeValues["id"].(string); !r.Tainted || id != *c.id || r.AttributeValues["provisioner_name"] != "k8s" {
			resp.Error = fmt.Errorf("%s in state: tainted %t, id %q, provisioner %v; want tainted, id %q, provisioner k8s", c.addr, r.Tainted, id, r.AttributeValues["provisioner_name"], *c.id)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.addr)
}

// A create whose credentials may not touch the spec's namespace (the ServiceAccount of
// examples/kubernetes/rbac.yaml, whose Role is in another namespace: the spec's namespace was changed
// and the Role not applied there) fails at its first request and leaves nothing in state: it made
// nothing, so it neither tries an undo that is refused the same way nor keeps the runtime tainted
// (found walking the troubleshooting guide; it said "Undoing what it may have made failed too").
func TestAccRuntimeKubernetes_createRefusedBeforeAnyWriteLeavesNothingInState(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	const sa = "rill-provisioner"
	k8stest.ApplyExampleRBAC(t, e.Ctx, e.Dyn, e.NS, nil)
	k8stest.WaitUntilAllowed(t, e.Ctx, e.Dyn, e.NS, sa, "patch", "apps", "deployments", "", true)
	elsewhere := e.InNewNamespace()
	if k8stest.Allowed(t, e.Ctx, e.Dyn, elsewhere.NS, sa, "get", "apps", "deployments", "") {
		ci.Skip(t, "the cluster does not authorize by RBAC (the ServiceAccount may read without a Role that allows it)")
	}
	provider := elsewhere.ProviderConfigAs(k8stest.ServiceAccountKubeconfig(t, e.Ctx, e.Cluster.Kubeconfig, e.NS, sa), "")
	resource.Test(t, elsewhere.TestCase(
		resource.TestStep{
			Config:      provider + acctest.RuntimeBlock("rt", 1),
			ExpectError: regexp.MustCompile(`Provisioning the runtime failed(.|\n)*` + elsewhere.NS + `(.|\n)*forbidden`),
		},
		resource.TestStep{
			Config: provider,
			Check: func(s *terraform.State) error {
				if len(s.RootModule().Resources) != 0 {
					return fmt.Errorf("the create that made nothing is in state: %v", s.RootModule().Resources)
				}
				return nil
			},
		},
	))
}
