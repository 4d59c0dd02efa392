package provisioner

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/go-viper/mapstructure/v2"
)

// asMap converts a struct with `mapstructure` tags to a plain map, as Rill's AsMap methods do: every
// field lands under its tag, so a field added to RuntimeArgs or a config cannot be left out of the map
// the provisioners receive (TestAsMapRoundTrip fails when a field has no tag).
func asMap(v any) map[string]any {
	res := make(map[string]any)
	if err := mapstructure.Decode(v, &res); err != nil {
		panic(err) // a struct of plain fields always decodes into a map
	}
	return res
}

// wholeNumber reads an integer the way it may arrive in a map: a Go integer (as Terraform and the
// provisioners hand them), or a float64 or json.Number after a trip through JSON. Fractions,
// non-finite and out-of-range floats, and anything that is not a number are errors. It is the one
// loose number conversion: decoding args, configs and specs, and reading observations, use it.
func wholeNumber(v any) (int64, error) {
	var f float64
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint()), nil
	}
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		parsed, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("expected a whole number, got %s", n.String())
		}
		f = parsed
	case float64:
		f = n
	case float32:
		f = float64(n)
	default:
		return 0, fmt.Errorf("expected a whole number, got %s", typeName(v))
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("expected a whole number, got %v", f)
	}
	if math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("number %v is out of range", f)
	}
	return int64(f), nil
}

// stringList reads a list of strings that may have been through JSON ([]any); other elements and
// other values are dropped.
func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
