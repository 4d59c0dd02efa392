package provisioner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Every field of the contract's args and configs has a `mapstructure` tag, AsMap writes it under that
// tag, and the New... function reads it back, also after a trip through JSON (as private state and
// the ledger store them). Adding a field without its tag, or with a tag AsMap/New... disagree on,
// fails here; so does a field of a kind fill does not know yet (extend fill).
func TestAsMapRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		value  any // pointer to a struct
		asMap  func(any) map[string]any
		decode func(map[string]any) (any, error)
	}{
		{&RuntimeArgs{}, func(v any) map[string]any { return v.(*RuntimeArgs).AsMap() },
			func(m map[string]any) (any, error) { return NewRuntimeArgs(m) }},
		{&RuntimeConfig{}, func(v any) map[string]any { return v.(*RuntimeConfig).AsMap() },
			func(m map[string]any) (any, error) { return NewRuntimeConfig(m) }},
		{&ClickhouseConfig{}, func(v any) map[string]any { return v.(*ClickhouseConfig).AsMap() },
			func(m map[string]any) (any, error) { return NewClickhouseConfig(m) }},
		{&ClickhouseArgs{}, func(v any) map[string]any { return v.(*ClickhouseArgs).AsMap() },
			func(m map[string]any) (any, error) { return NewClickhouseArgs(m) }},
	} {
		typ := reflect.TypeOf(tc.value).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			v := reflect.ValueOf(tc.value).Elem()
			tags := map[string]bool{}
			for i := range typ.NumField() {
				f := typ.Field(i)
				tag := f.Tag.Get("mapstructure")
				if tag == "" || tag == "-" {
					t.Fatalf("field %s has no mapstructure tag: AsMap would write it under %q and providers expect a snake_case key", f.Name, f.Name)
				}
				name, _, _ := strings.Cut(tag, ",") // ",omitempty" only leaves out zero values
				tags[name] = true
				fill(t, v.Field(i), i, f.Name)
			}

			m := tc.asMap(tc.value)
			for k := range m {
				if !tags[k] {
					t.Errorf("AsMap wrote key %q, which is no field's tag", k)
				}
			}
			for k := range tags {
				if _, ok := m[k]; !ok {
					t.Errorf("AsMap left out %q", k)
				}
			}

			back, err := tc.decode(m)
			if err != nil {
				t.Fatalf("decoding AsMap's %v: %v", m, err)
			}
			if !reflect.DeepEqual(back, tc.value) {
				t.Fatalf("round trip: got %+v, want %+v", back, tc.value)
			}

			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var viaJSON map[string]any
			if err := json.Unmarshal(raw, &viaJSON); err != nil {
				t.Fatal(err)
			}
			back, err = tc.decode(viaJSON)
			if err != nil {
				t.Fatalf("decoding AsMap's map after JSON (%s): %v", raw, err)
			}
			if !reflect.DeepEqual(back, tc.value) {
				t.Fatalf("round trip through JSON: got %+v, want %+v", back, tc.value)
			}
		})
	}
}

// fill sets v to a non-zero value that differs from field to field (i), so that swapped tags show.
func fill(t *testing.T, v reflect.Value, i int, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("value-%d", i))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(i + 2))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(i + 2))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(i) + 2.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), i, name)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), i, name)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, i, name)
		fill(t, e, i, name)
		v.SetMapIndex(k, e)
	default:
		t.Fatalf("field %s: fill does not know kind %s yet; extend it", name, v.Kind())
	}
}
