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

// saveProvisionerState stores a provisioner's state for its next call on the resource. The keys
// through which it reports what it observed are left out: their values are in the resource's
// attributes already (slots, version, hibernated, drift), were shown once (warnings), or matter
// only to an import (owner, name, environment, annotations). Terraform rewrites the whole state
// file after every resource an apply completes, so each byte kept here is written N times in an
// apply of N runtimes; left in, they were a fifth of a static runtime's state.
func saveProvisionerState(ctx context.Context, private privateState, state map[string]any) diag.Diagnostics {
	if private == nil {
		return nil
	}
	raw, err := json.Marshal(provisioner.WithoutObservations(state))
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot store the provisioner state", err.Error())
		return diags
	}
	return private.SetKey(ctx, privateStateKey, raw)
}

// keepFailedCreate records, on a resource that a failed Create keeps in state (tainted) because its
// undo failed too, where the failed Provision said its work lives (partial: its result, or nil), so
// that the next refresh checks that it reaches the same cluster or ledger and `terraform destroy`
// deletes there. Terraform gives the destroy half of a tainted resource's replacement no private
// state (it plans the new object from nothing), so that delete falls back to what the provisioner's
// spec names by then (DESIGN.md, the Create row of "Mapping Terraform to the contract").
func keepFailedCreate(ctx context.Context, private privateState, partial *provisioner.Resource) diag.Diagnostics {
	if state := stateOf(partial); len(state) > 0 {
		return saveProvisionerState(ctx, private, state)
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
