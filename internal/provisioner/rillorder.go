package provisioner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Rill's admin service decodes each spec with encoding/json into its struct, which applies an object's
// keys one by one in the order they are written: a key names a struct field exactly or under case
// folding ("Slots" sets slots), so when two keys name one field the later one wins; an object given for
// a struct or map field is applied over what an earlier key gave (the two merge); a list replaces; and
// null leaves a field that cannot be nil as it was. A map[string]any, which the strict decoder works on,
// has lost that order, and mapstructure picks among keys that differ only in case by map order, which
// is random. asRillReadsIt re-reads a spec in document order into the map Rill's decode amounts to,
// each struct field under its tag's spelling, so that this provider reads every set as Rill does.

// orderedMember is one key of a JSON object and its value, in the order the object gives them.
type orderedMember struct {
	key   string
	value any
}

// orderedObject is a JSON object whose keys keep their order (and their repeats).
type orderedObject []orderedMember

// readOrdered reads one JSON value, objects as orderedObjects, numbers as json.Number.
func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := orderedObject{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, orderedMember{key: kt.(string), value: v})
		}
		_, err = dec.Token() // '}'
		return obj, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err = dec.Token() // ']'
		return list, err
	}
	return tok, nil
}

// specAsRillReadsIt reads specJSON, a JSON object, as Rill's admin service decodes it into a value of
// type t (a struct, or a pointer to one), and returns it as a plain map for decodeMap, with a warning for
// every key that a later key of the same object overrides under another spelling.
func specAsRillReadsIt(specJSON []byte, t reflect.Type) (map[string]any, []FieldWarning, error) {
	dec := json.NewDecoder(bytes.NewReader(specJSON))
	dec.UseNumber()
	v, err := readOrdered(dec)
	obj, isObject := v.(orderedObject)
	if err == nil && !isObject {
		err = fmt.Errorf("got %s", typeName(plain(v)))
	}
	if err != nil {
		return nil, nil, &FieldError{Err: fmt.Errorf("must be a JSON object: %w", err)}
	}
	var warnings []FieldWarning
	m, _ := asRillReadsIt(obj, t, nil, false, "", &warnings).(map[string]any)
	return m, warnings, nil
}

// asRillReadsIt returns v (a value readOrdered gave) as encoding/json decodes it into a Go value of type
// t that already holds prev (had: an earlier key set it), as a plain value: objects decoded into structs
// become maps keyed by each field's tag. A value of the wrong type is returned as it is, for decodeMap to
// name the field and the type it expected.
func asRillReadsIt(v any, t reflect.Type, prev any, had bool, path string, warnings *[]FieldWarning) any {
	canBeNil := nilable(t)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case nil:
		if !canBeNil && had {
			return prev // null does not change a field that cannot be nil
		}
		return nil
	case orderedObject:
		switch t.Kind() {
		case reflect.Struct:
			return structAsRillReadsIt(v, t, prev, path, warnings)
		case reflect.Map:
			out, ok := prev.(map[string]any)
			if !ok {
				out = make(map[string]any, len(v))
			}
			for _, m := range v {
				out[m.key] = asRillReadsIt(m.value, t.Elem(), nil, false, joinPath(path, m.key), warnings)
			}
			return out
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = asRillReadsIt(e, t.Elem(), nil, false, path+"["+strconv.Itoa(i)+"]", warnings)
			}
			return out
		}
	}
	return plain(v)
}

// nilable says whether JSON null sets a Go value of type t to nil; for any other type it does nothing.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return false
}

// structAsRillReadsIt is asRillReadsIt of an object decoded into struct type t.
func structAsRillReadsIt(obj orderedObject, t reflect.Type, prev any, path string, warnings *[]FieldWarning) map[string]any {
	out, ok := prev.(map[string]any)
	if !ok {
		out = make(map[string]any, len(obj))
	}
	spelledAs := map[string]string{} // a field's tag name -> the key that last set it in this object
	for _, m := range obj {
		name, ft, known := fieldNamed(t, m.key)
		if !known {
			out[m.key] = plain(m.value) // decodeMap reports it as an unknown field
			continue
		}
		old, had := out[name]
		if m.value == nil && had && !nilable(ft) {
			continue // null leaves a field that cannot be nil as it was: the earlier key is used
		}
		if earlier, again := spelledAs[name]; again && earlier != m.key {
			// The same spelling twice is the set's duplicate-key warning (duplicateKeyWarnings).
			*warnings = append(*warnings, FieldWarning{Path: joinPath(path, earlier), Message: overriddenMessage(m.key, mergesObjects(ft))})
		}
		spelledAs[name] = m.key
		out[name] = asRillReadsIt(m.value, ft, old, had, joinPath(path, m.key), warnings) // warnings name keys as written
	}
	return out
}

// overriddenMessage is the warning for a key that a later key of its object, spelled differently, sets
// again; merges says that the field takes an object, which the later one is applied over.
func overriddenMessage(later string, merges bool) string {
	if merges {
		return fmt.Sprintf("%q, later in the same object, names the same field (keys match fields whatever their case): its fields are applied over these, as Rill's admin service reads it", later)
	}
	return fmt.Sprintf("not used: %q, later in the same object, names the same field (keys match fields whatever their case), and the last one is used, as Rill's admin service reads it", later)
}

// mergesObjects says whether encoding/json applies a second object for a field of type t over the first
// (structs and maps) rather than replacing it.
func mergesObjects(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// rawMember is one key of a JSON object and its value as written, in the object's order.
type rawMember struct {
	key string
	raw json.RawMessage
}

// entryMembers returns the keys of raw, a JSON object, in the order written (repeats included).
func entryMembers(raw []byte) ([]rawMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []rawMember
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, rawMember{key: kt.(string), raw: v})
	}
	return out, nil
}

// fieldNamed returns the tag name and type of struct t's field that key names, as encoding/json matches
// them: the exact tag name first, else one equal under Unicode case folding.
func fieldNamed(t reflect.Type, key string) (string, reflect.Type, bool) {
	var folded *reflect.StructField
	var foldedName string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return name, f.Type, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded, foldedName = &f, name
		}
	}
	if folded != nil {
		return foldedName, folded.Type, true
	}
	return "", nil, false
}

// plain returns v (a value readOrdered gave) as encoding/json decodes it into an any with UseNumber:
// objects as map[string]any, the last of a repeated key winning.
func plain(v any) any {
	switch v := v.(type) {
	case orderedObject:
		out := make(map[string]any, len(v))
		for _, m := range v {
			out[m.key] = plain(m.value)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plain(e)
		}
		return out
	}
	return v
}
