package k8stest

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// DeleteAndWait deletes an object as a user would by hand (background propagation) and waits, at
// most a minute, until the API server no longer has it.
func DeleteAndWait(t testing.TB, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string) {
	t.Helper()
	bg := metav1.DeletePropagationBackground
	ri := dyn.Resource(gvr).Namespace(namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatalf("deleting %s %s/%s by hand: %v", gvr.Resource, namespace, name, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s %s/%s still there after deleting it (%v)", gvr.Resource, namespace, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
