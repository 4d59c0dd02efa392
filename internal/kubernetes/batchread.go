package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/pager"

	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// snapshotReader serves the object reads of CheckResource from snapshots: one LIST per kind and
// namespace (paged, label-selected: the objects managed by this provider or by Rill's admin service,
// whose runtimes are imported and adopted), shared by every read of a refresh. A refresh of N
// runtimes, five objects each, costs four LISTs (plus one page per pageSize objects) instead of 5 × N
// GETs.
//
// A snapshot answers from the moment its LIST ran, so its staleness is bounded:
//
//   - it serves only reads that keep arriving: none more than idle after the previous one (or after
//     its LIST returned), and none more than maxAge after its LIST started;
//   - any write this process makes in its cluster and namespace (Provision, Deprovision, by any
//     provisioner of the process) drops it: a CheckResource after a Provision never sees the objects
//     from before;
//   - ForgetReads drops every snapshot; the provider calls it whenever Terraform configures it, i.e.
//     at the start of every Terraform command, so no snapshot outlives the command that took it
//     (the provider process and its provisioners outlive commands in the acceptance tests).
//
// Within those bounds a refresh reads the cluster as of one instant after the command started, rather
// than each runtime at its own instant; Terraform's refresh is not atomic either, and an object
// changed behind Terraform's back during a refresh may or may not be seen.
//
// An object the snapshot lacks (a runtime deleted outside Terraform, a label edited by hand, an
// object created after the LIST) is read with a GET by name, whose 404 stays the authority on
// "missing". A LIST that fails (RBAC that allows get but not list, say) falls back to the GETs too,
// and is not retried before the snapshot expires.
type snapshotReader struct {
	idle     time.Duration
	maxAge   time.Duration
	pageSize int64
	// now is the clock of the staleness bounds; replaceable in tests.
	now    func() time.Time
	logger *zap.Logger

	mu    sync.Mutex
	snaps map[batchKey]*snapshot
}

// batchKey is what one snapshot covers: a resource in a namespace.
type batchKey struct {
	namespace string
	gvr       schema.GroupVersionResource
}

// snapshot is one LIST and the reads it answers.
type snapshot struct {
	gen   uint64    // the scope's write generation when the LIST started
	taken time.Time // when the LIST started
	last  time.Time // the last read it served, or when the LIST returned if later
	done  chan struct{}
	// objects by name, and err; set before done is closed.
	objects map[string]*unstructured.Unstructured
	err     error
}

func newSnapshotReader(logger *zap.Logger) *snapshotReader {
	return &snapshotReader{
		logger:   logger,
		idle:     time.Second,
		maxAge:   10 * time.Second,
		pageSize: 500,
		now:      time.Now,
		snaps:    map[batchKey]*snapshot{},
	}
}

// get reads one object. A missing object is an error for which apierrors.IsNotFound holds, from a
// GET. The object is the caller's to modify.
func (b *snapshotReader) get(ctx context.Context, c *clients, key batchKey, name string) (*unstructured.Unstructured, error) {
	s, err := b.filled(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if s.err == nil {
		if obj, ok := s.objects[name]; ok {
			return obj.DeepCopy(), nil
		}
	}
	return c.dynamic.Resource(key.gvr).Namespace(key.namespace).Get(ctx, name, metav1.GetOptions{})
}

// listed reads one object from the snapshot alone: an object the LIST did not return is missing (an
// error for which apierrors.IsNotFound holds), and a LIST that failed is that error. For
// ResourceExists, whose calls must not cost a GET each.
func (b *snapshotReader) listed(ctx context.Context, c *clients, key batchKey, name string) (*unstructured.Unstructured, error) {
	s, err := b.filled(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	if obj, ok := s.objects[name]; ok {
		return obj.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(key.gvr.GroupResource(), name)
}

// filled returns the snapshot that serves a read of key now once its LIST has returned.
func (b *snapshotReader) filled(ctx context.Context, c *clients, key batchKey) (*snapshot, error) {
	s := b.snapshot(ctx, c, key)
	start := time.Now()
	select {
	case <-s.done:
		return s, nil
	case <-ctx.Done():
		return nil, waits.Ended(ctx, start, fmt.Sprintf("the LIST of %s in namespace %s that this command's reads share", key.gvr.Resource, key.namespace))
	}
}

// snapshot returns the snapshot that serves a read of key now: the current one if it is still
// within its bounds, else a new one whose LIST it starts.
func (b *snapshotReader) snapshot(ctx context.Context, c *clients, key batchKey) *snapshot {
	gen := writeGeneration(c.config.Host, key.namespace)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if s := b.snaps[key]; s != nil && s.gen == gen && now.Sub(s.taken) <= b.maxAge && (s.pending() || now.Sub(s.last) <= b.idle) {
		s.last = later(s.last, now)
		return s
	}
	s := &snapshot{gen: gen, taken: now, last: now, done: make(chan struct{})}
	b.snaps[key] = s
	// The LIST outlives the read that started it (it answers the others too), so it keeps the
	// caller's values (loggers) but not its cancellation, and has a deadline of its own.
	go b.fill(context.WithoutCancel(ctx), c, key, s)
	return s
}

func (s *snapshot) pending() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (b *snapshotReader) fill(ctx context.Context, c *clients, key batchKey, s *snapshot) {
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	objects, err := b.list(lctx, c, key)
	if err != nil {
		b.logger.Debug("listing failed; reading each object with a GET instead",
			zap.String("namespace", key.namespace), zap.String("resource", key.gvr.Resource), zap.Error(err))
	}
	b.mu.Lock()
	s.objects, s.err = objects, err
	s.last = later(s.last, b.now())
	b.mu.Unlock()
	close(s.done)
}

// list returns the managed objects of a resource in a namespace by name, paging through the LIST.
// Their managed fields are dropped but for the entries that own a field of an owned list or the slots
// annotation beside this provisioner's applies (checkedOwners, usually none), which CheckResource's
// list drift and observed slots read: the rest are most of an object's size.
func (b *snapshotReader) list(ctx context.Context, c *clients, key batchKey) (map[string]*unstructured.Unstructured, error) {
	sel, err := managedSelector()
	if err != nil {
		return nil, err
	}
	ri := c.dynamic.Resource(key.gvr).Namespace(key.namespace)
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return ri.List(ctx, opts)
	})
	p.PageSize = b.pageSize
	out := map[string]*unstructured.Unstructured{}
	err = p.EachListItem(ctx, metav1.ListOptions{LabelSelector: sel}, func(obj runtime.Object) error {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("unexpected item type %T", obj)
		}
		u = u.DeepCopy()
		u.SetManagedFields(checkedOwners(u))
		out[u.GetName()] = u
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s in namespace %s: %w", key.gvr.Resource, key.namespace, err)
	}
	return out, nil
}

// forget drops every snapshot.
func (b *snapshotReader) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.snaps)
}

// managedSelector selects the objects of this provider and of Rill's admin service (not yet adopted).
func managedSelector() (string, error) {
	managed, err := labels.NewRequirement(LabelManagedBy, selection.In, []string{ManagedByValue, RillManagedByValue})
	if err != nil {
		return "", err
	}
	return labels.NewSelector().Add(*managed).String(), nil
}

// writes counts the writes this process made per cluster (API server URL) and namespace: a snapshot
// taken before one of them is not used after it, whichever provisioner made it.
var writes = struct {
	sync.Mutex
	gen map[writeScope]uint64
}{gen: map[writeScope]uint64{}}

type writeScope struct{ host, namespace string }

func writeGeneration(host, namespace string) uint64 {
	writes.Lock()
	defer writes.Unlock()
	return writes.gen[writeScope{host, namespace}]
}

// wrote records a write (or an attempt: it may have changed something before it failed) in a
// namespace of the clients' cluster. Provision and Deprovision call it when they return.
func wrote(c *clients, namespace string) {
	writes.Lock()
	defer writes.Unlock()
	writes.gen[writeScope{c.config.Host, namespace}]++
}
