package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// The warning of an apply interrupted while a runtime was not yet ready says that the next plan shows
// an update that waits for it (a runtime's refresh does not check that it serves: the caller marks
// it). A ClickHouse database's refresh logs in with its DSN, so its warning keeps the short form.
func TestInterruptedWarningSaysTheNextPlanWaitsForARuntimeAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		kind resourceKind
		want bool
	}{{runtimeKind, true}, {clickhouseKind, false}} {
		var diags diag.Diagnostics
		if !interrupted(ctx, &diags, tc.kind, "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11") {
			t.Fatalf("%s: a cancelled context is no interruption", tc.kind.typeName)
		}
		if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning {
			t.Fatalf("%s: diagnostics %v, want one warning", tc.kind.typeName, diags)
		}
		if got := strings.Contains(diags[0].Detail(), "waits for it to be ready again"); got != tc.want {
			t.Errorf("%s: %q says the next plan waits again: %v, want %v", tc.kind.typeName, diags[0].Detail(), got, tc.want)
		}
	}
	var diags diag.Diagnostics
	if interrupted(context.Background(), &diags, runtimeKind, "x") || len(diags) != 0 {
		t.Errorf("a live context is an interruption: %v", diags)
	}
}
