package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

type rawPrivate []byte

func (p rawPrivate) GetKey(context.Context, string) ([]byte, diag.Diagnostics) { return p, nil }
func (p rawPrivate) SetKey(context.Context, string, []byte) diag.Diagnostics   { return nil }

// What the framework lets through as private state is valid JSON, but may be no object: an array or
// a string (a state file edited by hand). Each is "Corrupt private state", saying it is no JSON object
// and what to do; before, it was called "not valid JSON", which it is, and said nothing to do.
func TestCorruptPrivateStateSaysItIsNoJSONObject(t *testing.T) {
	for _, raw := range []string{`[1]`, `"x"`} {
		state, diags := loadProvisionerState(context.Background(), rawPrivate(raw))
		if state != nil || !diags.HasError() {
			t.Errorf("%s: state %v, diagnostics %v; want the error", raw, state, diags)
			continue
		}
		d := diags.Errors()[0]
		if d.Summary() != "Corrupt private state" || !strings.Contains(d.Detail(), "is not a JSON object") || !strings.Contains(d.Detail(), "Restore it from a backup") {
			t.Errorf("%s: %q: %q", raw, d.Summary(), d.Detail())
		}
	}
	state, diags := loadProvisionerState(context.Background(), rawPrivate(`{"namespace":"rill"}`))
	if diags.HasError() || state["namespace"] != "rill" {
		t.Errorf("an object: %v, %v", state, diags)
	}
}
