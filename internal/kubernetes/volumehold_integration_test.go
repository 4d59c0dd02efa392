package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// A `kubectl delete pvc` of a runtime's volume while the runtime's own pod mounts it leaves the claim
// Terminating for as long as such a pod exists (Kubernetes' pvc-protection), which the Deployment
// sees to forever. The refresh says what the apply does, and one plain apply repairs it: it stops
// the runtime's pod, waits until the claim is gone, creates it again (a new, empty claim) and brings
// the runtime back; before, the apply failed at once ("nothing was applied: wait until it is gone"),
// and again after any wait.
func TestIntegrationAVolumeDeletedUnderItsRunningRuntimeIsCreatedAgainByOneApply(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	pvcs := e.core.PersistentVolumeClaims(e.ns)
	before, err := pvcs.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pvcs.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.claimStaysHeld(name, 3*time.Second)
	ours := e.podsMounting(name)
	if len(ours) != 1 {
		t.Fatalf("pods mounting the claim: %v, want the runtime's one", ours)
	}

	drift := e.driftOf(e.p, r)
	want := fmt.Sprintf("volume %s/%s is being deleted while this runtime's pod %s mounts it: the apply stops the pod so that it goes, then creates it again (its data is lost)", e.ns, name, ours[0])
	if len(drift) != 1 || drift[0] != want {
		t.Errorf("drift %q, want [%q]", drift, want)
	}

	core, logs := observer.New(zap.InfoLevel)
	e.provision(e.provisioner("", zap.New(core)), r, args(1, "v1", false))
	e.awaitReady(r)
	after, err := pvcs.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID || after.DeletionTimestamp != nil {
		t.Fatalf("the claim is uid %s (was %s), deletionTimestamp %v: want a new one", after.UID, before.UID, after.DeletionTimestamp)
	}
	t.Logf("claim %s replaced by %s", before.UID, after.UID)
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("drift after the apply: %q", drift)
	}
	if logs.FilterMessageSnippet("stopping them so that it goes").Len() != 1 || logs.FilterMessage("the volume being deleted is gone").Len() != 1 {
		t.Errorf("the apply did not log stopping the pods and the volume gone: %v", logs.All())
	}
}

// A claim being deleted that a pod of something else mounts is not the runtime's to free: stopping
// the runtime's pods would not let it go, and the other pod is not the apply's to stop. The refresh
// and the apply's error name that pod and what to do, and the apply writes nothing.
func TestIntegrationAVolumeBeingDeletedThatAnotherPodMountsIsRefusedNamingThePod(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The runtime's own pod spec (so it mounts the claim and is scheduled as the runtime's is),
	// under a pod of something else.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "backup-" + randomHex(3), Labels: map[string]string{"app": "backup"}}, Spec: dep.Spec.Template.Spec}
	if _, err := e.core.Pods(e.ns).Create(e.ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before the runtime's Deprovision, which waits for the claim
		_ = e.core.Pods(e.ns).Delete(context.Background(), other.Name, metav1.DeleteOptions{})
	})
	e.refusesToStopForAStranger(r, name, other.Name)
}

// A pod with the runtime's labels that its Deployment does not run (made by hand, as kubectl debug
// --copy-to --keep-labels makes one: the labels, no owner) is not the runtime's: stopping the
// runtime would not remove it, so the claim would stay and the runtime would be down for nothing. The
// apply refuses before any write, naming it; before, it took the pod for the runtime's by its
// instance label, scaled the Deployment to 0 and waited in vain.
func TestIntegrationAPodWithTheRuntimesLabelsMadeByHandIsRefusedBeforeAnyWrite(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	own := e.ownPodMounting(name)
	pod, err := e.core.Pods(e.ns).Get(e.ctx, own[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Without the pod-template-hash, which would make the ReplicaSet adopt it (and remove one pod of
	// its two): what the Deployment's selector matches, which is what a label-based test would take
	// for the runtime's.
	labels := maps.Clone(pod.Labels)
	delete(labels, appsv1.DefaultDeploymentUniqueLabelKey)
	copied := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug-" + randomHex(3), Labels: labels}, Spec: pod.Spec}
	copied.Spec.NodeName = ""
	if _, err := e.core.Pods(e.ns).Create(e.ctx, copied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.core.Pods(e.ns).Delete(context.Background(), copied.Name, metav1.DeleteOptions{})
	})
	e.refusesToStopForAStranger(r, name, copied.Name)
}

// refusesToStopForAStranger deletes the runtime r's claim (name) that its own pod and the pod
// stranger mount, and checks that the refresh and the apply name both pods, that the apply refuses
// before any write naming stranger, and that the runtime's Deployment keeps its replica.
func (e *env) refusesToStopForAStranger(r *provisioner.Resource, name, stranger string) {
	t := e.t
	t.Helper()
	e.deleteHeldClaim(name)
	mounting := e.podsMounting(name)
	if len(mounting) != 2 || !slices.Contains(mounting, stranger) {
		t.Fatalf("pods mounting the claim: %v, want the runtime's and %s", mounting, stranger)
	}
	being := regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pods %s", e.ns, name, pvcProtectionFinalizer, strings.Join(mounting, ", ")))
	if drift := e.driftOf(e.p, r); len(drift) != 1 || !regexp.MustCompile("^"+being+": apply fails until it is gone$").MatchString(drift[0]) {
		t.Fatalf("drift %q, want [%s: apply fails until it is gone]", drift, being)
	}
	e.refusedBeforeAnyWrite(e.p, r, "^"+being+": nothing was applied: pod "+regexp.QuoteMeta(stranger)+", which this runtime's Deployment does not run, mounts it, and the apply does not stop it: delete it .*, then plan again$")
	e.keepsItsReplica(name)
}

// The runtime's own pod that outlives the stop (a finalizer of something else holds it, as a
// backup or log-shipping agent's may) keeps the claim: the wait ends with the apply's deadline, and
// its error names the claim and the pod that still held it. The apply wrote the Deployment, so it
// says where the runtime is; once the pod is gone, one plain apply makes the runtime whole. The wait
// polls the claim alone: the pods are listed to decide (once) and for the error, not at each poll.
func TestIntegrationAVolumeTheStopDoesNotFreeEndsTheWaitNamingWhatHoldsIt(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	own := e.ownPodMounting(name)
	e.holdPod(own[0])
	e.deleteHeldClaim(name)

	p, requests := e.countingProvisioner()
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	out, err := p.Provision(ctx, r, args(1, "v1", false))
	wantErr := "^" + regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pod %s: the apply stopped this runtime's pods so that it goes, and waited for it in vain (after ", e.ns, name, pvcProtectionFinalizer, own[0])) + `.*the operation's own deadline ended the wait.*\): delete what still mounts it, then apply again$`
	if err == nil || !regexp.MustCompile(wantErr).MatchString(err.Error()) {
		t.Fatalf("Provision: %v, want an error matching %q", err, wantErr)
	}
	t.Logf("the wait ended: %v", err)
	requests.mu.Lock()
	lists := requests.got["list pods"]
	requests.mu.Unlock()
	if lists != 2 {
		t.Errorf("the apply listed the pods %d times in a wait of seconds, want 2 (to decide, and for the error)", lists)
	}
	if out == nil || out.State[StateNamespace] != e.ns {
		t.Errorf("Provision returned %v with its error: it wrote the Deployment, so it must say where", out)
	}
	if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 0 {
		t.Errorf("the runtime's Deployment was not stopped: %v, err %v", dep.Spec.Replicas, err)
	}

	e.releasePod(own[0])
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("drift after the apply again: %q", drift)
	}
}

// The create of a named runtime that finds the runtime running on a claim being deleted (another
// configuration's, or one whose state was lost) does not stop it: its plan said "create". It refuses
// before any write, saying that the configuration that manages the runtime repairs it; before, it
// scaled the running runtime to 0.
func TestIntegrationACreateThatFindsItsRuntimeOnAVolumeBeingDeletedDoesNotStopIt(t *testing.T) {
	e := newEnv(t, "")
	r, opts := e.namedRuntime("orders")
	e.awaitReady(r)
	name := "runtime-" + pidOf(r)
	e.deleteHeldClaim(name)

	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	out, created, err := e.p.ProvisionReportingCreation(ctx, &provisioner.Resource{ID: r.ID, Type: r.Type}, opts)
	wantErr := "^" + regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pod ", e.ns, name, pvcProtectionFinalizer)) + `\S+: nothing was applied: this runtime exists already, and a create does not stop its pods .*: the configuration that manages it repairs it with an apply .*then plan again$`
	if err == nil || !regexp.MustCompile(wantErr).MatchString(err.Error()) {
		t.Fatalf("create: %v, want an error matching %q", err, wantErr)
	}
	t.Logf("refused: %v", err)
	if out != nil || created {
		t.Errorf("the create returned %v, created=%t: nothing was written", out, created)
	}
	e.keepsItsReplica(name)
	// The update of the runtime this state holds repairs it.
	e.provision(e.p, r, opts)
	e.awaitReady(r)
}

// A Deployment deleted meanwhile (a destroy in another state) runs no pod: its pod that still
// mounts the claim (a finalizer holds it) is not stopped by anything the apply writes, and the
// apply must not make a Deployment at 0 replicas; it refuses before any write. Before, it applied a
// new Deployment at 0 replicas and waited in vain.
func TestIntegrationAVolumeBeingDeletedUnderADeletedDeploymentIsRefused(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	own := e.ownPodMounting(name)
	e.holdPod(own[0])
	e.deleteHeldClaim(name)
	e.deleteAndWait(deploymentsResource, name)

	e.refusedBeforeAnyWrite(e.p, r, "^"+regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pod %s: nothing was applied: pod %s, which this runtime's Deployment does not run, mounts it", e.ns, name, pvcProtectionFinalizer, own[0], own[0])))
	if _, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment was made (err %v): want none", err)
	}
}

// A claim being deleted while the runtime's Deployment is being deleted too (a destroy under way,
// which a finalizer holds up) is refused before any write: stopping the pods would fight the destroy.
func TestIntegrationAVolumeBeingDeletedWithItsDeploymentIsRefused(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	hold := []byte(`{"metadata": {"finalizers": ["rill.test/hold"]}}`)
	if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, hold, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.apps.Deployments(e.ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata": {"finalizers": null}}`), metav1.PatchOptions{})
	})
	background := metav1.DeletePropagationBackground
	if err := e.apps.Deployments(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	e.deleteHeldClaim(name)

	e.refusedBeforeAnyWrite(e.p, r, `: nothing was applied: `+regexp.QuoteMeta(fmt.Sprintf("Deployment %s/%s is being deleted too", e.ns, name)))
	e.keepsItsReplica(name)
}

// Credentials that may not list pods cannot tell who mounts a claim being deleted: the refresh and
// the apply say so, and the apply writes nothing (it does not wait in vain either).
func TestIntegrationAVolumeBeingDeletedIsRefusedToCredentialsThatMayNotListPods(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	e.applyExampleRBAC(func(verb string) bool { return verb != "list" })
	e.waitUntilAllowedOn("rill-provisioner", "get", "", "namespaces", identityNamespace, true)
	e.waitUntilAllowed("rill-provisioner", "list", "", "pods", false)
	p := e.provisionerAs("rill-provisioner")
	e.deleteHeldClaim(name)

	being := regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s)", e.ns, name, pvcProtectionFinalizer))
	if drift := e.driftOf(p, r); len(drift) != 1 || !regexp.MustCompile("^"+being+": apply fails until it is gone$").MatchString(drift[0]) {
		t.Fatalf("drift %q, want [%s: apply fails until it is gone]", drift, being)
	}
	e.refusedBeforeAnyWrite(p, r, "^"+being+": nothing was applied: the credentials may not list pods, ")
	e.keepsItsReplica(name)
}

// readyRuntime provisions a runtime of args(1, "v1", false), waits until it is ready, and returns it
// with its objects' name.
func (e *env) readyRuntime() (*provisioner.Resource, string) {
	e.t.Helper()
	r, name := e.provisionedRuntime()
	e.awaitReady(r)
	return r, name
}

// ownPodMounting is the runtime's one pod that mounts its claim (name), as a one-element list.
func (e *env) ownPodMounting(name string) []string {
	e.t.Helper()
	own := e.podsMounting(name)
	if len(own) != 1 {
		e.t.Fatalf("pods mounting the claim: %v, want the runtime's one", own)
	}
	return own
}

// deleteHeldClaim deletes the claim name while a pod mounts it, and checks that pvc-protection holds
// it (Terminating) as on a real cluster.
func (e *env) deleteHeldClaim(name string) {
	e.t.Helper()
	if err := e.core.PersistentVolumeClaims(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.claimStaysHeld(name, time.Second)
}

// refusedBeforeAnyWrite checks that Provision of r through p fails at once (within 5 s: a wait would
// be a failure) with an error matching wantErr, and returns nothing, having written nothing.
func (e *env) refusedBeforeAnyWrite(p *Provisioner, r *provisioner.Resource, wantErr string) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	out, err := p.Provision(ctx, r, args(1, "v1", false))
	if err == nil || !regexp.MustCompile(wantErr).MatchString(err.Error()) {
		t.Fatalf("Provision: %v, want an error matching %q", err, wantErr)
	}
	t.Logf("refused: %v", err)
	if out != nil {
		t.Errorf("Provision returned %v with its error: nothing was written", out)
	}
}

// keepsItsReplica checks that the runtime's Deployment (name) still runs its one replica.
func (e *env) keepsItsReplica(name string) {
	e.t.Helper()
	if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 1 {
		e.t.Errorf("the runtime's Deployment was changed: %v, err %v", dep.Spec.Replicas, err)
	}
}

// holdPod puts a finalizer on a pod so that it outlives its deletion until releasePod (or the
// test's end).
func (e *env) holdPod(name string) {
	e.t.Helper()
	if _, err := e.core.Pods(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(`{"metadata": {"finalizers": ["rill.test/hold"]}}`), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { e.releasePod(name) })
}

// releasePod removes holdPod's finalizer.
func (e *env) releasePod(name string) {
	_, err := e.core.Pods(e.ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata": {"finalizers": null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("releasing pod %s: %v", name, err)
	}
}

// claimStaysHeld checks that a claim just deleted stays Terminating for d with Kubernetes' protection
// as its only finalizer: on this control plane kube-controller-manager's pvc-protection controller
// holds it while a scheduled pod (kwok's) mounts it, as on a real cluster. A claim that went anyway
// would leave the tests above nothing to test.
func (e *env) claimStaysHeld(name string, d time.Duration) {
	e.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		pvc, err := e.core.PersistentVolumeClaims(e.ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("the claim was not held by the pod that mounts it: %v", err)
		}
		if pvc.DeletionTimestamp == nil || !slices.Equal(pvc.Finalizers, []string{pvcProtectionFinalizer}) {
			e.t.Fatalf("claim %s: deletionTimestamp %v, finalizers %v: want Terminating, held by %s alone", name, pvc.DeletionTimestamp, pvc.Finalizers, pvcProtectionFinalizer)
		}
	}
}

// podsMounting names the pods of the test's namespace that mount the claim, sorted.
func (e *env) podsMounting(claim string) []string {
	e.t.Helper()
	pods, err := e.core.Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for i := range pods.Items {
		if mountsClaim(&pods.Items[i], claim) {
			out = append(out, pods.Items[i].Name)
		}
	}
	slices.Sort(out)
	return out
}

// The stop is applied with the UID and resourceVersion of the Deployment that freeVolume read: a
// destroy in another state that deletes the Deployment after that read makes the stop fail, instead
// of creating a Deployment at 0 replicas (server-side apply creates a missing object whatever
// resourceVersion it names: the UID says no); one that changed it since (it began deleting it) makes
// it fail too. Without them, server-side apply wrote over the change and created the Deployment.
func TestIntegrationTheStopOfADeploymentChangedSinceItWasReadFails(t *testing.T) {
	e := newEnv(t, "")
	_, name := e.readyRuntime()
	claim, err := e.c.core.Resource(pvcsResource).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.c.apps.Resource(deploymentsResource).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rendered := read.DeepCopy() // what the apply would apply: the runtime's own Deployment
	unstructured.RemoveNestedField(rendered.Object, "metadata", "managedFields")
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation"} {
		unstructured.RemoveNestedField(rendered.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(rendered.Object, "status")
	stop := func() error {
		h := &volumeHold{claim: claim, dep: read, ours: []string{"the pod"}}
		ctx, cancel := context.WithTimeout(e.ctx, 2*time.Second)
		defer cancel()
		_, err := e.p.releaseVolume(ctx, e.c, h, rendered, zap.NewNop())
		return err
	}

	annotate := []byte(`{"metadata": {"annotations": {"rill.test/changed": "yes"}}}`)
	if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.MergePatchType, annotate, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err == nil || !apierrors.IsConflict(errors.Unwrap(err)) {
		t.Fatalf("the stop of a Deployment changed since it was read: %v, want a conflict", err)
	}
	if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 1 {
		t.Fatalf("the Deployment changed since it was read was stopped anyway: %v, err %v", dep.Spec.Replicas, err)
	}

	e.deleteAndWait(deploymentsResource, name)
	if err := stop(); err == nil {
		t.Fatal("the stop of a Deployment deleted since it was read succeeded")
	} else {
		t.Logf("the stop of a deleted Deployment: %v", err)
	}
	if _, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the stop created a Deployment (err %v): want none", err)
	}
}

// A refresh whose LIST of the pods fails for a reason other than RBAC (a server error, a timeout)
// reports the claim being deleted without naming the pods: who mounts it is detail, and before, the
// refresh failed, and with it the plan of a destroy.
func TestIntegrationARefreshThatCannotListThePodsStillReportsTheVolumeBeingDeleted(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.readyRuntime()
	e.deleteHeldClaim(name)

	p := e.interceptingProvisioner("", func(req *http.Request) error {
		if kind, _ := requestKind(req, e.ns); kind == "list pods" {
			return errors.New("injected: the pods cannot be listed")
		}
		return nil
	})
	want := fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s): the apply stops this runtime's pods if only they hold it, else fails until it is gone", e.ns, name, pvcProtectionFinalizer)
	if drift := e.driftOf(p, r); len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift %q, want [%q]", drift, want)
	}
}
