package resources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The timeouts block of both resources documents the defaults the operations use (the generated
// docs read these descriptions), in the short form a user writes.
func TestTimeoutsDocumentTheirDefaults(t *testing.T) {
	want := map[string]string{"create": "default `20m`", "read": "default `5m`", "update": "default `20m`", "delete": "default `10m`"}
	for name, r := range map[string]resource.Resource{"rill_runtime": NewRuntimeResource(), "rill_clickhouse": NewClickHouseResource()} {
		b := timeoutsBlockOf(t, name, r)
		if !strings.Contains(b.MarkdownDescription, "create `20m`, read `5m`, update `20m`, delete `10m`") {
			t.Errorf("%s: timeouts block description %q lacks the defaults", name, b.MarkdownDescription)
		}
		for attr, w := range want {
			a, ok := b.Attributes[attr].(schema.StringAttribute)
			if !ok || !strings.Contains(a.MarkdownDescription, w) {
				t.Errorf("%s: timeouts.%s description %q lacks %q", name, attr, a.MarkdownDescription, w)
			}
			// Terraform sends a refresh and a destroy the state's timeouts, not the configuration's:
			// a `delete` added just before a `terraform destroy` is not used by it, which the
			// description must say (a user waited the default 10 minutes for a 20 s timeout).
			if fromState := attr == "read" || attr == "delete"; fromState != strings.Contains(a.MarkdownDescription, "value of the last apply (from the state)") {
				t.Errorf("%s: timeouts.%s description %q: says it comes from the state: %v, want %v", name, attr, a.MarkdownDescription, !fromState, fromState)
			}
		}
	}
	for d, w := range map[time.Duration]string{20 * time.Minute: "20m", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s"} {
		if got := shortDuration(d); got != w {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, w)
		}
	}
}

// Every timeouts attribute of both resources refuses a duration of zero or less at plan time, on the
// attribute's path; what is no duration at all is left to the timeouts package's own validator (one
// diagnostic, not two).
func TestTimeoutsMustBePositive(t *testing.T) {
	cases := []struct {
		value string
		want  string // the detail of the one error expected; "" for none
	}{
		{"30s", ""},
		{"1ns", ""},
		{"1h30m", ""},
		{"0s", `must be a positive duration, got "0s".`},
		{"0", `must be a positive duration, got "0".`},
		{"-5m", `must be a positive duration, got "-5m".`},
		{"soon", `"soon" must be a string containing a sequence of decimal numbers`},
	}
	for name, r := range map[string]resource.Resource{"rill_runtime": NewRuntimeResource(), "rill_clickhouse": NewClickHouseResource()} {
		b := timeoutsBlockOf(t, name, r)
		for _, op := range []string{"create", "read", "update", "delete"} {
			a := b.Attributes[op].(schema.StringAttribute)
			p := path.Root("timeouts").AtName(op)
			for _, tc := range cases {
				var diags diag.Diagnostics
				for _, v := range a.Validators {
					vr := &validator.StringResponse{}
					v.ValidateString(context.Background(), validator.StringRequest{Path: p, ConfigValue: types.StringValue(tc.value)}, vr)
					diags.Append(vr.Diagnostics...)
				}
				switch {
				case tc.want == "" && diags.HasError():
					t.Errorf("%s timeouts.%s = %q: %v", name, op, tc.value, diags)
				case tc.want != "" && (len(diags) != 1 || !strings.Contains(diags[0].Detail(), tc.want)):
					t.Errorf("%s timeouts.%s = %q: got %v, want one error containing %q", name, op, tc.value, diags, tc.want)
				case tc.want != "" && !diags[0].(diag.DiagnosticWithPath).Path().Equal(p):
					t.Errorf("%s timeouts.%s = %q: the error is on %s", name, op, tc.value, diags[0].(diag.DiagnosticWithPath).Path())
				case strings.HasPrefix(tc.want, "must") && !strings.HasPrefix(diags[0].Detail(), "timeouts."+op+" "):
					t.Errorf("%s timeouts.%s = %q: the detail %q does not name the attribute", name, op, tc.value, diags[0].Detail())
				}
			}
		}
	}
}

// timeoutsBlockOf is the timeouts block of resource r's schema.
func timeoutsBlockOf(t *testing.T, name string, r resource.Resource) schema.SingleNestedBlock {
	t.Helper()
	var resp resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
	b, ok := resp.Schema.Blocks["timeouts"].(schema.SingleNestedBlock)
	if !ok {
		t.Fatalf("%s: timeouts is a %T", name, resp.Schema.Blocks["timeouts"])
	}
	return b
}
