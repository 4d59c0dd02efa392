package provisioner

import (
	"context"
	"errors"
)

// ErrCannotCreate is wrapped by a CreateChecker's error when the backend answered and, as it stands,
// cannot take a new resource at all (it lacks a capability: a ClickHouse server that cannot manage
// users by SQL), as opposed to a check that could not be made (an unreachable server). An apply would
// fail with the same reason, so the Terraform layer fails the plan.
var ErrCannotCreate = errors.New("the provisioner's backend cannot create this resource")

// CreateChecker is implemented by provisioners that can tell before an apply, by reads alone, that
// every Provision of a new resource of type rt would fail. An addition to Rill's design. The
// Terraform layer calls it at plan time for a resource to be created (beside CapacityReporter's
// check, through the same per-command reads), bounded by a timeout of its own.
type CreateChecker interface {
	// CheckCreate writes nothing anywhere. It returns nil when a create may proceed, an error
	// wrapping ErrCannotCreate (see CannotCreate) when the backend answered and refuses, with a
	// message that names the backend without credentials and says what is missing, and any other
	// error when it could not tell (the backend could not be reached in time).
	CheckCreate(ctx context.Context, rt ResourceType) error
}

// CannotCreate returns err marked as ErrCannotCreate (errors.Is), its message unchanged.
func CannotCreate(err error) error {
	if err == nil {
		return nil
	}
	return cannotCreate{err}
}

type cannotCreate struct{ error }

func (e cannotCreate) Unwrap() []error { return []error{e.error, ErrCannotCreate} }

// ProvisionChecker is implemented by provisioners that can tell at plan time, from a resource's own
// arguments and options and without reading or writing anything outside the process, that its
// Provision would fail on them, or what it would warn of (the kubernetes provisioner renders its
// templates with the runtime's data, as its Provision does, and applies nothing). An addition to
// Rill's design, whose admin service renders templates only when it provisions. The Terraform layer
// calls it at plan time for a resource to be created or updated, when every argument is known.
type ProvisionChecker interface {
	// CheckProvision returns the error that Provision(ctx, r, opts) would fail with before it
	// wrote anything, or the warnings it would report, as far as the arguments alone decide them. r.ID
	// is "" when it is not known yet (a resource whose ID the create makes); r.State is the state a
	// Provision would be given (nil for a create).
	CheckProvision(r *Resource, opts *ResourceOptions) (warnings []string, err error)
}
