package resources

import (
	"context"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// runtimeModels are values of rill_runtime as plans and states hold them: a fresh plan (computed
// attributes unknown), a full state, an imported one (mostly null).
func runtimeModels() map[string]runtimeModel {
	ctx := context.Background()
	tt := runtimeSchemaV0(ctx).Blocks["timeouts"].Type().(timeouts.Type)
	full := runtimeModel{
		ID: types.StringValue("3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"), Provisioner: types.StringValue("pool"), Name: types.StringValue("web"),
		Slots: types.NumberValue(big.NewFloat(3)), Version: types.StringValue("v0.50.0"), Environment: types.StringValue("dev"),
		DiskGB: types.Int64Value(200), Annotations: types.MapValueMust(types.StringType, map[string]attr.Value{"organization_name": types.StringValue("acme")}),
		Hibernated: types.BoolValue(false), Host: types.StringValue("http://h1.test:9091"), Audience: types.StringValue("http://h1.test:8081"),
		CPU: types.Int64Value(3), MemoryGB: types.Int64Value(12), StorageBytes: types.Int64Value(3 << 30),
		Drift: types.ListValueMust(types.StringType, []attr.Value{types.StringValue("image")}),
		Timeouts: timeouts.Value{Object: types.ObjectValueMust(tt.AttrTypes, map[string]attr.Value{
			"create": types.StringValue("30m"), "read": types.StringNull(), "update": types.StringNull(), "delete": types.StringValue("1m"),
		})},
	}
	plan := full
	plan.ID, plan.Host, plan.Audience, plan.CPU, plan.Drift = types.StringUnknown(), types.StringUnknown(), types.StringUnknown(), types.Int64Unknown(), types.ListUnknown(types.StringType)
	plan.Annotations, plan.Timeouts = types.MapNull(types.StringType), timeouts.Value{Object: types.ObjectNull(tt.AttrTypes)}
	imported := runtimeModel{
		ID: types.StringValue("3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"), Provisioner: types.StringValue("pool"), Name: types.StringNull(),
		Slots: types.NumberNull(), Version: types.StringNull(), Environment: types.StringNull(), DiskGB: types.Int64Null(),
		Annotations: types.MapNull(types.StringType), Hibernated: types.BoolValue(false), Host: types.StringNull(), Audience: types.StringNull(),
		CPU: types.Int64Null(), MemoryGB: types.Int64Null(), StorageBytes: types.Int64Null(), Drift: types.ListNull(types.StringType),
		Timeouts: timeouts.Value{Object: types.ObjectNull(tt.AttrTypes)},
	}
	return map[string]runtimeModel{"full state": full, "fresh plan": plan, "imported": imported}
}

// runtimeCodec writes and reads exactly what the framework's State.Set and State.Get do.
func TestRuntimeCodecMatchesTheFramework(t *testing.T) {
	ctx := context.Background()
	for name, m := range runtimeModels() {
		fw := tfsdk.State{Schema: runtimeSchemaV0(ctx)}
		if d := fw.Set(ctx, &m); d.HasError() {
			t.Fatalf("%s: framework Set: %v", name, d)
		}
		var raw tftypes.Value
		if d := runtimeCodec.set(ctx, &raw, &m); d.HasError() {
			t.Fatalf("%s: codec set: %v", name, d)
		}
		if !raw.Equal(fw.Raw) {
			t.Errorf("%s: codec wrote\n%s\nthe framework\n%s", name, raw, fw.Raw)
		}

		var byCodec, byFramework runtimeModel
		if d := runtimeCodec.get(ctx, fw.Raw, &byCodec); d.HasError() {
			t.Fatalf("%s: codec get: %v", name, d)
		}
		if d := fw.Get(ctx, &byFramework); d.HasError() {
			t.Fatalf("%s: framework Get: %v", name, d)
		}
		cv, fv := reflect.ValueOf(byCodec), reflect.ValueOf(byFramework)
		for i := range cv.NumField() {
			if c, f := cv.Field(i).Interface().(attr.Value), fv.Field(i).Interface().(attr.Value); !c.Equal(f) {
				t.Errorf("%s: %s read as %v, the framework reads %v", name, cv.Type().Field(i).Name, c, f)
			}
		}
	}
}

// A value the framework's Get refuses (an integer beyond 64 bits in an int64 attribute) is refused,
// naming the attribute, instead of being read as something else.
func TestRuntimeCodecRefusesWhatTheFrameworkRefuses(t *testing.T) {
	ctx := context.Background()
	raw := fullRuntimeValue(t)
	var attrs map[string]tftypes.Value
	if err := raw.As(&attrs); err != nil {
		t.Fatal(err)
	}
	attrs["cpu"] = tftypes.NewValue(tftypes.Number, new(big.Float).SetFloat64(1.5))
	bad := tftypes.NewValue(raw.Type(), attrs)
	var got runtimeModel
	d := runtimeCodec.get(ctx, bad, &got)
	if !d.HasError() {
		t.Fatalf("cpu = 1.5 was read as %v", got.CPU)
	}
	if fw := (tfsdk.State{Schema: runtimeSchemaV0(ctx), Raw: bad}).Get(ctx, &runtimeModel{}); !fw.HasError() {
		t.Fatal("the framework accepts cpu = 1.5: the test's premise is wrong")
	}
	if wp, ok := d[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(path.Root("cpu")) {
		t.Fatalf("the error does not name cpu: %v", d)
	}
}

// fullRuntimeValue is runtimeModels' "full state", encoded as Terraform holds it.
func fullRuntimeValue(t *testing.T) tftypes.Value {
	t.Helper()
	m := runtimeModels()["full state"]
	var raw tftypes.Value
	if d := runtimeCodec.set(context.Background(), &raw, &m); d.HasError() {
		t.Fatal(d)
	}
	return raw
}
