package resources_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// Acceptance tests of rill_runtime on the kubernetes provisioner: the real Terraform CLI drives the
// in-process provider, which talks to a real API server (k8stest: RILL_TEST_KUBECONFIG's, else a
// local control plane started once for this test binary, on first use, and stopped at exit). kwok
// runs the pods: they become Running and Ready, but no container runs, so the HTTP probe is off
// (ping_path ""). Each test works in a namespace of its own, deleted when it ends, and checks
// through client-go that destroy leaves no object behind.

const gib = int64(1) << 30

var (
	gvrDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrReplicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	gvrPods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	gvrServices    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrPVCs        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	gvrIngresses   = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
)

// kubeEnv is one test's namespace on the shared cluster, the provider configuration that
// provisions into it, clients to look at it, and a recorder of the provider's diagnostics.
type kubeEnv struct {
	t       *testing.T
	cluster *k8stest.Cluster
	ns      string
	ledger  string
	ctx     context.Context
	apps    appsv1client.AppsV1Interface
	core    corev1client.CoreV1Interface
	dyn     dynamic.Interface
	rec     *rpcRecorder
	started time.Time
}

func newKubeEnv(t *testing.T) *kubeEnv {
	t.Helper()
	requireAcc(t)
	c := k8stest.Get(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// The test's own requests are told apart from the provider's (user agent
	// "terraform-provider-rill") in the audit log.
	cfg.UserAgent = "rill-acceptance-test"
	cfg.QPS, cfg.Burst = 50, 100
	e := &kubeEnv{t: t, cluster: c, ledger: sqliteLedger(t), rec: &rpcRecorder{}, started: time.Now()}
	var cancel context.CancelFunc
	e.ctx, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	if e.apps, err = appsv1client.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.core, err = corev1client.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	e.ns = "rill-acc-" + randomHex(4)
	if _, err := e.core.Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", e.ns, err)
	}
	t.Cleanup(func() {
		_ = e.core.Namespaces().Delete(context.Background(), e.ns, metav1.DeleteOptions{})
		t.Logf("%s took %s (without starting the cluster)", t.Name(), time.Since(e.started).Round(100*time.Millisecond))
	})
	return e
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// providerConfig renders the provider block: one kubernetes provisioner "k8s" (the default, as the
// only one) for the test's namespace, with extraSpec appended to its spec object.
func (e *kubeEnv) providerConfig(extraSpec string) string {
	return e.providerConfigWith(e.cluster.Kubeconfig, extraSpec)
}

func (e *kubeEnv) providerConfigWith(kubeconfig, extraSpec string) string {
	spec := fmt.Sprintf(`{"host": "http://*.rill.test", "namespace": %q, "kubeconfig_path": %q, "timeout_seconds": 120, "ping_path": ""%s}`,
		e.ns, kubeconfig, extraSpec)
	return providerBlock(e.ledger, "", fmt.Sprintf(`"k8s": {"type": "kubernetes", "spec": %s}`, spec))
}

// runtimeBlock renders a rill_runtime with the given slots and extra attribute lines.
func runtimeBlock(name string, slots int, attrs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource \"rill_runtime\" %q {\n  slots = %d\n", name, slots)
	for _, a := range attrs {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	b.WriteString("}\n")
	return b.String()
}

// testCase is a TestCase on the recording provider whose destroy must leave no object.
func (e *kubeEnv) testCase(steps ...resource.TestStep) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: e.rec.factories(),
		CheckDestroy:             e.checkNoObjectLeft(),
		Steps:                    steps,
	}
}

// pidOf returns the provision ID (the resource ID without dashes) of a runtime in state.
func pidOf(s *terraform.State, name string) (string, error) {
	rs, ok := s.RootModule().Resources[name]
	if !ok {
		return "", fmt.Errorf("%s is not in state", name)
	}
	return strings.ToLower(strings.ReplaceAll(rs.Primary.ID, "-", "")), nil
}

// runtimeWant is what a runtime's objects must look like.
type runtimeWant struct {
	slots      int
	storage    int64  // the claim's size; 0 means 40 GiB per slot
	image      string // "" means rilldata/rill:latest
	hibernated bool
}

// objectNames returns the five objects of a runtime.
func objectNames(pid string) []struct {
	gvr  schema.GroupVersionResource
	name string
} {
	return []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{gvrPVCs, "runtime-" + pid},
		{gvrDeployments, "runtime-" + pid},
		{gvrServices, "runtime-" + pid},
		{gvrIngresses, "http-runtime-" + pid},
		{gvrIngresses, "grpc-runtime-" + pid},
	}
}

// checkRuntime checks, through client-go, the five objects of a runtime in state (names, labels,
// annotations), the Deployment's image, resources, replicas and rollout, the claim's size, and
// that the state's sizes agree.
func (e *kubeEnv) checkRuntime(name string, want runtimeWant) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		pid, err := pidOf(s, name)
		if err != nil {
			return err
		}
		if want.storage == 0 {
			want.storage = int64(want.slots) * 40 * gib
		}
		if want.image == "" {
			want.image = "rilldata/rill:latest"
		}
		for _, o := range objectNames(pid) {
			obj, err := e.dyn.Resource(o.gvr).Namespace(e.ns).Get(e.ctx, o.name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %s %s/%s: %w", name, o.gvr.Resource, e.ns, o.name, err)
			}
			if l := obj.GetLabels(); l[kubernetes.LabelManagedBy] != kubernetes.ManagedByValue || l[kubernetes.LabelInstance] != pid {
				return fmt.Errorf("%s: %s %s labels %v", name, o.gvr.Resource, o.name, l)
			}
			a := obj.GetAnnotations()
			if a[kubernetes.AnnotationSlots] != fmt.Sprint(want.slots) || a[kubernetes.AnnotationHibernated] != fmt.Sprint(want.hibernated) {
				return fmt.Errorf("%s: %s %s annotations %v", name, o.gvr.Resource, o.name, a)
			}
		}
		dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			return fmt.Errorf("%s: deployment without containers", name)
		}
		ct := dep.Spec.Template.Spec.Containers[0]
		if ct.Image != want.image {
			return fmt.Errorf("%s: image %s, want %s", name, ct.Image, want.image)
		}
		cpu := *k8sresource.NewQuantity(int64(want.slots), k8sresource.DecimalSI)
		mem := *k8sresource.NewQuantity(int64(4*want.slots)*gib, k8sresource.BinarySI)
		for kind, l := range map[string]corev1.ResourceList{"requests": ct.Resources.Requests, "limits": ct.Resources.Limits} {
			c, m := l[corev1.ResourceCPU], l[corev1.ResourceMemory]
			if c.Cmp(cpu) != 0 || m.Cmp(mem) != 0 {
				return fmt.Errorf("%s: %d slot(s): %s cpu %s memory %s, want %s and %s", name, want.slots, kind, c.String(), m.String(), cpu.String(), mem.String())
			}
		}
		replicas := int32(1)
		if want.hibernated {
			replicas = 0
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != replicas {
			return fmt.Errorf("%s: spec.replicas %v, want %d", name, dep.Spec.Replicas, replicas)
		}
		if !want.hibernated && !kubernetes.RolledOut(dep, false) {
			return fmt.Errorf("%s: apply returned before the rollout finished: generation %d, status %+v", name, dep.Generation, dep.Status)
		}
		pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
		if err != nil {
			return err
		}
		size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if size.Value() != want.storage {
			return fmt.Errorf("%s: volume %s (%d bytes), want %d", name, size.String(), size.Value(), want.storage)
		}
		return resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(name, "host", "http://"+pid+".rill.test"),
			resource.TestCheckResourceAttr(name, "audience", "http://"+pid+".rill.test"),
			resource.TestCheckResourceAttr(name, "cpu", fmt.Sprint(want.slots)),
			resource.TestCheckResourceAttr(name, "memory_gb", fmt.Sprint(4*want.slots)),
			resource.TestCheckResourceAttr(name, "storage_bytes", fmt.Sprint(want.storage)),
			resource.TestCheckResourceAttr(name, "hibernated", fmt.Sprint(want.hibernated)),
			resource.TestCheckResourceAttr(name, "drift.#", "0"),
		)(s)
	}
}

// checkNoObjectLeft is a CheckDestroy: no Deployment, ReplicaSet, Pod, Service, claim or Ingress
// with the provisioner's managed-by label is left in the namespace.
func (e *kubeEnv) checkNoObjectLeft() resource.TestCheckFunc {
	return func(*terraform.State) error {
		left, err := e.managedObjects()
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("destroy left %d object(s): %s", len(left), strings.Join(left, ", "))
		}
		return nil
	}
}

// managedObjects lists the objects with the provisioner's managed-by label, as "resource/name".
func (e *kubeEnv) managedObjects() ([]string, error) {
	sel := metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedByValue}
	var out []string
	for _, gvr := range []schema.GroupVersionResource{gvrDeployments, gvrReplicaSets, gvrPods, gvrServices, gvrPVCs, gvrIngresses} {
		list, err := e.dyn.Resource(gvr).Namespace(e.ns).List(e.ctx, sel)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			out = append(out, gvr.Resource+"/"+o.GetName())
		}
	}
	sort.Strings(out)
	return out, nil
}

// rpcRecorder serves the provider in-process like providerFactories, and records the diagnostics
// and durations of ApplyResourceChange and ReadResource, which the testing framework does not
// expose (warnings in particular).
type rpcRecorder struct {
	mu         sync.Mutex
	applies    []rpcCall
	reads      []rpcCall
	configures []rpcCall // ConfigureProvider (recorder_test.go)
	plans      []rpcCall // PlanResourceChange (recorder_test.go)
}

type rpcCall struct {
	dur   time.Duration
	diags []*tfprotov6.Diagnostic
}

func (c rpcCall) warnings() []string {
	var out []string
	for _, d := range c.diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning {
			out = append(out, d.Summary+": "+d.Detail)
		}
	}
	return out
}

func (r *rpcRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"rill": func() (tfprotov6.ProviderServer, error) {
			srv, err := providerFactories["rill"]()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: srv, rec: r}, nil
		},
	}
}

// takeApplies returns the ApplyResourceChange calls recorded since the last call.
func (r *rpcRecorder) takeApplies() []rpcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.applies
	r.applies = nil
	return out
}

// takeReads returns the ReadResource calls recorded since the last call.
func (r *rpcRecorder) takeReads() []rpcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reads
	r.reads = nil
	return out
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *rpcRecorder
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.add(&s.rec.applies, start, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		s.rec.add(&s.rec.reads, start, resp.Diagnostics)
	}
	return resp, err
}

// 1. Two runtimes: five objects each with the expected names, labels, CPU, memory and volume size;
// the Deployments are rolled out when apply returns; the second plan is empty.
func TestAccRuntimeKubernetes_twoRuntimesCreateFiveObjectsEach(t *testing.T) {
	e := newKubeEnv(t)
	cfg := e.providerConfig("") +
		runtimeBlock("one", 1, `version = "v0.50.0"`, `environment = "prod"`, `annotations = { organization_name = "acme", project_name = "one" }`) +
		runtimeBlock("two", 2)
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("rill_runtime.one", tfjsonpath.New("provisioner_name"), knownvalue.StringExact("k8s")),
				statecheck.ExpectKnownValue("rill_runtime.two", tfjsonpath.New("storage_bytes"), knownvalue.Int64Exact(80*gib)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.one", runtimeWant{slots: 1, image: "rilldata/rill:v0.50.0"}),
				e.checkRuntime("rill_runtime.two", runtimeWant{slots: 2}),
				func(*terraform.State) error {
					// Exactly the ten objects (plus a ReplicaSet and a Pod per runtime).
					objs, err := e.managedObjects()
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
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	))
}

// 2. Slots 1 -> 2 resize in place and grow the volume; 2 -> 1 shrinks CPU and memory but keeps
// the volume, with a warning on the apply, and the follow-up plan is empty.
func TestAccRuntimeKubernetes_slotsResizeInPlaceAndTheVolumeNeverShrinks(t *testing.T) {
	e := newKubeEnv(t)
	cfg := func(slots int) string { return e.providerConfig("") + runtimeBlock("rt", slots) }
	var id string
	sameID := func(s *terraform.State) error {
		got := s.RootModule().Resources["rill_runtime.rt"].Primary.ID
		if id == "" {
			id = got
		} else if got != id {
			return fmt.Errorf("the runtime was replaced: id %s -> %s", id, got)
		}
		return nil
	}
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg(1),
			Check:  resource.ComposeAggregateTestCheckFunc(sameID, e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1})),
		},
		resource.TestStep{
			PreConfig: func() { e.rec.takeApplies() },
			Config:    cfg(2),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("storage_bytes"), knownvalue.Int64Exact(80*gib)),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(sameID, e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 2}),
				func(*terraform.State) error {
					for _, c := range e.rec.takeApplies() {
						if w := c.warnings(); len(w) > 0 {
							return fmt.Errorf("growing warned: %v", w)
						}
					}
					return nil
				}),
		},
		resource.TestStep{
			Config: cfg(1),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("cpu"), knownvalue.Int64Exact(1)),
					// The provisioner decides whether the volume shrinks (Kubernetes: never).
					plancheck.ExpectUnknownValue("rill_runtime.rt", tfjsonpath.New("storage_bytes")),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(sameID,
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1, storage: 80 * gib}),
				func(*terraform.State) error {
					applies := e.rec.takeApplies()
					if len(applies) != 1 {
						return fmt.Errorf("want one apply, got %d", len(applies))
					}
					w := applies[0].warnings()
					if len(w) != 1 || !wordsRegexp("volumes are never shrunk").MatchString(w[0]) {
						return fmt.Errorf("want one warning that the volume is kept, got %q", w)
					}
					t.Logf("the apply warned: %s", w[0])
					return nil
				}),
		},
		resource.TestStep{
			// No perpetual diff (the steps above already planned again after each apply; this says
			// it explicitly).
			Config: cfg(1),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	))
}

// 3. A new version rolls the Deployment to the new image.
func TestAccRuntimeKubernetes_versionChangeUpdatesTheImage(t *testing.T) {
	e := newKubeEnv(t)
	cfg := func(version string) string {
		return e.providerConfig("") + runtimeBlock("rt", 1, fmt.Sprintf("version = %q", version))
	}
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg("v1.0.0"),
			Check:  e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1, image: "rilldata/rill:v1.0.0"}),
		},
		resource.TestStep{
			Config: cfg("v1.1.0"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1, image: "rilldata/rill:v1.1.0"}),
				resource.TestCheckResourceAttr("rill_runtime.rt", "version", "v1.1.0"),
			),
		},
	))
}

// 4. A Deployment deleted by hand is planned for re-creation, in place: the other objects, above all
// the volume with the runtime's data, are still there, so the kubernetes provisioner reports the
// missing Deployment as drift and the plan is an update that re-creates the Deployment under the
// same ID, on the same volume. Nothing is left behind, and the next plan is empty.
//
// When every object of the runtime is gone, the runtime is gone: refresh removes it from state with
// a warning, and the plan creates a new one (third step).
func TestAccRuntimeKubernetes_deploymentDeletedByHandIsPlannedForRecreation(t *testing.T) {
	e := newKubeEnv(t)
	cfg := e.providerConfig("") + runtimeBlock("rt", 1)
	var oldID, oldPID string
	var volumeUID types.UID
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
				func(s *terraform.State) error {
					oldID = s.RootModule().Resources["rill_runtime.rt"].Primary.ID
					oldPID, _ = pidOf(s, "rill_runtime.rt")
					pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+oldPID, metav1.GetOptions{})
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
				e.deleteAndWait(gvrDeployments, "runtime-"+oldPID)
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
					// The plan says what the update does.
					expectPriorDrift{"rill_runtime.rt", "is missing: apply re-creates it under the same name, on the existing volume"},
					plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("drift"), knownvalue.ListExact([]knownvalue.Check{})),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
				resource.TestCheckResourceAttrPtr("rill_runtime.rt", "id", &oldID),
				func(*terraform.State) error {
					pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, "runtime-"+oldPID, metav1.GetOptions{})
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
				e.rec.takeReads()
				// The claim last: it stays while a pod of the Deployment mounts it.
				objs := objectNames(oldPID)
				for _, o := range append(objs[1:], objs[0]) {
					e.deleteAndWait(o.gvr, o.name)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionCreate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
				func(s *terraform.State) error {
					if id := s.RootModule().Resources["rill_runtime.rt"].Primary.ID; id == oldID {
						return fmt.Errorf("re-created with the same id %s", id)
					}
					// The refresh said why.
					for _, c := range e.rec.takeReads() {
						for _, w := range c.warnings() {
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

// expectPriorDrift is a plan check: the resource's refreshed state (the "before" of its change) has
// a drift entry containing substr.
type expectPriorDrift struct{ addr, substr string }

func (c expectPriorDrift) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr || rc.Change == nil {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		drift, _ := before["drift"].([]any)
		for _, d := range drift {
			if s, _ := d.(string); strings.Contains(s, c.substr) {
				return
			}
		}
		resp.Error = fmt.Errorf("%s: no drift entry contains %q; before: %v", c.addr, c.substr, before["drift"])
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.addr)
}

// deleteAndWait deletes an object of the test's namespace by hand and waits until it is gone.
func (e *kubeEnv) deleteAndWait(gvr schema.GroupVersionResource, name string) {
	e.t.Helper()
	k8stest.DeleteAndWait(e.t, e.ctx, e.dyn, gvr, e.ns, name)
}

// 5. A template edited on disk (template_paths.deployment points at a copy) is drift: planned as an
// in-place update that applies it; then the plan is empty.
func TestAccRuntimeKubernetes_editedTemplateIsPlannedAsAnUpdate(t *testing.T) {
	e := newKubeEnv(t)
	orig, err := os.ReadFile(filepath.Join("..", "..", "templates", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(t.TempDir(), "deployment.yaml")
	if err := os.WriteFile(tmpl, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := e.providerConfig(fmt.Sprintf(`, "template_paths": {"deployment": %q}`, tmpl)) + runtimeBlock("rt", 1)
	const meta = "metadata:\n  name: {{ .Names.Deployment }}\n"
	if strings.Count(string(orig), meta) != 1 {
		t.Fatal("the default deployment template changed shape; update this test's edit")
	}
	var pid string
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
				func(s *terraform.State) error { pid, _ = pidOf(s, "rill_runtime.rt"); return nil },
			),
		},
		resource.TestStep{
			PreConfig: func() {
				edited := strings.Replace(string(orig), meta, meta+"  annotations:\n    rill.test/edited: \"yes\"\n", 1)
				if err := os.WriteFile(tmpl, []byte(edited), 0o644); err != nil {
					t.Fatal(err)
				}
				// Terraform starts a new provider process for every command, which reads the
				// templates afresh; the in-process provider of this test keeps its provisioners
				// (one set per configuration and process), so drop them to do the same.
				provider.CloseAll()
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate)},
				// After the apply, the plan (with refresh) is empty again.
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
				func(*terraform.State) error {
					dep, err := e.apps.Deployments(e.ns).Get(e.ctx, "runtime-"+pid, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if dep.Annotations["rill.test/edited"] != "yes" {
						return fmt.Errorf("the edited template was not applied: annotations %v", dep.Annotations)
					}
					return nil
				},
			),
		},
	))
}

// 6. An API server that cannot be reached fails the refresh with an error, and the runtime stays in
// state: back on the real server, the plan is empty and the runtime is the same.
func TestAccRuntimeKubernetes_unreachableAPIServerIsAnErrorAndKeepsTheState(t *testing.T) {
	e := newKubeEnv(t)
	broken := e.kubeconfigWithClosedPort()
	runtimes := runtimeBlock("rt", 1)
	var id string
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: e.providerConfig("") + runtimes,
			Check: func(s *terraform.State) error {
				id = s.RootModule().Resources["rill_runtime.rt"].Primary.ID
				return nil
			},
		},
		resource.TestStep{
			Config:      e.providerConfigWith(broken, "") + runtimes,
			ExpectError: regexp.MustCompile(`Reading the runtime failed(.|\n)*the state is kept(.|\n)*unchanged`),
		},
		resource.TestStep{
			Config: e.providerConfig("") + runtimes,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrPtr("rill_runtime.rt", "id", &id),
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 1}),
			),
		},
	))
}

// kubeconfigWithClosedPort writes a copy of the cluster's kubeconfig whose servers are a loopback
// port nothing listens on.
func (e *kubeEnv) kubeconfigWithClosedPort() string {
	e.t.Helper()
	kc, err := clientcmd.LoadFromFile(e.cluster.Kubeconfig)
	if err != nil {
		e.t.Fatal(err)
	}
	port := freeport.For(e.t) // nothing listens there
	for _, c := range kc.Clusters {
		c.Server = fmt.Sprintf("https://127.0.0.1:%d", port)
	}
	path := filepath.Join(e.t.TempDir(), "unreachable.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// 7. hibernated = true scales the Deployment to zero and keeps the volume and the Service; false
// brings the runtime back.
func TestAccRuntimeKubernetes_hibernateScalesToZeroAndBack(t *testing.T) {
	e := newKubeEnv(t)
	cfg := func(hibernated bool) string {
		return e.providerConfig("") + runtimeBlock("rt", 2, fmt.Sprintf("hibernated = %t", hibernated))
	}
	var pid string
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg(false),
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 2}),
				func(s *terraform.State) error { pid, _ = pidOf(s, "rill_runtime.rt"); return nil },
			),
		},
		resource.TestStep{
			Config: cfg(true),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				// Replicas 0; the claim (same size) and the Service are kept.
				e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 2, hibernated: true}),
				func(*terraform.State) error {
					// The pod goes away (apply does not wait for that while hibernating).
					return e.eventually(30*time.Second, func() error {
						pods, err := e.core.Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelInstance + "=" + pid})
						if err != nil {
							return err
						}
						if len(pods.Items) != 0 {
							return fmt.Errorf("%d pod(s) left while hibernated", len(pods.Items))
						}
						return nil
					})
				},
			),
		},
		resource.TestStep{
			Config: cfg(false),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate)},
			},
			Check: e.checkRuntime("rill_runtime.rt", runtimeWant{slots: 2}),
		},
	))
}

func (e *kubeEnv) eventually(d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// 8. Destroy deletes every object of every runtime, running or hibernated (the CheckDestroy lists
// the kinds by the managed-by label, Pods and ReplicaSets included).
func TestAccRuntimeKubernetes_destroyLeavesNoObject(t *testing.T) {
	e := newKubeEnv(t)
	cfg := e.providerConfig("") + runtimeBlock("running", 1) + runtimeBlock("sleeping", 1, "hibernated = true")
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.running", runtimeWant{slots: 1}),
				e.checkRuntime("rill_runtime.sleeping", runtimeWant{slots: 1, hibernated: true}),
			),
		},
		resource.TestStep{
			// An explicit destroy step (its Check runs after the destroy, and is handed the state from
			// before it); the TestCase's CheckDestroy checks again at the end.
			Config:  cfg,
			Destroy: true,
			Check: func(*terraform.State) error {
				objs, err := e.managedObjects()
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

// 9. Import by "<provisioner>/<id>" reads back every attribute the cluster can tell (environment and
// annotations are the project's and not observable).
func TestAccRuntimeKubernetes_importReadsBackTheRuntime(t *testing.T) {
	e := newKubeEnv(t)
	cfg := e.providerConfig("") + runtimeBlock("rt", 2, `version = "v0.51.2"`, `environment = "prod"`, `annotations = { organization_name = "acme" }`) +
		runtimeBlock("sleeping", 1, "hibernated = true")
	resource.Test(t, e.testCase(
		resource.TestStep{Config: cfg},
		resource.TestStep{
			ResourceName:            "rill_runtime.rt",
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateIdFunc:       importID("rill_runtime.rt"),
			ImportStateVerifyIgnore: []string{"environment", "annotations", "annotations.%", "annotations.organization_name"},
		},
		resource.TestStep{
			ResourceName:      "rill_runtime.sleeping",
			ImportState:       true,
			ImportStateVerify: true,
			ImportStateIdFunc: importID("rill_runtime.sleeping"),
		},
	))
}

// 10. A runtime that cannot be scheduled (more CPU than the fake node has) fails the apply within
// seconds, with the scheduler's reason in the diagnostic, instead of waiting for timeout_seconds.
func TestAccRuntimeKubernetes_unschedulableRuntimeFailsFast(t *testing.T) {
	e := newKubeEnv(t)
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config:      e.providerConfig("") + runtimeBlock("huge", 64), // 64 CPU: the node has 32
			ExpectError: regexp.MustCompile(`Runtime did not become ready(.|\n)*cannot\s+be\s+scheduled(.|\n)*Insufficient\s+cpu`),
		},
		e.failedFastThenRemoved(""),
	))
}

// 10b. A runtime whose container fails (kwok's chaos stages: the pods of a Deployment whose pod
// template has the label container-waiting.stage.rill.test/reason are held in that waiting reason)
// fails the apply within seconds with the pod's own reason, for a crash loop and for an image that
// cannot be pulled.
func TestAccRuntimeKubernetes_failingContainerFailsFast(t *testing.T) {
	for _, reason := range []string{"CrashLoopBackOff", "ErrImagePull"} {
		t.Run(reason, func(t *testing.T) {
			e := newKubeEnv(t)
			if !e.cluster.Chaos {
				ci.Skip(t, "the cluster has no kwok chaos stages (RILL_TEST_CHAOS=1 says it has)")
			}
			orig, err := os.ReadFile(filepath.Join("..", "..", "templates", "deployment.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			const podLabels = "      labels:\n        app.kubernetes.io/name: rill-runtime\n"
			if strings.Count(string(orig), podLabels) != 1 {
				t.Fatal("the default deployment template changed shape; update this test's edit")
			}
			tmpl := filepath.Join(t.TempDir(), "deployment.yaml")
			text := strings.Replace(string(orig), podLabels, podLabels+"        container-waiting.stage.rill.test/reason: "+reason+"\n", 1)
			if err := os.WriteFile(tmpl, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := fmt.Sprintf(`, "template_paths": {"deployment": %q}`, tmpl)
			resource.Test(t, e.testCase(
				resource.TestStep{
					Config:      e.providerConfig(spec) + runtimeBlock("broken", 1),
					ExpectError: regexp.MustCompile(`Runtime did not become ready(.|\n)*` + reason),
				},
				e.failedFastThenRemoved(spec),
			))
		})
	}
}

// failedFastThenRemoved is the step after an apply that should have failed fast: it checks that the
// one apply failed within 20 s (timeout_seconds is 120), then a configuration without the runtime
// destroys it.
func (e *kubeEnv) failedFastThenRemoved(extraSpec string) resource.TestStep {
	return resource.TestStep{
		PreConfig: func() {
			applies := e.rec.takeApplies()
			if len(applies) != 1 {
				e.t.Fatalf("want one apply, got %d", len(applies))
			}
			e.t.Logf("the apply failed after %s", applies[0].dur.Round(time.Millisecond))
			if applies[0].dur > 20*time.Second {
				e.t.Errorf("the apply took %s to fail; timeout_seconds is 120", applies[0].dur)
			}
		},
		Config: e.providerConfig(extraSpec),
	}
}

// 11. terraform plan writes nothing to the cluster, even when it finds drift to repair: the API
// server's audit log has no create, update, patch or delete of the user the provider runs as while
// the plan runs, and it does have the provider's reads (so the log is not silently empty).
func TestAccRuntimeKubernetes_planWritesNothing(t *testing.T) {
	e := newKubeEnv(t)
	if e.cluster.AuditLog == "" {
		ci.Skip(t, "the cluster's audit log is unknown: the local control plane has one; for %s, set %s", k8stest.EnvKubeconfig, k8stest.EnvAuditLog)
	}
	cfg := e.providerConfig("") + runtimeBlock("a", 1) + runtimeBlock("b", 1)
	var pidB string
	var from time.Time
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuntime("rill_runtime.a", runtimeWant{slots: 1}),
				e.checkRuntime("rill_runtime.b", runtimeWant{slots: 1}),
				func(s *terraform.State) error { pidB, _ = pidOf(s, "rill_runtime.b"); return nil },
			),
		},
		resource.TestStep{
			// b's Service deleted by hand is drift: the plan shows an update, and must not repair it.
			PreConfig: func() {
				e.deleteAndWait(gvrServices, "runtime-"+pidB)
				from = time.Now()
			},
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.a", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("rill_runtime.b", plancheck.ResourceActionUpdate),
				},
			},
			PostApplyFunc: func() {
				to := time.Now()
				events := e.auditEvents(from, to)
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
				if _, err := e.core.Services(e.ns).Get(e.ctx, "runtime-"+pidB, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
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
				e.checkRuntime("rill_runtime.b", runtimeWant{slots: 1}),
				func(*terraform.State) error {
					patches := 0
					for _, ev := range e.auditEvents(from, time.Now()) {
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

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

func (ev auditEvent) String() string {
	return fmt.Sprintf("%s %s %s (%d) by %s, %s", ev.RequestReceivedTimestamp.Format(time.RFC3339Nano), ev.Verb, ev.RequestURI,
		ev.ResponseStatus.Code, ev.User.Username, ev.UserAgent)
}

// auditEvents returns the audit log's events of the kubeconfig's user received between from and to.
// It first makes a request of its own after `to` and waits until the log shows it, so that every
// earlier request has been written.
func (e *kubeEnv) auditEvents(from, to time.Time) []auditEvent {
	e.t.Helper()
	marker := "audit-marker-" + randomHex(6)
	if _, err := e.core.Namespaces().Get(e.ctx, marker, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.t.Fatalf("marker request: %v", err)
	}
	var events []auditEvent
	err := e.eventually(30*time.Second, func() error {
		events = events[:0]
		f, err := os.Open(e.cluster.AuditLog)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		seen := false
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev auditEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return fmt.Errorf("audit log line %q: %w", sc.Text(), err)
			}
			if strings.Contains(ev.RequestURI, marker) {
				seen = true
			}
			if ev.Stage != "ResponseComplete" || ev.User.Username != k8stest.AuditUser ||
				ev.RequestReceivedTimestamp.Before(from) || ev.RequestReceivedTimestamp.After(to) {
				continue
			}
			events = append(events, ev)
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if !seen {
			return fmt.Errorf("the audit log %s does not show the marker request %s", e.cluster.AuditLog, marker)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return events
}
