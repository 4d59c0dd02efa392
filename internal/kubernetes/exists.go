package kubernetes

import (
	"context"
	"fmt"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var _ provisioner.ExistenceChecker = (*Provisioner)(nil)

// ResourceExists implements provisioner.ExistenceChecker: whether any object of the runtime at r.ID
// is in the namespace (the runtime's recorded one, else the spec's), answered from the snapshots that
// CheckResource's reads share (snapshotReader) and never with a GET per object: the plan of N new
// named runtimes costs one LIST per kind (paged), none when the command's refresh listed them within
// the snapshots' bounds, and a plan without named creates nothing.
//
// Only the objects a snapshot selects are seen (managed by this provider or by Rill's admin service):
// an object at the ID without that label is not a runtime the apply would adopt anyway (Provision
// reports it as a conflict). A LIST that fails is an error: the caller then warns of nothing rather
// than reading each object.
func (p *Provisioner) ResourceExists(ctx context.Context, r *provisioner.Resource) (string, error) {
	st, pid, names, err := p.resolve(r)
	if err != nil {
		return "", err
	}
	c, err := p.clients.get(ctx)
	if err != nil {
		return "", err
	}
	live, err := p.readLive(ctx, c, st.Namespace, names, p.reads.listed)
	if err != nil {
		return "", err
	}
	if len(live) == 0 {
		return "", fmt.Errorf("%w: none of the objects of runtime %s is in namespace %s", provisioner.ErrResourceNotFound, pid, st.Namespace)
	}
	return "in namespace " + st.Namespace, nil
}
