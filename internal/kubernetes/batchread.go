package kubernetes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/pager"
)

// batchReader serves the object reads of concurrent CheckResource calls with one LIST per kind and
// namespace instead of one GET per object. Terraform refreshes up to ten resources at once (its
// -parallelism), so a refresh of 50 runtimes, five objects each, takes a few dozen LISTs instead of
// 250 GETs.
//
// Reads are never served from the past: a call joins the next round that has not started yet, and a
// round's LIST starts after every call in it was made. So a CheckResource sees the cluster as it was
// at some point after it was called, exactly as with a GET, and there is no cache to invalidate
// (Provision, Deprovision, a kubectl edit between two plans: none of them can be hidden by it).
//
// A round lists only the objects of its callers (label selector instance in (...), managed-by ours or
// Rill's admin service's, whose runtimes are imported and adopted),
// so its cost does not grow with the rest of the namespace, and it pages through the result.
// Anything the LIST does not return (a label edited by hand, say) is read with a GET by name, whose
// 404 is the authority on "missing". A LIST that fails (RBAC that allows get but not list, say)
// falls back to the GETs as well.
type batchReader struct {
	// linger is how long a round waits for more callers before it lists.
	linger time.Duration
	// maxInstances bounds the instances in one label selector (the request URL grows with them).
	maxInstances int
	// pageSize is the LIST page size.
	pageSize int64
	logger   *zap.Logger

	mu     sync.Mutex
	queues map[batchKey]*batchQueue
}

// batchKey is what one LIST can cover: a resource in a namespace.
type batchKey struct {
	namespace string
	gvr       schema.GroupVersionResource
}

type batchQueue struct {
	next    *batchRound // collecting callers; nil when none waits
	running bool        // a goroutine is serving this queue
}

// batchRound is one LIST and the callers it answers.
type batchRound struct {
	instances map[string]struct{}
	done      chan struct{}
	// objects by name; set before done is closed.
	objects map[string]*unstructured.Unstructured
	err     error
}

func newBatchReader(logger *zap.Logger) *batchReader {
	return &batchReader{
		logger:       logger,
		linger:       2 * time.Millisecond,
		maxInstances: 100,
		pageSize:     500,
		queues:       map[batchKey]*batchQueue{},
	}
}

// get reads one object of one runtime (instance is its LabelInstance value). A missing object is an
// error for which apierrors.IsNotFound holds, from a GET.
func (b *batchReader) get(ctx context.Context, c *clients, key batchKey, instance, name string) (*unstructured.Unstructured, error) {
	if len(validation.IsValidLabelValue(instance)) == 0 { // else no selector can name it: GET
		round := b.join(ctx, c, key, instance)
		select {
		case <-round.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if round.err == nil {
			if obj, ok := round.objects[name]; ok {
				return obj, nil
			}
		}
	}
	return c.dynamic.Resource(key.gvr).Namespace(key.namespace).Get(ctx, name, metav1.GetOptions{})
}

// join adds instance to the round that will start next for key, starting a server for the queue if
// none runs.
func (b *batchReader) join(ctx context.Context, c *clients, key batchKey, instance string) *batchRound {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[key]
	if q == nil {
		q = &batchQueue{}
		b.queues[key] = q
	}
	if q.next == nil {
		q.next = &batchRound{instances: map[string]struct{}{}, done: make(chan struct{})}
	}
	round := q.next
	round.instances[instance] = struct{}{}
	if !q.running {
		q.running = true
		// The server outlives the caller that started it (it answers the others too), so it keeps
		// the caller's values (loggers) but not its cancellation, and has a deadline of its own.
		go b.serve(context.WithoutCancel(ctx), c, key, q)
	}
	return round
}

// serve runs rounds for one queue until no caller waits.
func (b *batchReader) serve(ctx context.Context, c *clients, key batchKey, q *batchQueue) {
	for {
		if b.linger > 0 {
			time.Sleep(b.linger)
		}
		b.mu.Lock()
		round := q.next
		q.next = nil
		if round == nil {
			q.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		round.objects, round.err = b.list(lctx, c, key, slices.Sorted(maps.Keys(round.instances)))
		cancel()
		if round.err != nil {
			b.logger.Debug("batched read failed; reading each object with a GET instead",
				zap.String("namespace", key.namespace), zap.String("resource", key.gvr.Resource), zap.Error(round.err))
		}
		close(round.done)
	}
}

// list returns the managed objects of the given instances by name, paging through each LIST.
func (b *batchReader) list(ctx context.Context, c *clients, key batchKey, instances []string) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	ri := c.dynamic.Resource(key.gvr).Namespace(key.namespace)
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return ri.List(ctx, opts)
	})
	p.PageSize = b.pageSize
	for start := 0; start < len(instances); start += b.maxInstances {
		chunk := instances[start:min(start+b.maxInstances, len(instances))]
		sel, err := instanceRequirement(chunk)
		if err != nil {
			return nil, err
		}
		err = p.EachListItem(ctx, metav1.ListOptions{LabelSelector: sel}, func(obj runtime.Object) error {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return fmt.Errorf("listing %s: unexpected item type %T", key.gvr.Resource, obj)
			}
			out[u.GetName()] = u.DeepCopy()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s in namespace %s: %w", key.gvr.Resource, key.namespace, err)
		}
	}
	return out, nil
}

// instanceRequirement is the label selector of the objects of the given instances (valid label
// values: get sends the others to GETs), ours or Rill's admin service's (not yet adopted).
func instanceRequirement(instances []string) (string, error) {
	managed, err := labels.NewRequirement(LabelManagedBy, selection.In, []string{ManagedByValue, RillManagedByValue})
	if err != nil {
		return "", err
	}
	inst, err := labels.NewRequirement(LabelInstance, selection.In, instances)
	if err != nil {
		return "", err
	}
	return labels.NewSelector().Add(*managed, *inst).String(), nil
}
