package provisioner

import "context"

// ExistenceChecker is implemented by provisioners that can tell, by reads alone and at a cost that does
// not grow with the number of calls of one Terraform command, whether a resource is at an ID already.
// An addition to Rill's design. The Terraform layer asks it at plan time for every new named runtime,
// whose ID follows from its provisioner and name (NamedResourceID): a runtime there is adopted by the
// apply, which may be another state's (another workspace of the configuration), and the plan is the
// only place to say so. The static pool reads one ledger row; the kubernetes provisioner answers from
// the snapshots its CheckResource shares, one LIST per kind for all the calls of a plan.
type ExistenceChecker interface {
	// ResourceExists writes nothing. When a resource is at r.ID it returns where, as a phrase that
	// completes a sentence ("on host http://h1:9091", "in namespace rill"); when nothing is, an error
	// wrapping ErrResourceNotFound; any other error when it could not tell (the caller then warns of
	// nothing). It may answer from a read that other calls of the same command share.
	ResourceExists(ctx context.Context, r *Resource) (where string, err error)
}
