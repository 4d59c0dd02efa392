package provisioner

import "context"

// CreationReporter is implemented by provisioners that can tell whether a Provision call created the
// resource at its ID or found one there (and adopted it), as part of the same atomic step that claims
// the ID. An addition to Rill's design. It matters most for named resources (NamedResourceID): their
// ID follows from the name, so two callers creating the same name at the same instant meet at one ID,
// and a check before Provision (CheckResource) cannot tell which of them made what is there: both may
// see nothing, one creates, the other adopts. Only the claim itself knows. For any resource it also
// tells a call that failed before it made anything (an unreachable backend, a full pool).
//
// The Terraform layer uses it to decide whether a failed create may undo (Deprovision) what is at the
// ID: a failed create may undo only what it itself created, and one that created nothing leaves
// nothing in state. For a provisioner that does not implement it, a named resource is undone only
// when CheckResource before Provision found nothing at the ID (exact only when nobody else creates
// the same name at the same time), and a resource without a name always is.
type CreationReporter interface {
	// ProvisionReportingCreation is Provision (the same arguments, effects and results) that also
	// reports whether this call created the resource at r.ID: true when nothing was at the ID when
	// the call claimed it, so that what is there now (or what the call left there, when it failed
	// part-way) is its own; false when the ID was held already (by another caller, or an earlier
	// call: then the call adopted it or failed on it), or when the call failed before it claimed
	// anything.
	//
	// created is meaningful also when err != nil: it is what tells a failed call's caller whether it
	// may Deprovision the ID. When a claim was attempted on an ID found free and its outcome is
	// unknown (a commit whose answer was lost), created is true: what is at the ID can then only be
	// this call's, or a claim made after this one failed, and leaving this call's would leak it.
	ProvisionReportingCreation(ctx context.Context, r *Resource, opts *ResourceOptions) (res *Resource, created bool, err error)
}
