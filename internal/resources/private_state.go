package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

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

// Keys a provisioner may set in a runtime's Resource.State to report what it observed; see DESIGN.md.
const (
	stateKeySlots      = "slots"
	stateKeyVersion    = "version"
	stateKeyHibernated = "hibernated"
	stateKeyWarnings   = "warnings"
	stateKeyDrift      = "drift"
)

type observation struct {
	slots         int
	version       string
	hibernated    bool
	hasHibernated bool
	warnings      []string
	drift         []string
}

func observedRuntime(state map[string]any) observation {
	var o observation
	switch v := state[stateKeySlots].(type) {
	case int:
		o.slots = v
	case int64:
		o.slots = int(v)
	case float64:
		if v == math.Trunc(v) {
			o.slots = int(v)
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			o.slots = int(i)
		}
	}
	o.version, _ = state[stateKeyVersion].(string)
	o.hibernated, o.hasHibernated = state[stateKeyHibernated].(bool)
	o.warnings = stringList(state[stateKeyWarnings])
	o.drift = stringList(state[stateKeyDrift])
	return o
}

// stringList reads a []string that may have been through JSON ([]any).
func stringList(v any) []string {
	switch w := v.(type) {
	case []string:
		return w
	case []any:
		var out []string
		for _, x := range w {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
