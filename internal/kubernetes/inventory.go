package kubernetes

import (
	"context"
	"fmt"
	"regexp"
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

// canonicalResourceID is the form of a UUID-shaped resource ID that the runtime is known by elsewhere
// (Rill's admin service, rill_allocations' import_id, a named runtime's ID): lower case, with dashes.
// An import may give the ID as the objects' names spell it (no dashes) or in upper case; the state
// would then hold another string for the same runtime, which the recovery guide's comparison of
// states with rill_allocations takes for an orphan (and imports a second time). Any other shape of
// ID is returned as it is.
func canonicalResourceID(id, pid string) string {
	if uuidHexRE.MatchString(pid) {
		return resourceIDFor(pid)
	}
	return id
}

var uuidHexRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// resourceIDFor is the inverse of provisionIDFor for the IDs the provider makes (UUIDs): the dashes
// put back. Another shape of ID is returned as it is.
func resourceIDFor(pid string) string {
	if len(pid) != 32 {
		return pid
	}
	return pid[:8] + "-" + pid[8:12] + "-" + pid[12:16] + "-" + pid[16:20] + "-" + pid[20:]
}
