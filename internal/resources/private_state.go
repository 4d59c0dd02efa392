package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// privateStateKey is the private-state key holding the provisioner's own state for a resource
// (Resource.State), which Terraform stores but never shows.
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
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		diags.AddError("Corrupt private state", fmt.Sprintf("The provisioner state stored for this resource is not valid JSON: %v", err))
	}
	return state, diags
}

func saveProvisionerState(ctx context.Context, private privateState, state map[string]any) diag.Diagnostics {
	if private == nil {
		return nil
	}
	raw, err := json.Marshal(state)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot store the provisioner state", err.Error())
		return diags
	}
	return private.SetKey(ctx, privateStateKey, raw)
}
