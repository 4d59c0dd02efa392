package resources

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// modelCodec reads a resource's model (a struct of attr.Value fields with `tfsdk` tags) from the
// Terraform value of its schema and writes it back, as the framework's Get and Set of a Plan or State
// do for such a struct: the same conversions (each attribute type's ValueFromTerraform, its
// validation, ToTerraformValue), with the struct's fields and the schema's types looked up once. The
// framework walks the struct and the schema with reflection on every call (and, in v1.19, compiles a
// regular expression per field, hashicorp/terraform-plugin-framework#725): a Get and a Set per Read
// and per plan were about 18% of the provider's CPU in a refresh of 1,000 runtimes (BENCHMARKS.md).
type modelCodec[M any] struct {
	typ    tftypes.Object
	fields []codecField
}

type codecField struct {
	name  string
	index int
	typ   attr.Type
}

// newModelCodec builds the codec of model M for schema s; it panics when they do not match (a
// programming error, caught by the resource's tests).
func newModelCodec[M any](ctx context.Context, s schema.Schema) *modelCodec[M] {
	objType, ok := s.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		panic("schema type is not an object")
	}
	attrTypes := map[string]attr.Type{}
	for name, a := range s.GetAttributes() {
		attrTypes[name] = a.GetType()
	}
	for name, b := range s.GetBlocks() {
		attrTypes[name] = b.Type()
	}
	c := &modelCodec[M]{typ: objType}
	st := reflect.TypeFor[M]()
	for i := range st.NumField() {
		f := st.Field(i)
		name := f.Tag.Get("tfsdk")
		t, ok := attrTypes[name]
		if !ok || !f.Type.Implements(reflect.TypeFor[attr.Value]()) {
			panic(fmt.Sprintf("%s.%s: no attribute %q of an attr.Value type in the schema", st.Name(), f.Name, name))
		}
		delete(attrTypes, name)
		c.fields = append(c.fields, codecField{name: name, index: i, typ: t})
	}
	if len(attrTypes) > 0 {
		panic(fmt.Sprintf("%s has no field for the schema's attributes %v", st.Name(), attrTypes))
	}
	return c
}

// get reads raw (a Plan's, State's or Config's Raw value, known and not null) into m.
func (c *modelCodec[M]) get(ctx context.Context, raw tftypes.Value, m *M) diag.Diagnostics {
	var diags diag.Diagnostics
	var attrs map[string]tftypes.Value
	if err := raw.As(&attrs); err != nil || attrs == nil {
		diags.AddError("Value Conversion Error",
			fmt.Sprintf("An unexpected error was encountered trying to read the resource's value (%s). This is always an error in the provider: %v", raw, err))
		return diags
	}
	mv := reflect.ValueOf(m).Elem()
	for _, f := range c.fields {
		at := path.Root(f.name)
		v, err := f.typ.ValueFromTerraform(ctx, attrs[f.name])
		if err != nil {
			diags.AddAttributeError(at, "Value Conversion Error",
				"An unexpected error was encountered trying to convert the value. This is always an error in the provider: "+err.Error())
			continue
		}
		// The validation the framework's Get runs for a value (an integer that does not fit in 64 bits).
		if va, ok := v.(xattr.ValidateableAttribute); ok {
			resp := xattr.ValidateAttributeResponse{}
			va.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: at}, &resp)
			diags.Append(resp.Diagnostics...)
		} else if tv, ok := f.typ.(xattr.TypeWithValidate); ok { //nolint:staticcheck // the framework still runs it
			diags.Append(tv.Validate(ctx, attrs[f.name], at)...)
		}
		if diags.HasError() {
			continue
		}
		mv.Field(f.index).Set(reflect.ValueOf(v))
	}
	return diags
}

// set writes m into raw (a Plan's or State's Raw), unless it cannot be converted.
func (c *modelCodec[M]) set(ctx context.Context, raw *tftypes.Value, m *M) diag.Diagnostics {
	v, diags := c.value(ctx, m)
	if !diags.HasError() {
		*raw = v
	}
	return diags
}

// value is m as the Terraform value of the schema.
func (c *modelCodec[M]) value(ctx context.Context, m *M) (tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	mv := reflect.ValueOf(m).Elem()
	vals := make(map[string]tftypes.Value, len(c.fields))
	for _, f := range c.fields {
		v, err := mv.Field(f.index).Interface().(attr.Value).ToTerraformValue(ctx)
		if err != nil {
			diags.AddAttributeError(path.Root(f.name), "Value Conversion Error",
				"An unexpected error was encountered trying to convert the value. This is always an error in the provider: "+err.Error())
			continue
		}
		vals[f.name] = v
	}
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	if err := tftypes.ValidateValue(c.typ, vals); err != nil {
		diags.AddError("Value Conversion Error", "The resource's value does not match its schema. This is always an error in the provider: "+err.Error())
		return tftypes.Value{}, diags
	}
	return tftypes.NewValue(c.typ, vals), diags
}
