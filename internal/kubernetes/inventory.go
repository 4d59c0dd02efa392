package kubernetes

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var _ provisioner.Inventory = (*Provisioner)(nil)

// Allocated implements provisioner.Inventory: the runtimes in the spec's namespace, one per Deployment
// this provider applied (label app.kubernetes.io/managed-by), owned by this provisioner or by none
// recorded (applied before owners were), by creation time. What a killed apply left of an unnamed
// runtime shows up here, to be imported (docs/guides/recovering-orphaned-runtimes.md).
func (p *Provisioner) Allocated(ctx context.Context) ([]provisioner.Allocated, error) {
	c, err := p.clients.get(ctx)
	if err != nil {
		return nil, err
	}
	ns := p.spec.Namespace
	list, err := c.apps.Resource(deploymentsResource).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedByValue})
	if err != nil {
		return nil, fmt.Errorf("listing the runtimes' Deployments in namespace %s: %w", ns, err)
	}
	owner := p.NameInSet()
	out := []provisioner.Allocated{}
	for _, d := range list.Items {
		pid, annotations := d.GetLabels()[LabelInstance], d.GetAnnotations()
		if pid == "" || (annotations[AnnotationProvisioner] != "" && annotations[AnnotationProvisioner] != owner) {
			continue
		}
		slots, _ := strconv.Atoi(annotations[AnnotationSlots])
		out = append(out, provisioner.Allocated{
			ID: resourceIDFor(pid), Type: provisioner.ResourceTypeRuntime, Name: annotations[AnnotationName],
			Provisioner: owner, Host: p.spec.RuntimeURL(pid), Slots: slots, CreatedAt: d.GetCreationTimestamp().UTC(),
			Environment: annotations[AnnotationEnvironment], Annotations: recordedProjectAnnotations(annotations),
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// resourceIDFor is the inverse of provisionIDFor for the IDs the provider makes (UUIDs): the dashes
// put back. Another shape of ID is returned as it is.
func resourceIDFor(pid string) string {
	if len(pid) != 32 {
		return pid
	}
	return pid[:8] + "-" + pid[8:12] + "-" + pid[12:16] + "-" + pid[16:20] + "-" + pid[20:]
}
