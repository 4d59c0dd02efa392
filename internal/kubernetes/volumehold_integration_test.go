package kubernetes

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A `kubectl delete pvc` of a runtime's volume while the runtime's own pod mounts it leaves the claim
// Terminating for as long as such a pod exists (Kubernetes' pvc-protection), which the Deployment
// sees to forever. The refresh says what the apply does, and one plain apply repairs it: it stops
// the runtime's pod, waits until the claim is gone, creates it again (a new, empty claim) and brings
// the runtime back; before, the apply failed at once ("nothing was applied: wait until it is gone"),
// and again after any wait.
func TestIntegrationAVolumeDeletedUnderItsRunningRuntimeIsCreatedAgainByOneApply(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	name := "runtime-" + pidOf(r)
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
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	name := "runtime-" + pidOf(r)
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
	pvcs := e.core.PersistentVolumeClaims(e.ns)
	if err := pvcs.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.claimStaysHeld(name, time.Second)
	mounting := e.podsMounting(name)
	if len(mounting) != 2 || !slices.Contains(mounting, other.Name) {
		t.Fatalf("pods mounting the claim: %v, want the runtime's and %s", mounting, other.Name)
	}

	being := regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pods %s", e.ns, name, pvcProtectionFinalizer, strings.Join(mounting, ", ")))
	drift := e.driftOf(e.p, r)
	if len(drift) != 1 || !regexp.MustCompile("^"+being+": apply fails until it is gone$").MatchString(drift[0]) {
		t.Fatalf("drift %q, want [%s: apply fails until it is gone]", drift, being)
	}
	out, err := e.p.Provision(e.ctx, r, args(1, "v1", false))
	wantErr := "^" + being + ": nothing was applied: pod " + regexp.QuoteMeta(other.Name) + " of something other than this runtime mounts it, which the apply does not stop: delete it .*, then plan again$"
	if err == nil || !regexp.MustCompile(wantErr).MatchString(err.Error()) {
		t.Fatalf("Provision: %v, want an error matching %q", err, wantErr)
	}
	t.Logf("refused: %v", err)
	if out != nil {
		t.Errorf("Provision returned %v with its error: nothing was written", out)
	}
	if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 1 {
		t.Errorf("the runtime's Deployment was changed: %v, err %v", dep.Spec.Replicas, err)
	}
}

// A pod of the runtime that its Deployment does not run (its instance label, on a pod made by hand)
// outlives the stop, so the claim never goes: the wait ends with the apply's deadline, and its error
// names the claim and the pod that still held it. The apply wrote the Deployment, so it says where
// the runtime is; once the pod is gone, one plain apply makes the runtime whole.
func TestIntegrationAVolumeTheStopDoesNotFreeEndsTheWaitNamingWhatHoldsIt(t *testing.T) {
	e := newEnv(t, "")
	r := e.newRuntime()
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	name := "runtime-" + pidOf(r)
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stray := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray-" + randomHex(3), Labels: map[string]string{LabelInstance: pidOf(r)}}, Spec: dep.Spec.Template.Spec}
	if _, err := e.core.Pods(e.ns).Create(e.ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.core.Pods(e.ns).Delete(context.Background(), stray.Name, metav1.DeleteOptions{})
	})
	if err := e.core.PersistentVolumeClaims(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.claimStaysHeld(name, time.Second)

	ctx, cancel := context.WithTimeout(e.ctx, 4*time.Second)
	defer cancel()
	out, err := e.p.Provision(ctx, r, args(1, "v1", false))
	wantErr := "^" + regexp.QuoteMeta(fmt.Sprintf("volume %s/%s is being deleted (finalizers: %s), mounted by pod %s: the apply stopped this runtime's pods so that it goes, and waited for it in vain (after ", e.ns, name, pvcProtectionFinalizer, stray.Name)) + `.*the operation's own deadline ended the wait.*\): delete what still mounts it, then apply again$`
	if err == nil || !regexp.MustCompile(wantErr).MatchString(err.Error()) {
		t.Fatalf("Provision: %v, want an error matching %q", err, wantErr)
	}
	t.Logf("the wait ended: %v", err)
	if out == nil || out.State[StateNamespace] != e.ns {
		t.Errorf("Provision returned %v with its error: it wrote the Deployment, so it must say where", out)
	}
	if dep, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 0 {
		t.Errorf("the runtime's Deployment was not stopped: %v, err %v", dep.Spec.Replicas, err)
	}

	if err := e.core.Pods(e.ns).Delete(e.ctx, stray.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.provision(e.p, r, args(1, "v1", false))
	e.awaitReady(r)
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("drift after the apply again: %q", drift)
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
