package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// privateStateKey is the private-state key holding the provisioner's own state for a resource
// (Resource.State without what it observed: provisioner.WithoutObservations), which Terraform stores
// but never shows.
const privateStateKey = "provisioner_state"

// privateState is what the framework's Private fields offer.
type privateState interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func loadProvisionerState(ctx context.Context, private privateState) (map[string]any, diag.Diagnostics) {
	raw, diags := private.GetKey(ctx, privateStateKey)
	if diags.HasError() || len(raw) == 0 {
		return nil, diags
	}
	// The framework refuses bytes that are no JSON at all before they get here ("Error Decoding
	// Private State"); what it lets through may still be no object (an array, a string). null reads
	// as no state, as before.
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		diags.AddError("Corrupt private state", fmt.Sprintf("The provisioner state stored for this resource (the state file's private "+
			"data, key %q) is not a JSON object (%v): the state file was edited by hand. Restore it from a backup of the state.", privateStateKey, err))
		return nil, diags
	}
	return state, diags
}

// saveProvisionerState stores a provisioner's state for its next call on the resource, with the type
// of the provisioner that returned it (provisionerTypeKey). The keys through which it reports what it
// observed are left out: their values are in the resource's attributes already (slots, version,
// hibernated, drift), were shown once (warnings), or matter only to an import (owner, name,
// environment, annotations). Terraform rewrites the whole state file after every resource an apply
// completes, so each byte kept here is written N times in an apply of N runtimes; left in, they were
// a fifth of a static runtime's state.
func saveProvisionerState(ctx context.Context, private privateState, provisionerType string, state map[string]any) diag.Diagnostics {
	if private == nil {
		return nil
	}
	var diags diag.Diagnostics
	raw, err := json.Marshal(provisioner.WithoutObservations(state))
	if err != nil {
		diags.AddError("Cannot store the provisioner state", err.Error())
		return diags
	}
	diags.Append(private.SetKey(ctx, privateStateKey, raw)...)
	diags.Append(recordProvisionerType(ctx, private, provisionerType)...)
	return diags
}

// provisionerTypeKey is the private-state key holding the type (provisioner.Provisioner.Type) of the
// provisioner whose state privateStateKey holds: the type that made the resource. A set entry
// keeps its name when its type is edited in place (kubernetes to static, say), and each type reads
// another's state as one of its own from before it recorded where it works (no ledger_id, no
// cluster_id): it looks where it would have put the resource, finds nothing, and the refresh
// reported the resource gone, planned it anew and left the old one running with no state to free it.
// Types differ in what they can read, so the Terraform layer compares them (checkProvisionerType)
// before any call, where no provisioner can.
//
// It is written with every provisioner state, that is after a call of that provisioner succeeded on
// the resource (a create, an update, a refresh that found it): only then is the type the set has
// now known to be the one whose state is kept. A state from before the key gains it on its next such
// refresh; a refresh through another type fails or finds nothing first, so it records nothing.
const provisionerTypeKey = "provisioner_type"

// recordProvisionerType stores the type of the provisioner whose state was just saved.
func recordProvisionerType(ctx context.Context, private privateState, provisionerType string) diag.Diagnostics {
	if provisionerType == "" {
		return nil
	}
	raw, err := json.Marshal(provisionerType)
	if err != nil { // a string always marshals; kept for the error's sake
		var diags diag.Diagnostics
		diags.AddError("Cannot store the provisioner state", err.Error())
		return diags
	}
	return private.SetKey(ctx, provisionerTypeKey, raw)
}

// recordedProvisionerType is the type stored by recordProvisionerType, or "" when there is none (a
// state from before the key, an import, the destroy half of a tainted resource's replacement) or
// it is not a JSON string (a hand edit: the check it serves is then skipped, as for no record).
func recordedProvisionerType(ctx context.Context, private privateState) string {
	if private == nil {
		return ""
	}
	raw, diags := private.GetKey(ctx, provisionerTypeKey)
	if diags.HasError() || len(raw) == 0 {
		return ""
	}
	var t string
	if err := json.Unmarshal(raw, &t); err != nil {
		return ""
	}
	return t
}

// ProvisionerTypeMismatchError says that a resource was made by a provisioner of another type than
// the one its set entry (same name) has now. It wraps provisioner.ErrIdentityMismatch, never
// provisioner.ErrResourceNotFound: the resource may well exist where the old type made it.
type ProvisionerTypeMismatchError struct {
	ResourceType provisioner.ResourceType
	ResourceID   string
	Provisioner  string // the set entry's name
	Recorded     string // the type that made the resource
	Current      string // the type the entry has now
}

func (e *ProvisionerTypeMismatchError) Error() string {
	return fmt.Sprintf("%s %s was provisioned by %q when that entry of the provisioner set had type %q, but %q now has type %q. "+
		"A resource stays with the provisioner that made it, and a %s provisioner cannot read, update or free what a %s one made: "+
		"not treating the %s as deleted, and changing nothing. Put `\"type\": %q` (and its spec) back on %q to refresh, update or "+
		"destroy it. To move it to a %s provisioner, add a new entry of that type beside %q and set the resource's provisioner_name "+
		"to the new entry while %q still has type %q (the resource is replaced: freed through the old entry, created through the "+
		"new one). To forget it, `terraform state rm` it; what it holds stays where it was made",
		e.ResourceType, e.ResourceID, e.Provisioner, e.Recorded, e.Provisioner, e.Current,
		e.Current, e.Recorded, e.ResourceType,
		e.Recorded, e.Provisioner, e.Current, e.Provisioner, e.Provisioner, e.Recorded)
}

// Unwrap returns provisioner.ErrIdentityMismatch.
func (e *ProvisionerTypeMismatchError) Unwrap() error { return provisioner.ErrIdentityMismatch }

// checkProvisionerType compares the type recorded for a resource in state (private) with the type of
// the provisioner p that the set now has under its name, and returns a *ProvisionerTypeMismatchError
// when they differ; nil when they agree or nothing is recorded.
func checkProvisionerType(ctx context.Context, private privateState, rt provisioner.ResourceType, id, name string, p provisioner.Provisioner) error {
	recorded := recordedProvisionerType(ctx, private)
	if recorded == "" || recorded == p.Type() {
		return nil
	}
	return &ProvisionerTypeMismatchError{ResourceType: rt, ResourceID: id, Provisioner: name, Recorded: recorded, Current: p.Type()}
}

// keepFailedCreate records, on a resource that a failed Create keeps in state (tainted) because its
// undo failed too, where the failed Provision said its work lives (partial: its result, or nil), so
// that the next refresh checks that it reaches the same cluster or ledger and `terraform destroy`
// deletes there. Terraform gives the destroy half of a tainted resource's replacement no private
// state (it plans the new object from nothing), so that delete falls back to what the provisioner's
// spec names by then (DESIGN.md, the Create row of "Mapping Terraform to the contract").
func keepFailedCreate(ctx context.Context, private privateState, provisionerType string, partial *provisioner.Resource) diag.Diagnostics {
	if state := stateOf(partial); len(state) > 0 {
		return saveProvisionerState(ctx, private, provisionerType, state)
	}
	return nil
}

// stateOf is a resource's State, or nil for no resource.
func stateOf(r *provisioner.Resource) map[string]any {
	if r == nil {
		return nil
	}
	return r.State
}

// readinessUnconfirmedKey is a private-state key that rill_runtime sets when an apply kept it in state
// without AwaitReady's success (interrupted by Ctrl-C, an update whose wait failed, or an update whose
// Provision failed after it applied some objects: none taints it) and clears when an apply's
// AwaitReady returns (or hibernation leaves nothing to wait for). A runtime's refresh reads its
// allocation or its objects, not whether it serves, so without the mark the next plan was empty for a
// runtime that never became ready (seen on Kubernetes, after a Ctrl-C during the wait for a host that
// did not answer). With it, the refresh reports readinessUnconfirmedDrift, and the update that repairs
// drift waits for readiness again.
const readinessUnconfirmedKey = "readiness_unconfirmed"

// readinessUnconfirmedDrift is the drift a refresh reports for a runtime with readinessUnconfirmedKey.
const readinessUnconfirmedDrift = "not confirmed ready: the apply that provisioned it ended before the runtime was ready, so the next apply waits for it again"

// markReadiness records whether an apply saw the resource ready (confirmed) or kept it without that.
func markReadiness(ctx context.Context, private privateState, confirmed bool) diag.Diagnostics {
	if private == nil {
		return nil
	}
	if confirmed {
		return private.SetKey(ctx, readinessUnconfirmedKey, nil)
	}
	return private.SetKey(ctx, readinessUnconfirmedKey, []byte("true"))
}

// readinessUnconfirmed reports whether the last apply kept the resource without seeing it ready.
func readinessUnconfirmed(ctx context.Context, private privateState) bool {
	return marked(ctx, private, readinessUnconfirmedKey)
}

// marked reports whether private state holds key (a mark: its value says nothing more).
func marked(ctx context.Context, private privateState, key string) bool {
	if private == nil {
		return false
	}
	raw, diags := private.GetKey(ctx, key)
	return !diags.HasError() && len(raw) > 0
}
