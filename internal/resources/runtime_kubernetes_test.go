package resources_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// The user stories of rill_runtime on the kubernetes provisioner, through the real Terraform CLI and
// the in-process provider against a real API server (acctest.KubeEnv: a namespace per test on the
// k8stest cluster, checked through client-go; destroy must leave no object behind). What the
// provisioner does to the cluster on its own (objects, sizes, rollout, drift, failing pods, template
// edits, an unreachable server) is proven one level lower, in internal/kubernetes's integration
// tests; these prove what needs Terraform: plans, state, import, diagnostics.
// Elsewhere in this package: another cluster refused (ledger_identity_test.go), adoption of Rill
// admin's objects (rill_migration_test.go).

// Create, read, update (slots up and down, version, hibernate and wake), import and delete of two
// runtimes: five objects each with the expected names, labels, CPU, memory and volume size, rolled
// out when apply returns; updates are in place (same ID); the volume grows but never shrinks, which
// the plan leaves unknown and the apply warns about; a hibernated runtime keeps its volume and Service
// and loses its pod; import by "<provisioner>/<id>" reads back every attribute, environment and
// annotations included (the objects record them); every plan after an apply is
// empty; destroy deletes every object of a running and a hibernated runtime.
func TestAccRuntimeKubernetes_lifecycle(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	cfg := func(slotsOne int, version string, oneHibernated, twoHibernated bool) string {
		return e.ProviderConfig("") +
			acctest.RuntimeBlock("one", slotsOne, fmt.Sprintf("version = %q", version), `environment = "prod"`, `annotations = { organization_name = "acme", project_name = "one" }`,
				fmt.Sprintf("hibernated = %t", oneHibernated)) +
			acctest.RuntimeBlock("two", 2, fmt.Sprintf("hibernated = %t", twoHibernated))
	}
	var idOne, pidTwo string
	sameID := func(s *terraform.State) error {
		if got := s.RootModule().Resources["rill_runtime.one"].Primary.ID; got != idOne {
			return fmt.Errorf("the runtime was replaced: id %s -> %s", idOne, got)
		}
		return nil
	}
	warnings := func() []string {
		var w []string
		for _, c := range e.Rec.Take(acctest.ApplyResourceChange) {
			w = append(w, c.Warnings()...)
		}
		return w
	}
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config: cfg(1, "v0.50.0", false, false),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("rill_runtime.one", tfjsonpath.New("provisioner_name"), knownvalue.StringExact("k8s")),
				statecheck.ExpectKnownValue("rill_runtime.two", tfjsonpath.New("storage_bytes"), knownvalue.Int64Exact(80*acctest.Gib)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.one", acctest.RuntimeWant{Slots: 1, Image: "rilldata/rill:v0.50.0"}),
				e.CheckRuntime("rill_runtime.two", acctest.RuntimeWant{Slots: 2}),
				func(s *terraform.State) error {
					idOne = s.RootModule().Resources["rill_runtime.one"].Primary.ID
					pidTwo, _ = acctest.PidOf(s, "rill_runtime.two")
					// Exactly the ten objects (plus a ReplicaSet and a Pod per runtime).
					objs, err := e.ManagedObjects()
					if err != nil {
						return err
					}
					if len(objs) != 14 {
						return fmt.Errorf("want 14 managed objects (5 + ReplicaSet + Pod per runtime), got %d: %v", len(objs), objs)
					}
					return nil
				},
			),
		},
		resource.TestStep{
			Config: cfg(1, "v0.50.0", false, false),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
		resource.TestStep{
			// one grows to 2 slots on a new version; two hibernates.
			PreConfig: func() { e.Rec.Take(acctest.ApplyResourceChange) },
			Config:    cfg(2, "v0.51.0", false, true),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.one", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("rill_runtime.one", tfjsonpath.New("storage_bytes"), knownvalue.Int64Exact(80*acctest.Gib)),
					plancheck.ExpectResourceAction("rill_runtime.two", plancheck.ResourceActionUpdate),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(sameID,
				e.CheckRuntime("rill_runtime.one", acctest.RuntimeWant{Slots: 2, Image: "rilldata/rill:v0.51.0"}),
				resource.TestCheckResourceAttr("rill_runtime.one", "version", "v0.51.0"),
				// Replicas 0; the claim (same size) and the Service are kept.
				e.CheckRuntime("rill_runtime.two", acctest.RuntimeWant{Slots: 2, Hibernated: true}),
				func(*terraform.State) error {
					if w := warnings(); len(w) > 0 {
						return fmt.Errorf("growing or hibernating warned: %v", w)
					}
					// The pod goes away (apply does not wait for that while hibernating).
					return acctest.Eventually(30*time.Second, func() error {
						pods, err := e.Core.Pods(e.NS).List(e.Ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelInstance + "=" + pidTwo})
						if err != nil {
							return err
						}
						if len(pods.Items) != 0 {
							return fmt.Errorf("%d pod(s) left while hibernated", len(pods.Items))
						}
						return nil
					})
				}),
		},
		resource.TestStep{
			// one shrinks back to 1 slot: CPU and memory follow, the volume stays, with a warning.
			Config: cfg(1, "v0.51.0", false, true),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.one", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("rill_runtime.one", tfjsonpath.New("cpu"), knownvalue.Int64Exact(1)),
					// The provisioner decides whether the volume shrinks (Kubernetes: never).
					plancheck.ExpectUnknownValue("rill_runtime.one", tfjsonpath.New("storage_bytes")),
					plancheck.ExpectResourceAction("rill_runtime.two", plancheck.ResourceActionNoop),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(sameID,
				e.CheckRuntime("rill_runtime.one", acctest.RuntimeWant{Slots: 1, Storage: 80 * acctest.Gib, Image: "rilldata/rill:v0.51.0"}),
				func(*terraform.State) error {
					w := warnings()
					if len(w) != 1 || !acctest.WordsRegexp("volumes are never shrunk").MatchString(w[0]) {
						return fmt.Errorf("want one warning that the volume is kept, got %q", w)
					}
					t.Logf("the apply warned: %s", w[0])
					return nil
				}),
		},
		acctest.ImportVerifyStep("rill_runtime.one"),
		acctest.ImportVerifyStep("rill_runtime.two"),
		resource.TestStep{
			// two wakes up, one hibernates: destroy then meets a running and a hibernated runtime.
			Config: cfg(1, "v0.51.0", true, false),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.one", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("rill_runtime.two", plancheck.ResourceActionUpdate),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.one", acctest.RuntimeWant{Slots: 1, Storage: 80 * acctest.Gib, Image: "rilldata/rill:v0.51.0", Hibernated: true}),
				e.CheckRuntime("rill_runtime.two", acctest.RuntimeWant{Slots: 2}),
			),
		},
		resource.TestStep{
			// An explicit destroy step (its Check runs after the destroy, and is handed the state from
			// before it); the TestCase's CheckDestroy checks again at the end.
			Config:  cfg(1, "v0.51.0", true, false),
			Destroy: true,
			Check: func(*terraform.State) error {
				objs, err := e.ManagedObjects()
				if err != nil {
					return err
				}
				if len(objs) != 0 {
					return fmt.Errorf("objects left right after destroy: %v", objs)
				}
				return nil
			},
		},
	))
}

// A runtime that cannot start (more CPU than the fake node has) fails the apply with the scheduler's
// reason in the diagnostic; a configuration without it then destroys what was created. (That the
// failure comes within seconds rather than at timeout_seconds, and the pod failures that count, are
// proven in internal/kubernetes: TestIntegrationAwaitReadyFailsFastWhenUnschedulable,
// TestIntegrationAwaitReadyFailsFastWithThePodsReason.)
func TestAccRuntimeKubernetes_runtimeThatCannotStartFailsTheApplyWithTheReason(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config:      e.ProviderConfig("") + acctest.RuntimeBlock("huge", 64), // 64 CPU: the node has 32
			ExpectError: regexp.MustCompile(`Runtime did not become ready(.|\n)*cannot\s+be\s+scheduled(.|\n)*Insufficient\s+cpu`),
		},
		resource.TestStep{Config: e.ProviderConfig("")},
	))
}

// A Deployment deleted by hand is planned for re-creation, in place: the other objects, above all
// the volume with the runtime's data, are still there, so the kubernetes provisioner reports the
// missing Deployment as drift and the plan is an update that re-creates the Deployment under the
// same ID, on the same volume. Nothing is left behind, and the next plan is empty.
//
// When every object of the runtime is gone, the runtime is gone: refresh removes it from state with
// a warning, and the plan creates a new one (third step).
func TestAccRuntimeKubernetes_deploymentDeletedByHandIsPlannedForRecreation(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	cfg := e.ProviderConfig("") + acctest.RuntimeBlock("rt", 1)
	var oldID, oldPID string
	var volumeUID types.UID
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.rt", acctest.RuntimeWant{Slots: 1}),
				func(s *terraform.State) error {
					oldID = s.RootModule().Resources["rill_runtime.rt"].Primary.ID
					oldPID, _ = acctest.PidOf(s, "rill_runtime.rt")
					pvc, err := e.Core.PersistentVolumeClaims(e.NS).Get(e.Ctx, "runtime-"+oldPID, metav1.GetOptions{})
					if err != nil {
						return err
					}
					volumeUID = pvc.UID
					return nil
				},
			),
		},
		resource.TestStep{
			PreConfig: func() {
				e.DeleteAndWait(acctest.Deployments, "runtime-"+oldPID)
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
					// The plan says what the update does.
					acctest.ExpectPriorDrift{Addr: "rill_runtime.rt", Substr: "is missing: apply re-creates it under the same name, on the existing volume"},
					plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("drift"), knownvalue.ListExact([]knownvalue.Check{})),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.rt", acctest.RuntimeWant{Slots: 1}),
				resource.TestCheckResourceAttrPtr("rill_runtime.rt", "id", &oldID),
				func(*terraform.State) error {
					pvc, err := e.Core.PersistentVolumeClaims(e.NS).Get(e.Ctx, "runtime-"+oldPID, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if pvc.UID != volumeUID {
						return fmt.Errorf("the volume was replaced (uid %s, was %s): its data is lost", pvc.UID, volumeUID)
					}
					return nil
				},
			),
		},
		resource.TestStep{
			PreConfig: func() {
				e.Rec.Take(acctest.ReadResource)
				// The claim last: it stays while a pod of the Deployment mounts it.
				objs := acctest.ObjectNames(oldPID)
				for _, o := range append(objs[1:], objs[0]) {
					e.DeleteAndWait(o.GVR, o.Name)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionCreate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.rt", acctest.RuntimeWant{Slots: 1}),
				func(s *terraform.State) error {
					if id := s.RootModule().Resources["rill_runtime.rt"].Primary.ID; id == oldID {
						return fmt.Errorf("re-created with the same id %s", id)
					}
					// The refresh said why.
					for _, c := range e.Rec.Take(acctest.ReadResource) {
						for _, w := range c.Warnings() {
							if strings.HasPrefix(w, "Runtime no longer exists: ") && strings.Contains(w, oldID) {
								t.Logf("refresh warned: %s", w)
								return nil
							}
						}
					}
					return errors.New(`no refresh warned "Runtime no longer exists"`)
				},
			),
		},
	))
}

// A platform engineer edits a container port of a runtime's Deployment by hand (kubectl patch): the
// plan is an in-place update whose drift names the field, the apply succeeds and leaves the
// Deployment's ports as the template renders them, and the next plan is empty. Before, the plan was
// empty, and the apply of any later change failed with the API server's "Duplicate value".
func TestAccRuntimeKubernetes_containerPortEditedByHandIsRepairedByTheApply(t *testing.T) {
	h := newHandEdits(t)
	resource.Test(t, h.e.TestCase(
		h.created(),
		h.repaired("kubectl-patch", `[{"op": "replace", "path": "/spec/template/spec/containers/0/ports/0/containerPort", "value": 8081}]`,
			"spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080", func(dep *appsv1.Deployment) error {
				var ports []string
				for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
					ports = append(ports, fmt.Sprintf("%s %d", p.Name, p.ContainerPort))
				}
				if got := strings.Join(ports, ", "); got != "http 8080, grpc 9090" {
					return fmt.Errorf("container ports after the apply: %s, want http 8080, grpc 9090", got)
				}
				return nil
			}),
	))
}

// handEdits makes the steps of a test of edits by hand to the Deployment of one runtime, rt.
type handEdits struct {
	t   *testing.T
	e   *acctest.KubeEnv
	cfg string
	pid string // rt's, once created
}

func newHandEdits(t *testing.T) *handEdits {
	e := acctest.NewKubeEnv(t)
	return &handEdits{t: t, e: e, cfg: e.ProviderConfig("") + acctest.RuntimeBlock("rt", 1)}
}

// created creates rt and records its provision ID.
func (h *handEdits) created() resource.TestStep {
	return resource.TestStep{
		Config: h.cfg,
		Check: func(s *terraform.State) error {
			var err error
			h.pid, err = acctest.PidOf(s, "rill_runtime.rt")
			return err
		},
	}
}

// repaired edits rt's Deployment by hand (a JSON patch by the field manager of a kubectl command,
// whose update owns what it changed) and applies: the plan is an in-place update whose drift names
// the edit, the Deployment after the apply passes check, and the plan after it is empty.
func (h *handEdits) repaired(manager, patch, drift string, check func(dep *appsv1.Deployment) error) resource.TestStep {
	e := h.e
	return resource.TestStep{
		PreConfig: func() {
			if _, err := e.Apps.Deployments(e.NS).Patch(e.Ctx, "runtime-"+h.pid, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager}); err != nil {
				h.t.Fatal(err)
			}
		},
		Config: h.cfg,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
				acctest.ExpectPriorDrift{Addr: "rill_runtime.rt", Substr: drift},
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
		Check: func(*terraform.State) error {
			dep, err := e.Apps.Deployments(e.NS).Get(e.Ctx, "runtime-"+h.pid, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return check(dep)
		},
	}
}

// terraform plan writes nothing to the cluster, even when it finds drift to repair or checks a new
// runtime: the API server's audit log has no create, update, patch or delete of the user the provider
// runs as while the plan runs, and it does have the provider's reads (so the log is not silently
// empty).
func TestAccRuntimeKubernetes_planWritesNothing(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	if e.Cluster.AuditLog == "" {
		ci.Skip(t, "the cluster's audit log is unknown: the local control plane has one; for %s, set %s", k8stest.EnvKubeconfig, k8stest.EnvAuditLog)
	}
	cfg := e.ProviderConfig("") + acctest.RuntimeBlock("a", 1) + acctest.RuntimeBlock("b", 1)
	var pidB string
	var from time.Time
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.a", acctest.RuntimeWant{Slots: 1}),
				e.CheckRuntime("rill_runtime.b", acctest.RuntimeWant{Slots: 1}),
				func(s *terraform.State) error { pidB, _ = acctest.PidOf(s, "rill_runtime.b"); return nil },
			),
		},
		resource.TestStep{
			// b's Service deleted by hand is drift: the plan shows an update, and must not repair it.
			PreConfig: func() {
				e.DeleteAndWait(acctest.Services, "runtime-"+pidB)
				from = time.Now()
			},
			// A new runtime c in the same plan: its plan-time check (the kubeconfig, the cluster's
			// identity) reads only.
			Config:             cfg + acctest.RuntimeBlock("c", 1),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.a", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("rill_runtime.b", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("rill_runtime.c", plancheck.ResourceActionCreate),
				},
			},
			PostApplyFunc: func() {
				to := time.Now()
				events := e.AuditEvents(from, to)
				var writes []string
				reads := 0
				for _, ev := range events {
					switch ev.Verb {
					case "create", "update", "patch", "delete", "deletecollection":
						writes = append(writes, ev.String())
					case "get", "list", "watch":
						if strings.HasPrefix(ev.UserAgent, "terraform-provider-rill") {
							reads++
						}
					}
				}
				t.Logf("plan window %s: %d requests of %s, %d reads by the provider, %d writes",
					to.Sub(from).Round(time.Millisecond), len(events), k8stest.AuditUser, reads, len(writes))
				if len(writes) > 0 {
					t.Errorf("terraform plan wrote to the cluster:\n%s", strings.Join(writes, "\n"))
				}
				if reads == 0 {
					t.Errorf("the audit log shows no read by the provider during the plan: is the log working? (%d events)", len(events))
				}
				if _, err := e.Core.Services(e.NS).Get(e.Ctx, "runtime-"+pidB, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("the Service deleted by hand is back after a plan (err %v)", err)
				}
			},
		},
		resource.TestStep{
			// The apply repairs it, and the audit log does show the provider's writes then (server-side
			// apply is a patch), so the empty list above is not the log's blind spot.
			PreConfig: func() { from = time.Now() },
			Config:    cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.b", plancheck.ResourceActionUpdate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.CheckRuntime("rill_runtime.b", acctest.RuntimeWant{Slots: 1}),
				func(*terraform.State) error {
					patches := 0
					for _, ev := range e.AuditEvents(from, time.Now()) {
						if ev.Verb == "patch" && strings.HasPrefix(ev.UserAgent, "terraform-provider-rill") {
							patches++
						}
					}
					if patches == 0 {
						return errors.New("the audit log shows no patch by the provider during the apply")
					}
					return nil
				},
			),
		},
	))
}

// A Provision that fails part-way leaves nothing behind: with a ResourceQuota that allows no Service,
// the volume claim and the Deployment are applied and the Service is refused; Create then deprovisions what
// was applied, the runtime is not in state, and no object of the provisioner is left in the namespace.
// So too for a named runtime, whose create claimed its ID (internal/kubernetes/claim.go) and so
// undoes what it made: it created it.
func TestAccRuntimeKubernetes_provisionFailingPartWayLeavesNothing(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	e.ForbidServices()
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config: e.ProviderConfig("") + acctest.RuntimeBlock("rt", 1) + acctest.RuntimeBlock("named", 1, `name = "partway"`),
			// The error names the Service, which is applied after the claim and the Deployment.
			ExpectError: regexp.MustCompile(`Provisioning the runtime failed(.|\n)*applying\s+Service(.|\n)*forbidden`),
		},
		resource.TestStep{
			Config: e.ProviderConfig(""),
			Check: func(s *terraform.State) error {
				if len(s.RootModule().Resources) != 0 {
					t.Errorf("the failed runtime is in state: %v", s.RootModule().Resources)
				}
				return e.CheckNoObjectLeft()(s)
			},
		},
	))
}

// A failed update says whether it changed anything, as the troubleshooting guide's "Updating the
// runtime failed" tells the user: "(partly updated: ...)" when the provisioner applied some objects
// before one was refused (here the Service, deleted by hand and then forbidden by a quota, after the
// volume and the Deployment were resized), "(unchanged)" when it refused before any write (here a
// volume claim being deleted, which a finalizer holds up). Once the cause is gone, the next apply
// repairs the runtime and destroy leaves nothing.
func TestAccRuntimeKubernetes_failedUpdateSaysWhetherItChangedAnything(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	var name string
	var lift func()
	const finalizer = "rill.test/hold"
	holdPatch := func(finalizers string) []byte { return []byte(`{"metadata":{"finalizers":` + finalizers + `}}`) }
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config: e.ProviderConfig("") + acctest.RuntimeBlock("rt", 1),
			Check: func(s *terraform.State) error {
				pid, err := acctest.PidOf(s, "rill_runtime.rt")
				name = "runtime-" + pid
				return err
			},
		},
		resource.TestStep{
			PreConfig: func() {
				e.DeleteAndWait(acctest.Services, name)
				lift = e.ForbidServices()
			},
			Config:      e.ProviderConfig("") + acctest.RuntimeBlock("rt", 2),
			ExpectError: regexp.MustCompile(`Updating the runtime failed(.|\n)*\(partly\s+updated:\s+some\s+of\s+its\s+objects\s+were\s+applied\s+before\s+the\s+error;\s+the\s+next\s+plan\s+shows\s+an\s+update(.|\n)*applying\s+Service`),
		},
		resource.TestStep{
			PreConfig: func() {
				lift()
				pvcs := e.Core.PersistentVolumeClaims(e.NS)
				if _, err := pvcs.Patch(e.Ctx, name, types.MergePatchType, holdPatch(`["`+finalizer+`"]`), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := pvcs.Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			Config:      e.ProviderConfig("") + acctest.RuntimeBlock("rt", 2),
			ExpectError: regexp.MustCompile(`Updating the runtime failed(.|\n)*\(unchanged\)(.|\n)*is\s+being\s+deleted\s+\(finalizers:[^)]*` + regexp.QuoteMeta(finalizer)),
		},
		resource.TestStep{
			PreConfig: func() {
				if _, err := e.Core.PersistentVolumeClaims(e.NS).Patch(e.Ctx, name, types.MergePatchType, holdPatch("null"), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := acctest.Eventually(30*time.Second, func() error {
					if _, err := e.Core.PersistentVolumeClaims(e.NS).Get(e.Ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						return fmt.Errorf("the claim is still there (%v)", err)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			},
			Config: e.ProviderConfig("") + acctest.RuntimeBlock("rt", 2),
			Check:  e.CheckRuntime("rill_runtime.rt", acctest.RuntimeWant{Slots: 2}),
		},
	))
}

// An import by the ID as the objects' names spell it (runtime-<id without dashes>, what kubectl shows
// of a runtime Rill's admin service made) or in upper case keeps the runtime's ID as everything else
// knows it (Rill's admin, rill_allocations' import_id): lower case, with dashes. The state held the
// typed string, so the recovery guide, which compares states with rill_allocations, took the runtime
// for an orphan and imported it a second time, for its step 3 to destroy.
func TestAccRuntimeKubernetes_importByTheObjectsSpellingKeepsTheRuntimesID(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	resource.Test(t, e.TestCase(
		resource.TestStep{Config: e.ProviderConfig("") + acctest.RuntimeBlock("rt", 1)},
		resource.TestStep{
			ResourceName:      "rill_runtime.rt",
			ImportState:       true,
			ImportStateVerify: true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				id := s.RootModule().Resources["rill_runtime.rt"].Primary.ID
				return "k8s/" + strings.ToUpper(strings.ReplaceAll(id, "-", "")), nil
			},
		},
	))
}

// Two kubernetes provisioners of one set in two namespaces: importing the runtime of one through the
// other is refused naming its provisioner and the import ID to use. The other one sees nothing in its
// namespace, and the import said "not found" of a runtime the set holds.
func TestAccRuntimeKubernetes_importThroughAnotherNamespacesProvisionerNamesItsOwner(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	other := e.InNewNamespace()
	entry := func(name string, env *acctest.KubeEnv) string {
		return fmt.Sprintf(`%q: {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "namespace": %q, "kubeconfig_path": %q, "ping_path": ""}}`,
			name, env.NS, env.Cluster.Kubeconfig)
	}
	config := acctest.ProviderBlock(e.Ledger, "k8s", entry("k8s", e), entry("other", other)) + acctest.RuntimeBlock("rt", 1)
	resource.Test(t, e.TestCase(
		resource.TestStep{Config: config},
		resource.TestStep{
			Config:       config + acctest.RuntimeBlock("mine", 1, `provisioner_name = "other"`),
			ResourceName: "rill_runtime.mine",
			ImportState:  true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				return "other/" + s.RootModule().Resources["rill_runtime.rt"].Primary.ID, nil
			},
			ExpectError: regexp.MustCompile(`(?s)Runtime belongs to another provisioner.*allocated\s+by\s+provisioner\s+"k8s",\s+not\s+"other".*import\s+it\s+as\s+"k8s/`),
		},
	))
}

// A Kubernetes runtime without `version` runs the provider's rill_version as its image tag, and
// follows it: state keeps `version` null, and a change of rill_version is planned as an update (the
// refresh reports the tag that runs as `version`, planned back to null) that rolls the new tag out.
func TestAccRuntimeKubernetes_unsetVersionFollowsRillVersion(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	cfg := func(rillVersion string) string {
		return strings.Replace(e.ProviderConfig(""), `provider "rill" {`, `provider "rill" {`+"\n  rill_version = \""+rillVersion+"\"", 1) +
			acctest.RuntimeBlock("a", 1)
	}
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config:            cfg("v0.60.0"),
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("rill_runtime.a", tfjsonpath.New("version"), knownvalue.Null())},
			Check:             e.CheckRuntime("rill_runtime.a", acctest.RuntimeWant{Slots: 1, Image: "rilldata/rill:v0.60.0"}),
		},
		resource.TestStep{
			Config: cfg("v0.61.0"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.a", plancheck.ResourceActionUpdate)},
			},
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("rill_runtime.a", tfjsonpath.New("version"), knownvalue.Null())},
			Check:             e.CheckRuntime("rill_runtime.a", acctest.RuntimeWant{Slots: 1, Image: "rilldata/rill:v0.61.0"}),
		},
		resource.TestStep{
			Config:           cfg("v0.61.0"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	))
}
