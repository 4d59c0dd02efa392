package kubernetes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func unschedulableWith(msg string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg,
	}}}}
}

func TestPodFailureReasons(t *testing.T) {
	waiting := func(reason, msg string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "runtime", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}},
		}}}}
	}
	crashLoop := waiting("CrashLoopBackOff", "back-off 40s restarting failed container")
	crashLoop.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: "bad flag --foo"}
	restarting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runtime", RestartCount: 4,
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
	}}}}
	unschedulable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu.",
	}}}}
	waitingForVolume := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
	}}}}
	deleting := waiting("CrashLoopBackOff", "")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}

	cases := []struct {
		name string
		pod  *corev1.Pod
		want string // "" = no failure
	}{
		{"image pull", waiting("ErrImagePull", `manifest for rilldata/rill:nope not found`), "ErrImagePull: manifest for rilldata/rill:nope not found"},
		{"image pull back-off", waiting("ImagePullBackOff", "Back-off pulling image"), "ImagePullBackOff"},
		{"crash loop", crashLoop, "CrashLoopBackOff: back-off 40s restarting failed container; last exit code 2 (Error): bad flag --foo"},
		{"config error", waiting("CreateContainerConfigError", `secret "x" not found`), `CreateContainerConfigError: secret "x" not found`},
		{"invalid image", waiting("InvalidImageName", "couldn't parse image"), "InvalidImageName"},
		{"restarting repeatedly", restarting, "keeps failing (4 restarts); last exit code 137 (OOMKilled)"},
		{"unschedulable", unschedulable, "cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu."},
		{"waiting for its volume", waitingForVolume, ""},
		{"scheduler cache behind the volume", unschedulableWith(`0/1 nodes are available: persistentvolumeclaim "runtime-x" bound to non-existent persistentvolume "". not found`), ""},
		{"scheduler cache behind the claim", unschedulableWith(`0/1 nodes are available: persistentvolumeclaim "runtime-x" not found.`), ""},
		{"volume bound, cpu short", unschedulableWith(`0/1 nodes are available: 1 Insufficient cpu.`), "Insufficient cpu"},
		{"creating", waiting("ContainerCreating", ""), ""},
		{"being deleted", deleting, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := podFailure(tc.pod, time.Now(), 0)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected failure: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// A watch refused for its resourceVersion (too old, or newer than the API server's cache) lists
// again; any other refusal fails the wait.
func TestStaleResourceVersionIsAnsweredByAList(t *testing.T) {
	tooLarge := apierrors.NewTimeoutError("Too large resource version", 1)
	tooLarge.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewResourceExpired("too old resource version: 1 (2000)"), true},
		{apierrors.NewGone("gone"), true},
		{tooLarge, true},
		{apierrors.NewTimeoutError("the server was slow", 1), false},
		{apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "x", errors.New("no")), false},
		{nil, false},
	} {
		if got := staleResourceVersion(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestUnschedulableGracePeriod(t *testing.T) {
	since := time.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu.",
		LastTransitionTime: metav1.Time{Time: since},
	}}}}
	if err := podFailure(pod, since.Add(59*time.Second), time.Minute); err != nil {
		t.Fatalf("within the grace period: %v", err)
	}
	if err := podFailure(pod, since.Add(61*time.Second), time.Minute); err == nil || !strings.Contains(err.Error(), "Insufficient cpu") {
		t.Fatalf("after the grace period: %v", err)
	}
}

func TestDeploymentStatus(t *testing.T) {
	dep := func(replicas int32, gen, observed int64, updated, available, total int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated,
				AvailableReplicas: available, Replicas: total},
		}
	}
	cases := []struct {
		name       string
		dep        *appsv1.Deployment
		hibernated bool
		done       bool
		err        string
	}{
		{"available", dep(1, 2, 2, 1, 1, 1), false, true, ""},
		{"not observed yet", dep(1, 3, 2, 1, 1, 1), false, false, ""},
		{"old pod still available during rollout", dep(1, 2, 2, 0, 1, 1), false, false, ""},
		{"surge pod left", dep(1, 2, 2, 1, 1, 2), false, false, ""},
		{"not available", dep(1, 2, 2, 1, 0, 1), false, false, ""},
		{"hibernated and gone", dep(0, 2, 2, 0, 0, 0), true, true, ""},
		{"hibernated, pod terminating", dep(0, 2, 2, 0, 0, 1), true, false, ""},
		{"zero but not hibernated", dep(0, 2, 2, 0, 0, 0), false, false, "scaled to 0"},
		{"hibernated but replicas in the spec", dep(1, 2, 2, 1, 1, 1), true, false, "is hibernated"},
		{"two replicas, one updated", dep(2, 2, 2, 1, 2, 2), false, false, ""},
		{"two replicas rolled out", dep(2, 2, 2, 2, 2, 2), false, true, ""},
		{"observed a later generation", dep(1, 2, 3, 1, 1, 1), false, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done, status, err := deploymentStatus(tc.dep, tc.hibernated)
			if done != tc.done || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("done %v err %v (status %s)", done, err, status)
			}
			if got, want := RolledOut(tc.dep, tc.hibernated), tc.done && tc.err == ""; got != want {
				t.Fatalf("RolledOut %v, want %v (status %s)", got, want, status)
			}
		})
	}
	d := dep(1, 2, 2, 0, 0, 1)
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "d-1" has timed out progressing.`}}
	if _, _, err := deploymentStatus(d, false); err == nil || !strings.Contains(err.Error(), "progress deadline") {
		t.Fatalf("got %v", err)
	}
	if RolledOut(d, false) {
		t.Fatal("RolledOut past the progress deadline")
	}
}

func TestPingRetriesUntilTheRuntimeAnswers(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/ping" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) < 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"version":"v1"}`))
	}))
	defer srv.Close()
	p := mustProvisioner(t, `{"host": "http://*.x"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.ping(ctx, srv.URL+"/v1/ping", zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Fatalf("want 3 calls, got %d", calls.Load())
	}
}

func TestPingGivesUpAtTheDeadlineWithTheLastAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database locked", http.StatusInternalServerError)
	}))
	defer srv.Close()
	p := mustProvisioner(t, `{"host": "http://*.x"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := p.ping(ctx, srv.URL+"/v1/ping", zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "database locked") {
		t.Fatalf("got %v", err)
	}
}

// An attempt that the wait's end cuts short (the runtime had not answered it yet) is not what the
// error reports: the answer before it is. Before, an attempt begun just before timeout_seconds ran
// out (the backoff doubles, so the fifth of a 4 s wait began about 150 ms before it) turned the
// error into "last: ... context deadline exceeded", losing the runtime's last answer.
func TestPingCutShortByTheDeadlineSaysTheLastAnswer(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		<-r.Context().Done() // no answer before the wait ends: the client gives up on it
	}))
	defer srv.Close()
	p := mustProvisioner(t, `{"host": "http://*.x"}`)
	// The second attempt begins after the first answer and a backoff of 250 ms, and hangs until this
	// deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := p.ping(ctx, srv.URL+"/v1/ping", zap.NewNop())
	if calls.Load() < 2 {
		t.Fatalf("%d requests, want the wait to end during the second: %v", calls.Load(), err)
	}
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "not yet") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the last answer (503: not yet), not the attempt that the deadline cut short", err)
	}
	t.Log(err)
}

// Only a 2xx answer is ready. Rill's admin service (go-retryablehttp) takes any answer but a 5xx or
// a 429 as ready: an ingress controller's 404 for a host it does not route yet, or a 401 from an
// authenticating proxy in front of the runtime (docs/guides/rill-compatibility.md, "kubernetes").
func TestPingTakesOnlyA2xxAnswerAsReady(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusUnauthorized} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "not the runtime", code)
		}))
		p := mustProvisioner(t, `{"host": "http://*.x"}`)
		ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
		err := p.ping(ctx, srv.URL+"/v1/ping", zap.NewNop())
		cancel()
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), http.StatusText(code)) {
			t.Errorf("HTTP %d: got %v, want the wait to end with that answer", code, err)
		}
	}
}

func TestWaitsForVolumeRecognisesTheSchedulersVolumeMessages(t *testing.T) {
	for msg, want := range map[string]bool{
		`0/1 nodes are available: persistentvolumeclaim "runtime-abc" not found. preemption: 0/1 nodes are available`: true,
		`0/2 nodes are available: persistentvolume "pvc-3f1c2a9e" not found. preemption: not eligible`:                true,
		`0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available`:                            false,
	} {
		if got := waitsForVolume(msg); got != want {
			t.Errorf("waitsForVolume(%q) = %v, want %v", msg, got, want)
		}
	}
}

// A wait cut short names the limit that ended it: timeout_seconds when it was that, the operation's
// own deadline (Terraform's timeouts, a cleanup context) when that came first, and an interrupt as
// such; each with the time waited.
func TestWaitLimitNamesTheDeadlineThatEndedTheWait(t *testing.T) {
	t.Run("timeout_seconds", func(t *testing.T) {
		ctx, cancel, limit := newWaitLimit(context.Background(), time.Millisecond, "timeout_seconds=0.001")
		defer cancel()
		<-ctx.Done()
		got := limit.reason()
		if !strings.Contains(got, "timeout_seconds=0.001 ended the wait") || !strings.Contains(got, "after ") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("the operation's deadline", func(t *testing.T) {
		parent, cancelParent := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancelParent()
		ctx, cancel, limit := newWaitLimit(parent, time.Hour, "timeout_seconds=3600")
		defer cancel()
		<-ctx.Done()
		got := limit.reason()
		if !strings.Contains(got, "the operation's own deadline ended the wait") || !strings.Contains(got, "before timeout_seconds=3600") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("an interrupt", func(t *testing.T) {
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel, limit := newWaitLimit(parent, time.Hour, "timeout_seconds=3600")
		defer cancel()
		cancelParent()
		<-ctx.Done()
		if got := limit.reason(); !strings.Contains(got, "the wait was canceled") {
			t.Fatalf("got %q", got)
		}
	})
}

// A caller waiting while another reads the cluster's identity stops at its own deadline, with an
// error that says what it waited for (the lock is held here as the other caller's GET would).
func TestClusterIDWaiterHonoursItsOwnDeadline(t *testing.T) {
	p := mustProvisioner(t, `{"host": "http://*.x"}`)
	p.clusterLock <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // time to begin the wait: a deadline passed before it is no wait (waits.Ended)
	defer cancel()
	_, err := p.clusterID(ctx, &clients{config: &rest.Config{Host: "https://api.test"}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "for another operation of this run to read the identity of the cluster at https://api.test (namespace kube-system), until the operation's deadline") ||
		!strings.HasPrefix(err.Error(), "waited ") {
		t.Fatalf("got %v", err)
	}
}
