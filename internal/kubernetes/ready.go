package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// AwaitReady watches the runtime's Deployment until it is rolled out (every replica updated and
// available, or scaled to zero when hibernated), failing fast with a pod's own reason when a pod
// cannot start (image pull errors, crash loops, bad config, unschedulable). The pods are watched
// once the rollout has taken podWatchDelay (see rolloutWatch.podsDue). Then, unless the probe is
// switched off or the runtime is hibernated, it GETs <host><ping_path> until it answers 2xx. The
// whole wait is bounded by timeout_seconds and by ctx.
func (p *Provisioner) AwaitReady(ctx context.Context, r *provisioner.Resource) error {
	st, pid, names, err := p.resolve(r)
	if err != nil {
		return err
	}
	ctx, cancel, limit := p.specWaitLimit(ctx)
	defer cancel()
	c, err := p.clients.get(ctx)
	if err != nil {
		return err
	}
	log := p.logger.With(zap.String("resource_id", r.ID), zap.String("namespace", st.Namespace), zap.String("deployment", names.Deployment))
	rw := &rolloutWatch{c: c, ns: st.Namespace, name: names.Deployment, hibernated: st.Hibernated, log: log,
		unschedulableGrace: time.Duration(p.spec.UnschedulableGraceSeconds) * time.Second,
		applied:            p.applied.take(st.Namespace, names.Deployment)}
	start := time.Now()
	podsDue := time.NewTimer(podWatchAfter(ctx, start, p.podWatchDelay))
	defer podsDue.Stop()
	rw.podsDue = podsDue.C
	if err := rw.run(ctx); err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("runtime %s is not ready: %s: %s", pid, limit.reason(), rw.describe())
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("waiting for runtime %s was canceled: %s", pid, rw.describe())
		}
		return err
	}
	log.Info("deployment rolled out", zap.Duration("after", time.Since(start)))
	if st.Hibernated || !p.spec.PingEnabled() {
		return nil
	}
	url := p.spec.RuntimeURL(pid) + *p.spec.PingPath
	if err := p.ping(ctx, url, log); err != nil {
		return fmt.Errorf("runtime %s: the deployment is available but %s does not answer (%s): %w", pid, url, limit.reason(), err)
	}
	log.Info("runtime ready", zap.Duration("after", time.Since(start)))
	return nil
}

// podWatchDelay is how long a rollout may take before AwaitReady reads its pods and ReplicaSets.
// Most rollouts end sooner (a Create on the benchmark's control plane: p95 3.1 s with ten at a time),
// and then cost a LIST and a WATCH of the Deployment alone instead of five requests, which is what
// `kubectl rollout status` sends too. A pod that cannot start is rarely final sooner either: the
// kubelet's first back-off after a failed image pull or a crash is 10 s. The wait's diagnostics are
// those of before, at most this much later.
const podWatchDelay = 5 * time.Second

// podWatchAfter is when, after start, a wait bounded by ctx reads the pods: after delay, or at half
// the time left if that is sooner, so that a wait that times out says what its pods were doing.
func podWatchAfter(ctx context.Context, start time.Time, delay time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		delay = min(delay, dl.Sub(start)/2)
	}
	return max(delay, 0)
}

// appliedTTL is how long a Deployment Provision applied is kept for an AwaitReady (appliedDeployments).
const appliedTTL = time.Minute

// appliedDeployments hands the Deployment that Provision's apply returned to the AwaitReady that
// follows it (rill_runtime's Create and Update call one after the other), so that the wait starts
// from that object and watches from its resourceVersion: the watch replays every change after the
// apply, which is what a LIST before the watch gave, for one request fewer. An entry is taken once
// and kept at most appliedTTL (a hibernated runtime is not waited for); a wait without one LISTs.
type appliedDeployments struct {
	mu sync.Mutex
	m  map[string]appliedDeployment // by namespace/name
}

type appliedDeployment struct {
	dep *unstructured.Unstructured
	at  time.Time
}

func (a *appliedDeployments) put(u *unstructured.Unstructured) {
	if u == nil || u.GetResourceVersion() == "" {
		return
	}
	u.SetManagedFields(nil) // most of its size, and not read
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, e := range a.m {
		if now.Sub(e.at) > appliedTTL {
			delete(a.m, k)
		}
	}
	if a.m == nil {
		a.m = map[string]appliedDeployment{}
	}
	a.m[u.GetNamespace()+"/"+u.GetName()] = appliedDeployment{dep: u, at: now}
}

// take returns the Deployment applied last at namespace/name, if within appliedTTL, and forgets it.
func (a *appliedDeployments) take(ns, name string) *unstructured.Unstructured {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.m[ns+"/"+name]
	delete(a.m, ns+"/"+name)
	if !ok || time.Since(e.at) > appliedTTL {
		return nil
	}
	return e.dep
}

// rolloutWatch follows one Deployment and, once the rollout is slow (podsDue), its current pods.
type rolloutWatch struct {
	c          *clients
	ns, name   string
	hibernated bool
	log        *zap.Logger
	// unschedulableGrace is how long a pod may stay unschedulable before the wait fails.
	unschedulableGrace time.Duration
	// podsDue fires when the pods are to be watched (podWatchAfter); nil once it has.
	podsDue <-chan time.Time
	// applied is the Deployment as Provision's apply returned it (appliedDeployments): the first
	// watch starts from it instead of a LIST. nil once used.
	applied *unstructured.Unstructured

	dep          *appsv1.Deployment
	pods         map[string]*corev1.Pod
	podsWatched  bool   // podsDue fired: the pods are watched (from every list on)
	podsDisabled bool   // no permission to read pods: rely on the Deployment alone
	revision     string // deployment.kubernetes.io/revision the hash below belongs to
	hash         string // pod-template-hash of the current ReplicaSet; "" while unknown
	hashChecked  time.Time
	lastStatus   string
}

const revisionAnnotation = "deployment.kubernetes.io/revision"

// run returns nil when the rollout is complete, a descriptive error when it cannot complete, or
// ctx's error.
func (w *rolloutWatch) run(ctx context.Context) error {
	backoff := 200 * time.Millisecond
	for {
		err := w.listAndWatch(ctx)
		if errors.Is(err, errDone) {
			return nil
		}
		if err != nil && !errors.Is(err, errRelist) {
			return err
		}
		// The watch ended (server timeout, compaction, connection loss): list again after a pause.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

var (
	errDone   = errors.New("done")
	errRelist = errors.New("relist")
)

func (w *rolloutWatch) listAndWatch(ctx context.Context) error {
	deps := w.c.apps.Resource(deploymentsResource).Namespace(w.ns)
	from, rv, err := w.list(ctx)
	if err != nil {
		return err
	}
	if w.dep, err = fromUnstructured[appsv1.Deployment](from); err != nil {
		return err
	}
	if done, err := w.evaluate(); done || err != nil {
		return err
	}

	var podEvents <-chan watch.Event
	stopPods := func() {}
	defer func() { stopPods() }()
	startPods := func() error {
		pw, err := w.startPods(ctx)
		if err != nil || pw == nil {
			return err
		}
		stopPods, podEvents = pw.Stop, pw.ResultChan()
		_, err = w.evaluate()
		return err
	}
	if w.podsWatched {
		if err := startPods(); err != nil {
			return err
		}
	}

	dw, err := deps.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", w.name).String(),
		ResourceVersion: rv,
	})
	if staleResourceVersion(err) {
		w.log.Debug("cannot watch from the resourceVersion read; listing again", zap.Error(err))
		return errRelist
	}
	if err != nil {
		return w.apiError(ctx, err)
	}
	defer dw.Stop()
	// Re-evaluate now and then without events too: grace periods expire with time alone.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.podsDue:
			w.podsDue, w.podsWatched = nil, true
			w.log.Debug("the rollout is slow: watching its pods too")
			if err := startPods(); err != nil {
				return err
			}
		case <-tick.C:
			if w.hash == "" {
				w.refreshHash(ctx, false)
			}
		case ev, ok := <-dw.ResultChan():
			if !ok {
				return errRelist
			}
			switch ev.Type {
			case watch.Error:
				return errRelist
			case watch.Deleted:
				return fmt.Errorf("deployment %s/%s was deleted while waiting for it", w.ns, w.name)
			case watch.Added, watch.Modified:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					if w.dep, err = fromUnstructured[appsv1.Deployment](u); err != nil {
						return err
					}
					w.refreshHash(ctx, false)
				}
			}
		case ev, ok := <-podEvents:
			if !ok {
				return errRelist
			}
			switch ev.Type {
			case watch.Error:
				return errRelist
			case watch.Deleted:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					delete(w.pods, u.GetName())
				}
			case watch.Added, watch.Modified:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					pod, err := fromUnstructured[corev1.Pod](u)
					if err != nil {
						return err
					}
					w.pods[pod.Name] = pod
					if w.hash == "" {
						w.refreshHash(ctx, false)
					}
				}
			}
		}
		if done, err := w.evaluate(); done || err != nil {
			return err
		}
	}
}

// list returns the Deployment to start from and the resourceVersion to watch from: the one Provision
// applied and its own (once), else what a LIST reads and the LIST's.
func (w *rolloutWatch) list(ctx context.Context) (*unstructured.Unstructured, string, error) {
	if u := w.applied; u != nil {
		w.applied = nil
		return u, u.GetResourceVersion(), nil
	}
	list, err := w.c.apps.Resource(deploymentsResource).Namespace(w.ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", w.name).String()})
	if err != nil {
		return nil, "", w.apiError(ctx, err)
	}
	if len(list.Items) == 0 {
		return nil, "", fmt.Errorf("deployment %s/%s does not exist (deleted while waiting?)", w.ns, w.name)
	}
	return &list.Items[0], list.GetResourceVersion(), nil
}

// staleResourceVersion reports whether a watch was refused for its resourceVersion: older than the
// API server keeps (410 Expired, Gone), or newer than its cache has seen yet (Too large resource
// version). Both are answered by a LIST, as client-go's reflector does.
func staleResourceVersion(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge))
}

// startPods finds the current ReplicaSet and starts watching the Deployment's pods (watchPods). It
// returns a nil watch when the credentials may not read pods.
func (w *rolloutWatch) startPods(ctx context.Context) (watch.Interface, error) {
	if w.podsDisabled {
		return nil, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(w.dep.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has an invalid selector: %w", w.ns, w.name, err)
	}
	w.refreshHash(ctx, true)
	return w.watchPods(ctx, selector)
}

// watchPods lists the Deployment's pods and opens a watch on them. It returns a nil watch (and
// disables pod checks) when the credentials may not read pods.
func (w *rolloutWatch) watchPods(ctx context.Context, selector labels.Selector) (watch.Interface, error) {
	pods := w.c.core.Resource(podsResource).Namespace(w.ns)
	opts := metav1.ListOptions{LabelSelector: selector.String()}
	list, err := pods.List(ctx, opts)
	if apierrors.IsForbidden(err) {
		w.log.Warn("cannot read pods; waiting on the Deployment alone, without failing fast on pod errors", zap.Error(err))
		w.podsDisabled = true
		return nil, nil
	}
	if err != nil {
		return nil, w.apiError(ctx, err)
	}
	w.pods = make(map[string]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pod, err := fromUnstructured[corev1.Pod](&list.Items[i])
		if err != nil {
			return nil, err
		}
		w.pods[pod.Name] = pod
	}
	opts.ResourceVersion = list.GetResourceVersion()
	pw, err := pods.Watch(ctx, opts)
	if err != nil {
		return nil, w.apiError(ctx, err)
	}
	return pw, nil
}

func (w *rolloutWatch) apiError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("watching deployment %s/%s: %w", w.ns, w.name, err)
}

// refreshHash finds the pod-template-hash of the Deployment's current ReplicaSet, so that failures
// of pods of an older revision (being replaced) do not fail the wait. Rate-limited unless forced;
// nothing while the pods are not watched.
func (w *rolloutWatch) refreshHash(ctx context.Context, force bool) {
	if !w.podsWatched {
		return
	}
	rev := w.dep.Annotations[revisionAnnotation]
	if rev == w.revision && w.hash != "" {
		return
	}
	if !force && rev == w.revision && time.Since(w.hashChecked) < time.Second {
		return
	}
	w.revision, w.hash, w.hashChecked = rev, "", time.Now()
	if rev == "" || w.podsDisabled {
		return
	}
	selector, err := metav1.LabelSelectorAsSelector(w.dep.Spec.Selector)
	if err != nil {
		return
	}
	rsList, err := w.c.apps.Resource(replicaSetsResource).Namespace(w.ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		w.log.Debug("cannot list ReplicaSets; pod checks wait until the current one is known", zap.Error(err))
		return
	}
	for i := range rsList.Items {
		rs := &rsList.Items[i]
		if !metav1.IsControlledBy(rs, w.dep) || rs.GetAnnotations()[revisionAnnotation] != rev {
			continue
		}
		w.hash = rs.GetLabels()[appsv1.DefaultDeploymentUniqueLabelKey]
	}
}

// currentPods returns the pods of the current revision, sorted by name.
func (w *rolloutWatch) currentPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range w.pods {
		if w.hash == "" || pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != w.hash || pod.DeletionTimestamp != nil {
			continue
		}
		out = append(out, pod)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// evaluate reports whether the rollout is complete, or fails with the reason it cannot complete.
func (w *rolloutWatch) evaluate() (bool, error) {
	done, status, err := deploymentStatus(w.dep, w.hibernated)
	if err != nil {
		return false, err
	}
	if done {
		return true, errDone
	}
	for _, pod := range w.currentPods() {
		if err := podFailure(pod, time.Now(), w.unschedulableGrace); err != nil {
			return false, fmt.Errorf("runtime deployment %s/%s cannot become ready: %w", w.ns, w.name, err)
		}
	}
	if status != w.lastStatus {
		w.log.Info("waiting for deployment", zap.String("status", status))
		w.lastStatus = status
	}
	return false, nil
}

// describe summarizes where the rollout stands, for timeout errors.
func (w *rolloutWatch) describe() string {
	if w.dep == nil {
		return fmt.Sprintf("deployment %s/%s was not read yet", w.ns, w.name)
	}
	_, status, _ := deploymentStatus(w.dep, w.hibernated)
	parts := []string{fmt.Sprintf("deployment %s/%s: %s", w.ns, w.name, status)}
	for _, pod := range w.currentPods() {
		parts = append(parts, "pod "+pod.Name+": "+podSummary(pod))
	}
	return strings.Join(parts, "; ")
}

// RolledOut is the rollout-complete rule AwaitReady waits for, the one home of it: the controller
// has seen the latest spec (observedGeneration >= generation) and every replica is updated and
// available with no surge pod left (updated = available = total = spec.replicas); a hibernated
// runtime's Deployment is rolled out once no pod is left. A Deployment whose replica count
// contradicts hibernated, or whose progress deadline passed, is not. Tests and benchmarks that
// check a Deployment the way the provisioner does call this rather than restating it.
func RolledOut(dep *appsv1.Deployment, hibernated bool) bool {
	done, _, err := deploymentStatus(dep, hibernated)
	return done && err == nil
}

// deploymentStatus decides whether a Deployment is rolled out. hibernated means scaled to zero.
func deploymentStatus(dep *appsv1.Deployment, hibernated bool) (done bool, status string, err error) {
	replicas := int32(1)
	if dep.Spec.Replicas != nil {
		replicas = *dep.Spec.Replicas
	}
	s := dep.Status
	status = fmt.Sprintf("%d of %d replicas updated, %d available, %d total (generation %d, observed %d)",
		s.UpdatedReplicas, replicas, s.AvailableReplicas, s.Replicas, dep.Generation, s.ObservedGeneration)
	if !hibernated && replicas == 0 {
		return false, status, fmt.Errorf("deployment %s/%s is scaled to 0 replicas but the runtime is not hibernated", dep.Namespace, dep.Name)
	}
	if hibernated && replicas != 0 {
		return false, status, fmt.Errorf("deployment %s/%s has %d replicas but the runtime is hibernated", dep.Namespace, dep.Name, replicas)
	}
	observed := s.ObservedGeneration >= dep.Generation
	for _, cond := range s.Conditions {
		if observed && cond.Type == appsv1.DeploymentProgressing && cond.Status == corev1.ConditionFalse && cond.Reason == "ProgressDeadlineExceeded" {
			return false, status, fmt.Errorf("deployment %s/%s exceeded its progress deadline: %s", dep.Namespace, dep.Name, cond.Message)
		}
	}
	if !observed {
		return false, status, nil
	}
	if hibernated {
		return s.Replicas == 0, status, nil
	}
	return s.UpdatedReplicas == replicas && s.AvailableReplicas == replicas && s.Replicas == replicas, status, nil
}

// Container waiting reasons that will not resolve by waiting.
var fatalWaitingReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"CrashLoopBackOff":           true,
	"CreateContainerConfigError": true,
	"InvalidImageName":           true,
}

// restartsBeforeFailing is how many restarts after an error exit count as "terminated repeatedly".
const restartsBeforeFailing = 3

// podFailure returns the reason a pod cannot become ready, or nil while it may still. A pod that is
// unschedulable fails once it has been so for unschedulableGrace, unless it only waits for its
// volume to be bound (a provisioner at work).
func podFailure(pod *corev1.Pod, now time.Time, unschedulableGrace time.Duration) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			if waitsForVolume(cond.Message) || now.Sub(cond.LastTransitionTime.Time) < unschedulableGrace {
				return nil
			}
			return fmt.Errorf("pod %s cannot be scheduled: %s", pod.Name, orDefault(cond.Message, "Unschedulable"))
		}
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && fatalWaitingReasons[w.Reason] {
			msg := fmt.Sprintf("pod %s: container %s is %s", pod.Name, cs.Name, w.Reason)
			if w.Message != "" {
				msg += ": " + w.Message
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				msg += "; " + terminationSummary(t)
			}
			return errors.New(msg)
		}
		if cs.RestartCount >= restartsBeforeFailing {
			t := cs.State.Terminated
			if t == nil {
				t = cs.LastTerminationState.Terminated
			}
			if t != nil && t.ExitCode != 0 {
				return fmt.Errorf("pod %s: container %s keeps failing (%d restarts); %s", pod.Name, cs.Name, cs.RestartCount, terminationSummary(t))
			}
		}
	}
	return nil
}

// volumeWaitMessages are scheduler messages that mean "the volume is being provisioned or bound, or
// the scheduler's cache has not seen it yet": they resolve by waiting, unlike a lack of resources.
var volumeWaitMessages = []string{
	"unbound immediate PersistentVolumeClaims",
	"bound to non-existent persistentvolume",
	"waiting for ephemeral volume controller",
}

// A claim, or the volume bound to a new claim, that the scheduler's cache has not seen yet: both pass
// as soon as the volume controller and the informers catch up.
var pvcNotFoundRE = regexp.MustCompile(`persistentvolume(claim)? "[^"]*" not found`)

func waitsForVolume(msg string) bool {
	for _, m := range volumeWaitMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return pvcNotFoundRE.MatchString(msg)
}

func terminationSummary(t *corev1.ContainerStateTerminated) string {
	s := fmt.Sprintf("last exit code %d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if m := strings.TrimSpace(t.Message); m != "" {
		if len(m) > 500 {
			m = "…" + m[len(m)-500:]
		}
		s += ": " + m
	}
	return s
}

// podSummary describes a pod in a few words: phase and the first notable container state.
func podSummary(pod *corev1.Pod) string {
	s := string(pod.Status.Phase)
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			return s + ", not scheduled: " + orDefault(cond.Message, cond.Reason)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			return s + ", container " + cs.Name + " waiting: " + orDefault(cs.State.Waiting.Reason, "unknown reason")
		case cs.State.Running != nil && !cs.Ready:
			return s + ", container " + cs.Name + " running but not ready"
		case cs.State.Terminated != nil:
			return s + ", container " + cs.Name + " terminated: " + terminationSummary(cs.State.Terminated)
		}
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ping GETs url until it answers 2xx, with backoff, until ctx ends. Its error gives the last
// attempt that ended on its own (an answer, a refused connection), not one that ctx's end cut short:
// as the backoff doubles, an attempt may begin just before timeout_seconds runs out, and "context
// deadline exceeded" said nothing of what the runtime had answered.
func (p *Provisioner) ping(ctx context.Context, url string, log *zap.Logger) error {
	backoff := 250 * time.Millisecond
	var last error // of the last attempt that ended on its own, or of the first if ctx cut it short
	for attempt := 1; ; attempt++ {
		err := p.pingOnce(ctx, url)
		if err == nil {
			return nil
		}
		cutShort := ctx.Err() != nil && errors.Is(err, ctx.Err())
		if !cutShort || last == nil {
			last = err
		}
		log.Debug("runtime not answering yet", zap.String("url", url), zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-ctx.Done():
			if cutShort && last != err {
				return fmt.Errorf("%d attempts, the last cut short by the wait's end; the one before: %w", attempt, last)
			}
			return fmt.Errorf("%d attempts, last: %w", attempt, last)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (p *Provisioner) pingOnce(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
