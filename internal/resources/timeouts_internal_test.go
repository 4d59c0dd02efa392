package resources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
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
			// A read timeout too short for the refresh fails the refresh of the apply that would store a
			// new one: only an apply without a refresh gets out, which the description must say.
			if attr == "read" && !strings.Contains(a.MarkdownDescription, "`terraform apply -refresh=false`") {
				t.Errorf("%s: timeouts.read description %q does not say how to get out of a refresh that runs out of time", name, a.MarkdownDescription)
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
		{"0s", `must be a positive Go duration, such as "30s" or "10m", got "0s".`},
		{"0", `must be a positive Go duration, such as "30s" or "10m", got "0".`},
		{"-5m", `must be a positive Go duration, such as "30s" or "10m", got "-5m".`},
		// Not the timeouts package's message, which offered "-1.5h" as an example of what it wants.
		{"soon", `must be a positive Go duration, such as "30s" or "10m", got "soon".`},
		{"abc", `must be a positive Go duration, such as "30s" or "10m", got "abc".`},
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

// stalled is a provisioner whose every call waits until its context ends, as on a ledger or cluster
// that does not answer in time.
type stalled struct{ provisioner.Provisioner }

func (stalled) wait(ctx context.Context) error {
	start := time.Now()
	<-ctx.Done()
	return waits.Ended(ctx, start, "the ledger to answer")
}

func (s stalled) Provision(ctx context.Context, _ *provisioner.Resource, _ *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	return nil, s.wait(ctx)
}

func (s stalled) CheckResource(ctx context.Context, _ *provisioner.Resource, _ *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	return nil, s.wait(ctx)
}

func (s stalled) Deprovision(ctx context.Context, _ *provisioner.Resource) error { return s.wait(ctx) }

// An operation of a rill_runtime that its timeout ended says which setting that was, with its value
// (or its default), and for a refresh how to get out: Terraform hands the refresh the state's value,
// so after `timeouts { read = "1ns" }` was applied every plan and apply failed with a bare "context
// deadline exceeded" even once the configuration said "1m", until `terraform apply -refresh=false`,
// which nothing said. An interrupt is no timeout and gets none of it.
func TestAnOperationItsTimeoutEndedNamesTheSetting(t *testing.T) {
	ctx := context.Background()
	s := runtimeSchemaV0(ctx)
	tt := s.Blocks["timeouts"].Type().(timeouts.Type)
	r := &RuntimeResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{"pool": stalled{onePool(t).Provisioner}}, Default: "pool"}}}
	raw := func(op, value string) tftypes.Value {
		t.Helper()
		m := runtimeModels()["full state"]
		vals := map[string]attr.Value{"create": types.StringNull(), "read": types.StringNull(), "update": types.StringNull(), "delete": types.StringNull()}
		if value != "" {
			vals[op] = types.StringValue(value)
		}
		m.Timeouts = timeouts.Value{Object: types.ObjectValueMust(tt.AttrTypes, vals)}
		var v tftypes.Value
		if d := runtimeCodec.set(ctx, &v, &m); d.HasError() {
			t.Fatal(d)
		}
		return v
	}
	run := func(ctx context.Context, op, value string) diag.Diagnostics {
		v := raw(op, value)
		st, pl := tfsdk.State{Schema: s, Raw: v}, tfsdk.Plan{Schema: s, Raw: v}
		switch op {
		case "create":
			resp := &resource.CreateResponse{State: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
			r.Create(ctx, resource.CreateRequest{Plan: pl, Config: tfsdk.Config{Schema: s, Raw: v}}, resp)
			return resp.Diagnostics
		case "read":
			resp := &resource.ReadResponse{State: st}
			r.Read(ctx, resource.ReadRequest{State: st}, resp)
			return resp.Diagnostics
		case "update":
			resp := &resource.UpdateResponse{State: st}
			r.Update(ctx, resource.UpdateRequest{Plan: pl, State: st, Config: tfsdk.Config{Schema: s, Raw: v}}, resp)
			return resp.Diagnostics
		default:
			resp := &resource.DeleteResponse{State: st}
			r.Delete(ctx, resource.DeleteRequest{State: st}, resp)
			return resp.Diagnostics
		}
	}
	for _, tc := range []struct {
		op, value string
		want      []string
	}{
		{"read", "1ns", []string{"`timeouts.read = \"1ns\"`", "terraform apply -refresh=false", "the ledger to answer"}},
		{"create", "1ms", []string{"`timeouts.create = \"1ms\"`"}},
		{"update", "1ns", []string{"`timeouts.update = \"1ns\"`"}},
		{"delete", "1ns", []string{"`timeouts.delete = \"1ns\"`", "then destroy"}},
	} {
		diags := run(ctx, tc.op, tc.value)
		if !diags.HasError() {
			t.Fatalf("%s: no error: %v", tc.op, diags)
		}
		detail := diags.Errors()[0].Detail()
		for _, w := range tc.want {
			if !strings.Contains(detail, w) {
				t.Errorf("%s with %q: the error %q does not say %s", tc.op, tc.value, detail, w)
			}
		}
	}
	// The default, when the block does not set it, is named as such. It is not waited for: the
	// operation's own context is canceled (an interrupt), which must not be blamed on the timeout.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	diags := run(canceled, "read", "")
	if !diags.HasError() || strings.Contains(diags.Errors()[0].Detail(), "timeouts.read") {
		t.Errorf("an interrupted read: %v, want an error that names no timeout", diags)
	}
	if got := resourceTimeout(ctx, timeouts.Value{Object: types.ObjectNull(tt.AttrTypes)}, "read").setting(); got != "`timeouts.read` (not set: its default `5m`)" {
		t.Errorf("the setting of an unset read timeout: %s", got)
	}
}
