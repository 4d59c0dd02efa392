package static

import (
	"context"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var _ provisioner.ExistenceChecker = (*Provisioner)(nil)

// ResourceExists implements provisioner.ExistenceChecker with CheckResource, which reads the one
// ledger row at the ID (a ledger that does not exist holds nothing): where is the host it is
// allocated on.
func (p *Provisioner) ResourceExists(ctx context.Context, r *provisioner.Resource) (string, error) {
	res, err := p.CheckResource(ctx, r, nil)
	if err != nil {
		return "", err
	}
	if cfg, err := provisioner.NewRuntimeConfig(res.Config); err == nil && cfg.Host != "" {
		return "on host " + cfg.Host, nil
	}
	return "in the ledger", nil
}
