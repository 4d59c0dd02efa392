package provisioner

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// FieldError is an error about one field of a spec or of args. Path is dotted, with [i] for list
// elements ("runtimes[0].slots"). Initializers return it so that NewSet and the Terraform layer can
// point at the exact JSON field.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// Errorf returns a FieldError for path.
func Errorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

func joinPath(prefix, path string) string {
	switch {
	case path == "":
		return prefix
	case prefix == "":
		return path
	case strings.HasPrefix(path, "["):
		return prefix + path
	default:
		return prefix + "." + path
	}
}

// DecodeSpec decodes a provisioner's JSON spec into out (a pointer to a struct with `json` tags).
// Unknown fields, wrong types and fractional numbers for integer fields are errors naming the field.
func DecodeSpec(specJSON []byte, out any) error {
	m, _, replacedErr := specObject(specJSON, out)
	if m == nil {
		return replacedErr
	}
	_, err := decodeMap(m, out, "json", true)
	return joinErrors(replacedErr, err)
}

// DecodeSpecCompat decodes a spec like DecodeSpec, except that unknown fields are ignored, as Rill's
// admin service ignores them, and returned as warnings naming each one, so that a set written for
// Rill is accepted and a typo is still pointed out, with a warning too for a key that a later key
// spelled in another case overrides (see specAsRillReadsIt). Wrong types and fractions remain errors
// (Rill refuses those too). With an error come the warnings (a key overridden by another spelling, or
// a misspelt one, may be what explains the error): the caller returns them with its error
// (WithWarnings).
func DecodeSpecCompat(specJSON []byte, out any) ([]FieldWarning, error) {
	m, warnings, replacedErr := specObject(specJSON, out)
	if m == nil {
		return nil, replacedErr
	}
	_, err := decodeMap(m, out, "json", false)
	sort.SliceStable(warnings, func(i, j int) bool { return warnings[i].Path < warnings[j].Path })
	return warnings, joinErrors(replacedErr, err)
}

// specObject reads specJSON as Rill's admin service decodes it into out (specAsRillReadsIt): the map
// to decode (nil when specJSON is not an object), warnings, and the errors of values a later one
// replaced.
func specObject(specJSON []byte, out any) (map[string]any, []FieldWarning, error) {
	if len(specJSON) == 0 {
		specJSON = []byte("{}")
	}
	return specAsRillReadsIt(specJSON, reflect.TypeOf(out))
}

// joinErrors joins the errors that are not nil, each joined error taken apart (SplitErrors): nil for
// none, the error itself for one (a bare *FieldError, as callers with one field to blame expect).
func joinErrors(errs ...error) error {
	var all []error
	for _, err := range errs {
		all = append(all, SplitErrors(err)...)
	}
	if len(all) == 1 {
		return all[0]
	}
	return errors.Join(all...)
}

// decodeMap decodes a plain map into out with strict rules; tag selects the struct tag to read.
// Unknown keys are an error when errorUnused is set, and are returned otherwise.
func decodeMap(in map[string]any, out any, tag string, errorUnused bool) ([]string, error) {
	var md mapstructure.Metadata
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName:     tag,
		Result:      out,
		Metadata:    &md,
		ErrorUnused: errorUnused,
		DecodeHook:  strictNumberHook,
	})
	if err != nil {
		return nil, err
	}
	if err := d.Decode(in); err != nil {
		return nil, stripRootName(fieldErrorsFromMapstructure(err), out)
	}
	return md.Unused, nil
}

// stripRootName removes the Go type name that mapstructure uses for the root in some messages, from
// every FieldError joined in err.
func stripRootName(err error, out any) error {
	root := reflect.TypeOf(out).Elem().String()
	for _, e := range SplitErrors(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			if fe.Path == root {
				fe.Path = ""
			} else if rest, ok := strings.CutPrefix(fe.Path, root+"."); ok {
				fe.Path = rest
			}
		}
	}
	return err
}

// strictNumberHook refuses numbers that would be silently truncated or overflow when decoded into an
// integer field, and strings where numbers are expected (mapstructure only converts those when weakly
// typed, which we never are, but its message would not say what was expected).
func strictNumberHook(from reflect.Type, to reflect.Type, data any) (any, error) {
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch data.(type) {
		case json.Number, float64, float32:
			return wholeNumber(data)
		case string:
			return nil, fmt.Errorf("expected a whole number, got string %q", data)
		case bool:
			return nil, fmt.Errorf("expected a whole number, got boolean %v", data)
		default:
			return data, nil
		}
	case reflect.String:
		switch data.(type) {
		case string, nil:
			return data, nil
		default:
			return nil, fmt.Errorf("expected a string, got %s", typeName(data))
		}
	case reflect.Bool:
		if _, ok := data.(bool); !ok && data != nil {
			return nil, fmt.Errorf("expected true or false, got %s", typeName(data))
		}
	case reflect.Slice, reflect.Array:
		// mapstructure's own message ("source data must be an array or slice, got map") speaks Go.
		if n := typeName(data); n == "string" || n == "boolean" || n == "number" || n == "object" {
			return nil, fmt.Errorf("expected a list, got %s", n)
		}
	case reflect.Struct, reflect.Map:
		if n := typeName(data); n == "string" || n == "boolean" || n == "number" || n == "list" {
			return nil, fmt.Errorf("expected an object, got %s", n)
		}
	}
	return data, nil
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int64, int32:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// fieldErrorsFromMapstructure turns mapstructure's error into a FieldError for every field it names
// (mapstructure names fields like "runtimes[0].slots"), joined with errors.Join in the decoder's order.
// mapstructure goes on past a field in error and joins what it finds, so that one run reports every
// wrong field of a spec (SplitErrors takes them apart again).
func fieldErrorsFromMapstructure(err error) error {
	var errs []error
	for _, de := range decodeErrorLeaves(err) {
		errs = append(errs, fieldErrorsOfDecodeError(de)...)
	}
	if len(errs) == 0 {
		return &FieldError{Err: err}
	}
	return joinErrors(errs...)
}

// fieldErrorsOfDecodeError returns the FieldErrors of one error of mapstructure's: one per unknown key
// of "has invalid keys: a, b", else one.
func fieldErrorsOfDecodeError(de *mapstructure.DecodeError) []error {
	inner := de.Unwrap()
	msg := inner.Error()
	if keys, ok := strings.CutPrefix(msg, "has invalid keys: "); ok {
		var out []error
		for _, key := range strings.Split(keys, ",") {
			out = append(out, &FieldError{Path: joinPath(de.Name(), strings.TrimSpace(key)), Err: errors.New("unknown field")})
		}
		return out
	}
	var ute *mapstructure.UnconvertibleTypeError
	if errors.As(inner, &ute) {
		return []error{&FieldError{Path: de.Name(), Err: fmt.Errorf("expected %s, got %s", kindName(ute.Expected.Type()), typeName(ute.Value))}}
	}
	var oor *OutOfRangeError
	if errors.As(inner, &oor) {
		// Kept as it is, so that a field with a narrower range can say its own (static's slots).
		return []error{&FieldError{Path: de.Name(), Err: oor}}
	}
	// Hook errors arrive wrapped as "error decoding 'x': <ours>"; keep only ours.
	if i := strings.LastIndex(msg, "': "); i >= 0 && strings.HasPrefix(msg, "error decoding '") {
		msg = msg[i+3:]
	}
	return []error{&FieldError{Path: de.Name(), Err: errors.New(msg)}}
}

// decodeErrorLeaves returns the innermost DecodeErrors of err, in order: a DecodeError that wraps
// others (a struct or list whose fields failed) names a shallower field than they do.
func decodeErrorLeaves(err error) []*mapstructure.DecodeError {
	if err == nil {
		return nil
	}
	if de, ok := err.(*mapstructure.DecodeError); ok {
		if deeper := decodeErrorLeaves(de.Unwrap()); len(deeper) > 0 {
			return deeper
		}
		return []*mapstructure.DecodeError{de}
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		var out []*mapstructure.DecodeError
		for _, e := range u.Unwrap() {
			out = append(out, decodeErrorLeaves(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		return decodeErrorLeaves(u.Unwrap())
	}
	return nil
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
