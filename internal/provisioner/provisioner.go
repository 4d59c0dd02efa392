// Package provisioner is the generic contract between the Terraform layer and the implementations that
// provision resources (static pools, Kubernetes, ClickHouse). The exported names and signatures follow
// Rill's admin/provisioner design; see DESIGN.md.
package provisioner

import (
	"context"
	"encoding/json"
	"errors"
)

// ErrResourceNotFound is returned (wrapped) by CheckResource when the resource no longer exists where
// it was provisioned. Callers such as Terraform's Read use it to plan re-creation; every other error
// means the provisioner could not tell and must not be taken as "gone".
var ErrResourceNotFound = errors.New("resource not found")

// ErrIdentityMismatch is returned (wrapped) when a resource was provisioned in another ledger or
// cluster than the one the provisioner reaches now: a new CI runner with a fresh default ledger, a
// ledger_dsn or kubeconfig that points elsewhere. The resource may well exist where it was made, so
// it is never ErrResourceNotFound: callers such as Terraform's Read fail and keep the state.
// Provisioners record the identity they provisioned in in Resource.State.
var ErrIdentityMismatch = errors.New("the resource was provisioned in another ledger or cluster")

// ProvisionerSpec is a JSON-serializable specification for a provisioner.
type ProvisionerSpec struct {
	Type string          `json:"type"`
	Spec json.RawMessage `json:"spec"`
}

// Provisioner is able to provision resources for one or more resource types.
type Provisioner interface {
	// Type returns the type of the provisioner.
	Type() string
	// Close is called when the provisioner is no longer needed.
	Close() error
	// Supports indicates if it can provision the resource type.
	Supports(rt ResourceType) bool
	// Provision provisions a new resource.
	// It may be called multiple times for the same ID if:
	//  - the initial provision is interrupted, or
	//  - the resource args are updated
	//
	// This means Provision should be idempotent for the resource's ID.
	//
	// An addition to Rill's contract: a Provision that fails part-way may return, together with its
	// error, a Resource whose State records where what it made lives (the namespace, the identity of
	// the cluster or ledger). A caller that cannot undo the failed call keeps that State and passes it
	// to CheckResource and Deprovision later, which then check that they reach the same place instead
	// of finding nothing somewhere else. A nil Resource with an error means nothing to record.
	Provision(ctx context.Context, r *Resource, opts *ResourceOptions) (*Resource, error)
	// Deprovision deprovisions a resource. A resource that is already gone is not an error.
	Deprovision(ctx context.Context, r *Resource) error
	// AwaitReady waits for a resource to be ready, or fails with the reason it is not.
	AwaitReady(ctx context.Context, r *Resource) error
	// Check health-checks the provisioner itself (capacity, connectivity).
	Check(ctx context.Context) error
	// CheckResource reports a resource as it really is and returns its state and config. It changes
	// nothing. A resource that no longer exists yields an error wrapping ErrResourceNotFound.
	CheckResource(ctx context.Context, r *Resource, opts *ResourceOptions) (*Resource, error)
}

// Resource represents a provisioned resource.
type Resource struct {
	// ID uniquely identifies the provisioned resource.
	ID string
	// Type describes what type of service the resource is.
	Type ResourceType
	// State contains state about the provisioned resource for use by the provisioner.
	// It should not be accessed outside of the provisioner.
	State map[string]any
	// Config contains access details for clients that use the resource.
	Config map[string]any
}

// ResourceOptions contains metadata about a resource.
type ResourceOptions struct {
	// Service-specific arguments for the provisioner (RuntimeArgs, ...).
	Args map[string]any
	// Annotations for the project the resource belongs to.
	Annotations map[string]string
	// RillVersion is the current version of Rill.
	RillVersion string
	// Name is the user's name for the resource, unique per provisioner; empty when it has none. A named
	// resource's ID is derived from the provisioner and the name (see NamedResourceID), so Provision may
	// find what an interrupted earlier call left at that ID: with the same name and provisioner it
	// adopts it; anything else there is an *IDConflictError. An addition to Rill's design.
	Name string
}
