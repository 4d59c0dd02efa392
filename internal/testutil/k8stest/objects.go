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
	deleteAndWait(t, ctx, dyn, gvr, namespace, name, metav1.DeletePropagationBackground)
}

// DeleteWithDependentsAndWait deletes an object in the foreground and waits, at most a minute, until
// the API server no longer has it: the garbage collector deletes its dependents first (a
// Deployment's ReplicaSets, and their pods), so none is left when it returns. A Deployment deleted in
// the background may leave a pod that its ReplicaSet creates after the delete, if the ReplicaSet
// made it just before: a wait for no such pod can end before that pod exists.
func DeleteWithDependentsAndWait(t testing.TB, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string) {
	t.Helper()
	deleteAndWait(t, ctx, dyn, gvr, namespace, name, metav1.DeletePropagationForeground)
}

func deleteAndWait(t testing.TB, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	ri := dyn.Resource(gvr).Namespace(namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("deleting %s %s/%s by hand: %v", gvr.Resource, namespace, name, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s %s/%s still there a minute after deleting it (%s propagation): %v", gvr.Resource, namespace, name, policy, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
