package acctest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
)

// Gib is a gibibyte.
const Gib = int64(1) << 30

// The kinds of a runtime's objects.
var (
	Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ReplicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	Pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	Services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	PVCs        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	Ingresses   = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
)

// KubeEnv is one test's namespace on the shared cluster (k8stest: RILL_TEST_KUBECONFIG's, else a
// local control plane started once per test binary), the provider configuration that provisions into
// it, clients to look at it, and a recorder of the provider's diagnostics. kwok runs the pods: they
// become Running and Ready, but no container runs, so the HTTP probe is off (ping_path ""). The
// namespace is deleted when the test ends.
type KubeEnv struct {
	T       testing.TB
	Cluster *k8stest.Cluster
	NS      string
	Ledger  string
	Ctx     context.Context
	Apps    appsv1client.AppsV1Interface
	Core    corev1client.CoreV1Interface
	Dyn     dynamic.Interface
	Rec     *Recorder
	started time.Time
}

// NewKubeEnv needs TF_ACC and a cluster (RequireAcc, k8stest.Get) and makes the test's namespace.
func NewKubeEnv(t testing.TB) *KubeEnv {
	t.Helper()
	RequireAcc(t)
	c := k8stest.Get(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// The test's own requests are told apart from the provider's (user agent
	// "terraform-provider-rill") in the audit log.
	cfg.UserAgent = "rill-acceptance-test"
	cfg.QPS, cfg.Burst = 50, 100
	e := &KubeEnv{T: t, Cluster: c, Ledger: SQLiteLedger(t), Rec: &Recorder{}, started: time.Now()}
	var cancel context.CancelFunc
	e.Ctx, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	if e.Apps, err = appsv1client.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.Core, err = corev1client.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.Dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		t.Logf("%s took %s (without starting the cluster)", t.Name(), time.Since(e.started).Round(100*time.Millisecond))
	})
	e.NS = e.newNamespace()
	return e
}

// InNewNamespace is a copy of the environment for another namespace of the same cluster, made for the
// test and deleted after it: the same ledger, clients and recorder, so that a test can move a
// provisioner's namespace between steps.
func (e *KubeEnv) InNewNamespace() *KubeEnv {
	e.T.Helper()
	moved := *e
	moved.NS = e.newNamespace()
	return &moved
}

// newNamespace makes a namespace for the test, deleted after it.
func (e *KubeEnv) newNamespace() string {
	e.T.Helper()
	ns := "rill-acc-" + RandomHex(4)
	if _, err := e.Core.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		e.T.Fatalf("creating namespace %s: %v", ns, err)
	}
	e.T.Cleanup(func() { _ = e.Core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return ns
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SetJSON is a provisioner set of one kubernetes provisioner "k8s" for the test's namespace.
func (e *KubeEnv) SetJSON() string {
	return fmt.Sprintf(`{"k8s": {"type": "kubernetes", "spec": %s}}`, e.spec(e.Cluster.Kubeconfig, ""))
}

func (e *KubeEnv) spec(kubeconfig, extraSpec string) string {
	return fmt.Sprintf(`{"host": "http://*.rill.test", "namespace": %q, "kubeconfig_path": %q, "timeout_seconds": 120, "ping_path": ""%s}`,
		e.NS, kubeconfig, extraSpec)
}

// ProviderConfig renders the provider block: the test's ledger and one kubernetes provisioner "k8s"
// (the default, as the only one) for the test's namespace, with extraSpec appended to its spec.
func (e *KubeEnv) ProviderConfig(extraSpec string) string {
	return e.ProviderConfigAs(e.Cluster.Kubeconfig, extraSpec)
}

// ProviderConfigAs is ProviderConfig with the provisioner's credentials from another kubeconfig (a
// ServiceAccount's, say) instead of the cluster's admin one.
func (e *KubeEnv) ProviderConfigAs(kubeconfig, extraSpec string) string {
	return ProviderBlock(e.Ledger, "", fmt.Sprintf(`"k8s": {"type": "kubernetes", "spec": %s}`, e.spec(kubeconfig, extraSpec)))
}

// TestCase is a TestCase on the recording provider whose destroy must leave no object.
func (e *KubeEnv) TestCase(steps ...resource.TestStep) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: e.Rec.Factories(),
		CheckDestroy:             e.CheckNoObjectLeft(),
		Steps:                    steps,
	}
}

// PidOf returns the provision ID (the resource ID without dashes) of a runtime in state.
func PidOf(s *terraform.State, name string) (string, error) {
	rs, ok := s.RootModule().Resources[name]
	if !ok {
		return "", fmt.Errorf("%s is not in state", name)
	}
	return strings.ToLower(strings.ReplaceAll(rs.Primary.ID, "-", "")), nil
}

// RuntimeWant is what a runtime's objects must look like.
type RuntimeWant struct {
	Slots      int
	Storage    int64  // the claim's size; 0 means 40 GiB per slot
	Image      string // "" means rilldata/rill:latest
	Hibernated bool
}

// Object is one object of a runtime.
type Object struct {
	GVR  schema.GroupVersionResource
	Name string
}

// ObjectNames returns the five objects of a runtime, the claim first.
func ObjectNames(pid string) []Object {
	return []Object{
		{PVCs, "runtime-" + pid},
		{Deployments, "runtime-" + pid},
		{Services, "runtime-" + pid},
		{Ingresses, "http-runtime-" + pid},
		{Ingresses, "grpc-runtime-" + pid},
	}
}

// CheckRuntime checks, through client-go, the five objects of a runtime in state (names, labels,
// annotations), the Deployment's image, resources, replicas and rollout, the claim's size, and
// that the state's sizes agree.
func (e *KubeEnv) CheckRuntime(name string, want RuntimeWant) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		pid, err := PidOf(s, name)
		if err != nil {
			return err
		}
		if want.Storage == 0 {
			want.Storage = int64(want.Slots) * 40 * Gib
		}
		if want.Image == "" {
			want.Image = "rilldata/rill:latest"
		}
		for _, o := range ObjectNames(pid) {
			obj, err := e.Dyn.Resource(o.GVR).Namespace(e.NS).Get(e.Ctx, o.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %s %s/%s: %w", name, o.GVR.Resource, e.NS, o.Name, err)
			}
			if l := obj.GetLabels(); l[kubernetes.LabelManagedBy] != kubernetes.ManagedByValue || l[kubernetes.LabelInstance] != pid {
				return fmt.Errorf("%s: %s %s labels %v", name, o.GVR.Resource, o.Name, l)
			}
			a := obj.GetAnnotations()
			if a[kubernetes.AnnotationSlots] != fmt.Sprint(want.Slots) || a[kubernetes.AnnotationHibernated] != fmt.Sprint(want.Hibernated) {
				return fmt.Errorf("%s: %s %s annotations %v", name, o.GVR.Resource, o.Name, a)
			}
		}
		dep, err := e.Apps.Deployments(e.NS).Get(e.Ctx, "runtime-"+pid, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			return fmt.Errorf("%s: deployment without containers", name)
		}
		ct := dep.Spec.Template.Spec.Containers[0]
		if ct.Image != want.Image {
			return fmt.Errorf("%s: image %s, want %s", name, ct.Image, want.Image)
		}
		cpu := *k8sresource.NewQuantity(int64(want.Slots), k8sresource.DecimalSI)
		mem := *k8sresource.NewQuantity(int64(4*want.Slots)*Gib, k8sresource.BinarySI)
		for kind, l := range map[string]corev1.ResourceList{"requests": ct.Resources.Requests, "limits": ct.Resources.Limits} {
			c, m := l[corev1.ResourceCPU], l[corev1.ResourceMemory]
			if c.Cmp(cpu) != 0 || m.Cmp(mem) != 0 {
				return fmt.Errorf("%s: %d slot(s): %s cpu %s memory %s, want %s and %s", name, want.Slots, kind, c.String(), m.String(), cpu.String(), mem.String())
			}
		}
		replicas := int32(1)
		if want.Hibernated {
			replicas = 0
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != replicas {
			return fmt.Errorf("%s: spec.replicas %v, want %d", name, dep.Spec.Replicas, replicas)
		}
		// Apply waits for the rollout, except while hibernating (the pod goes in its own time).
		if !want.Hibernated && !kubernetes.RolledOut(dep, false) {
			return fmt.Errorf("%s: apply returned before the rollout finished: generation %d, status %+v", name, dep.Generation, dep.Status)
		}
		pvc, err := e.Core.PersistentVolumeClaims(e.NS).Get(e.Ctx, "runtime-"+pid, metav1.GetOptions{})
		if err != nil {
			return err
		}
		size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if size.Value() != want.Storage {
			return fmt.Errorf("%s: volume %s (%d bytes), want %d", name, size.String(), size.Value(), want.Storage)
		}
		return resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(name, "host", "http://"+pid+".rill.test"),
			resource.TestCheckResourceAttr(name, "audience", "http://"+pid+".rill.test"),
			resource.TestCheckResourceAttr(name, "cpu", fmt.Sprint(want.Slots)),
			resource.TestCheckResourceAttr(name, "memory_gb", fmt.Sprint(4*want.Slots)),
			resource.TestCheckResourceAttr(name, "storage_bytes", fmt.Sprint(want.Storage)),
			resource.TestCheckResourceAttr(name, "hibernated", fmt.Sprint(want.Hibernated)),
			resource.TestCheckResourceAttr(name, "drift.#", "0"),
		)(s)
	}
}

// CheckNoObjectLeft is a CheckDestroy: no Deployment, ReplicaSet, Pod, Service, claim or Ingress
// with the provisioner's managed-by label is left in the namespace.
func (e *KubeEnv) CheckNoObjectLeft() resource.TestCheckFunc {
	return func(*terraform.State) error {
		left, err := e.ManagedObjects()
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("destroy left %d object(s): %s", len(left), strings.Join(left, ", "))
		}
		return nil
	}
}

// ManagedObjects lists the objects with the provisioner's managed-by label, as "resource/name".
func (e *KubeEnv) ManagedObjects() ([]string, error) {
	sel := metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedByValue}
	var out []string
	for _, gvr := range []schema.GroupVersionResource{Deployments, ReplicaSets, Pods, Services, PVCs, Ingresses} {
		list, err := e.Dyn.Resource(gvr).Namespace(e.NS).List(e.Ctx, sel)
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

// ForbidServices creates a ResourceQuota that allows no Service in the test's namespace, so that a
// Provision fails part-way: the volume claim and the Deployment, applied before the Service, are made. It
// returns a func that deletes the quota again.
func (e *KubeEnv) ForbidServices() (lift func()) {
	e.T.Helper()
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-services"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: k8sresource.MustParse("0")}},
	}
	if _, err := e.Core.ResourceQuotas(e.NS).Create(e.Ctx, quota, metav1.CreateOptions{}); err != nil {
		e.T.Fatalf("creating the quota: %v", err)
	}
	return func() {
		e.T.Helper()
		if err := e.Core.ResourceQuotas(e.NS).Delete(e.Ctx, quota.Name, metav1.DeleteOptions{}); err != nil {
			e.T.Fatalf("deleting the quota: %v", err)
		}
	}
}

// DeleteAndWait deletes an object of the test's namespace by hand and waits until it is gone.
func (e *KubeEnv) DeleteAndWait(gvr schema.GroupVersionResource, name string) {
	e.T.Helper()
	k8stest.DeleteAndWait(e.T, e.Ctx, e.Dyn, gvr, e.NS, name)
}

// KubeconfigWithClosedPort writes a copy of the cluster's kubeconfig whose servers are a loopback
// port nothing listens on.
func (e *KubeEnv) KubeconfigWithClosedPort() string {
	e.T.Helper()
	kc, err := clientcmd.LoadFromFile(e.Cluster.Kubeconfig)
	if err != nil {
		e.T.Fatal(err)
	}
	port := freeport.For(e.T) // nothing listens there
	for _, c := range kc.Clusters {
		c.Server = fmt.Sprintf("https://127.0.0.1:%d", port)
	}
	path := filepath.Join(e.T.TempDir(), "unreachable.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// Eventually calls f until it returns nil or d has passed, and returns its last error.
func Eventually(d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ExpectPriorDrift is a plan check: the resource's refreshed state (the "before" of its change) has
// a drift entry containing Substr.
type ExpectPriorDrift struct{ Addr, Substr string }

// CheckPlan implements plancheck.PlanCheck.
func (c ExpectPriorDrift) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.Addr || rc.Change == nil {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		drift, _ := before["drift"].([]any)
		for _, d := range drift {
			if s, _ := d.(string); strings.Contains(s, c.Substr) {
				return
			}
		}
		resp.Error = fmt.Errorf("%s: no drift entry contains %q; before: %v", c.Addr, c.Substr, before["drift"])
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.Addr)
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type AuditEvent struct {
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

func (ev AuditEvent) String() string {
	return fmt.Sprintf("%s %s %s (%d) by %s, %s", ev.RequestReceivedTimestamp.Format(time.RFC3339Nano), ev.Verb, ev.RequestURI,
		ev.ResponseStatus.Code, ev.User.Username, ev.UserAgent)
}

// AuditEvents returns the audit log's events of the kubeconfig's user received between from and to.
// It first makes a request of its own after `to` and waits until the log shows it, so that every
// earlier request has been written.
func (e *KubeEnv) AuditEvents(from, to time.Time) []AuditEvent {
	e.T.Helper()
	marker := "audit-marker-" + RandomHex(6)
	if _, err := e.Core.Namespaces().Get(e.Ctx, marker, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.T.Fatalf("marker request: %v", err)
	}
	var events []AuditEvent
	err := Eventually(30*time.Second, func() error {
		events = events[:0]
		f, err := os.Open(e.Cluster.AuditLog)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		seen := false
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev AuditEvent
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
			return fmt.Errorf("the audit log %s does not show the marker request %s", e.Cluster.AuditLog, marker)
		}
		return nil
	})
	if err != nil {
		e.T.Fatal(err)
	}
	return events
}
