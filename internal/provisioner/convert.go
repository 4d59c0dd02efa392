package provisioner

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

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
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("expected a whole number, got %s", n.String())
		}
		if parsed == math.Trunc(parsed) && (err != nil || math.Abs(parsed) > 1<<53) {
			return 0, &OutOfRangeError{Number: n.String()} // as written, not as a float prints it
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
		return 0, &OutOfRangeError{Number: fmt.Sprint(f)}
	}
	return int64(f), nil
}

// OutOfRangeError is wholeNumber's error for a whole number too large to read exactly. It says the
// range of the conversion; a field whose own range is narrower replaces it with that range (see
// static.ParseSpec's slots), as the user's mistake is against the field's range, not this one.
type OutOfRangeError struct {
	// Number is the number as written in the JSON when it came from there.
	Number string
}

func (e *OutOfRangeError) Error() string {
	return fmt.Sprintf("number %s is out of range: whole numbers here are between -9007199254740992 and 9007199254740992 (2^53)", e.Number)
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
