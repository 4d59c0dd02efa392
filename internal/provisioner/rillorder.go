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
// a struct or map field is applied over what an earlier key gave (the two merge); a list is applied over
// an earlier list element by element (element i merges into element i) and then takes its own length;
// null leaves a field that cannot be nil as it was; and a value of the wrong type fails the whole
// decode, even one a later key replaces. A map[string]any, which the strict decoder works on, has lost
// that order, and mapstructure picks among keys that differ only in case by map order, which is random.
// specAsRillReadsIt re-reads a spec in document order into the map Rill's decode amounts to, each
// struct field under its tag's spelling, so that this provider reads every set as Rill does.
//
// One difference is left: when one list is given three times or more and a shorter one comes between
// longer ones, encoding/json may decode a later element into one the shorter list cut off, still in
// the slice's spare capacity (`[a, b, c]`, then `[x]`, then `[p, q]` gives q b's fields), which depends
// on how Go grew the slice; here such an element starts empty. Every such key is warned about.

// orderedMember is one key of a JSON object and its value, in the order the object gives them.
type orderedMember struct {
	key   string
	value any
}

// orderedObject is a JSON object whose keys keep their order (and their repeats).
type orderedObject []orderedMember

// readOrdered reads one JSON value, objects as orderedObjects, numbers as json.Number, at most
// MaxSetDepth levels deep: a set is checked against that bound before it is parsed (checkSetText), and
// this bound keeps the recursion here bounded for every other caller too.
func readOrdered(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == json.Delim('{') || tok == json.Delim('[') {
		if depth++; depth > MaxSetDepth {
			return nil, fmt.Errorf("nested more than %d levels deep", MaxSetDepth)
		}
	}
	switch tok {
	case json.Delim('{'):
		obj := orderedObject{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec, depth)
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
			v, err := readOrdered(dec, depth)
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
// every key that a later key of the same object overrides under another spelling and for every key
// that names no field (encoding/json ignores it), and the errors of
// values of the wrong type that a later value replaced (decodeMap finds those of the values kept).
func specAsRillReadsIt(specJSON []byte, t reflect.Type) (map[string]any, []FieldWarning, error) {
	dec := json.NewDecoder(bytes.NewReader(specJSON))
	dec.UseNumber()
	v, err := readOrdered(dec, 0)
	obj, isObject := v.(orderedObject)
	if err == nil && !isObject {
		err = fmt.Errorf("got %s", typeName(plain(v)))
	}
	if err != nil {
		return nil, nil, &FieldError{Err: fmt.Errorf("must be a JSON object: %w", err)}
	}
	var r rillReader
	m, _ := r.value(obj, t, nil, false, "", "").(map[string]any)
	return m, r.warnings, errors.Join(r.errs...)
}

// rillReader gathers what reading a spec as Rill does finds besides the value.
type rillReader struct {
	warnings []FieldWarning
	errs     []error
	// writtenAt is, for each field, key or element by its path in tag names ("runtimes[0].slots"),
	// the path as written of the value it holds now, which errors and warnings name.
	writtenAt map[string]string
	// unknownSeen holds the unknown keys warned about.
	unknownSeen map[string]bool
}

// value returns v (a value readOrdered gave) as encoding/json decodes it into a Go value of type t that
// already holds prev (had: an earlier key set it), as a plain value: objects decoded into structs
// become maps keyed by each field's tag. A value of the wrong type is returned as it is, for decodeMap
// to name the field and the type it expected. path is where v is written, at is the same place in tag
// names.
func (r *rillReader) value(v any, t reflect.Type, prev any, had bool, path, at string) any {
	prevPath := r.writtenAt[at]
	if v != nil || !had || nilable(t) {
		if r.writtenAt == nil {
			r.writtenAt = map[string]string{}
		}
		r.writtenAt[at] = path
	}
	canBeNil := nilable(t)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case nil:
		if had && !canBeNil {
			return prev // null does not change a field that cannot be nil
		}
	case orderedObject:
		switch t.Kind() {
		case reflect.Struct:
			earlier, merges := prev.(map[string]any)
			r.replaced(prev, had && !merges, t, prevPath)
			return r.object(v, t, earlier, path, at)
		case reflect.Map:
			out, merges := prev.(map[string]any)
			r.replaced(prev, had && !merges, t, prevPath)
			if !merges {
				out = make(map[string]any, len(v))
			}
			for _, m := range v {
				// A map's element is decoded afresh: an earlier value under the same key is replaced.
				old, again := out[m.key]
				r.replaced(old, again, t.Elem(), r.writtenAt[joinPath(at, m.key)])
				out[m.key] = r.value(m.value, t.Elem(), nil, false, joinPath(path, m.key), joinPath(at, m.key))
			}
			return out
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			earlier, merges := prev.([]any)
			r.replaced(prev, had && !merges, t, prevPath)
			out := make([]any, len(v))
			for i, e := range v {
				index := "[" + strconv.Itoa(i) + "]"
				var old any
				if i < len(earlier) {
					old = earlier[i]
				}
				out[i] = r.value(e, t.Elem(), old, i < len(earlier), path+index, at+index)
			}
			for i := len(v); i < len(earlier); i++ { // cut off by the shorter later list
				index := "[" + strconv.Itoa(i) + "]"
				r.replaced(earlier[i], true, t.Elem(), r.writtenAt[at+index])
			}
			return out
		}
	}
	r.replaced(prev, had, t, prevPath)
	return plain(v)
}

// replaced records the errors of old, a value of type t at path that a later one replaces (when had),
// as decodeMap would report them had it been kept: encoding/json goes on past a value of the wrong
// type and fails the decode at the end, so Rill refuses such a spec whatever comes later.
func (r *rillReader) replaced(old any, had bool, t reflect.Type, path string) {
	if !had || old == nil {
		return
	}
	holder := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v"`}}))
	_, err := decodeMap(map[string]any{"v": old}, holder.Interface(), "json", false)
	for _, e := range SplitErrors(err) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			r.errs = append(r.errs, &FieldError{Path: path, Err: e})
			continue
		}
		switch rest := strings.TrimPrefix(fe.Path, "v"); {
		case rest == "":
			fe.Path = path
		case strings.HasPrefix(rest, "."):
			fe.Path = joinPath(path, rest[1:])
		default:
			fe.Path = path + rest
		}
		r.errs = append(r.errs, fe)
	}
}

// nilable says whether JSON null sets a Go value of type t to nil; for any other type it does nothing.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return false
}

// object is value for an object decoded into struct type t over earlier (nil: none).
func (r *rillReader) object(obj orderedObject, t reflect.Type, earlier map[string]any, path, at string) map[string]any {
	out := earlier
	if out == nil {
		out = make(map[string]any, len(obj))
	}
	spelledAs := map[string]string{} // a field's tag name -> the key that last set it in this object
	for _, m := range obj {
		name, ft, known := fieldNamed(t, m.key)
		if !known {
			// Kept for decodeMap, which refuses it in a strict decode; the warning is ours, as
			// mapstructure records no unknown field when a value is in error.
			out[m.key] = plain(m.value)
			r.unknown(joinPath(at, m.key))
			continue
		}
		old, had := out[name]
		if m.value == nil && had && !nilable(ft) {
			continue // null leaves a field that cannot be nil as it was: the earlier key is used
		}
		if earlierKey, again := spelledAs[name]; again && earlierKey != m.key {
			// The same spelling twice is the set's duplicate-key warning (duplicateKeyWarnings).
			r.warnings = append(r.warnings, FieldWarning{Path: joinPath(path, earlierKey), Message: overriddenMessage(m.key, ft)})
		}
		spelledAs[name] = m.key
		out[name] = r.value(m.value, ft, old, had, joinPath(path, m.key), joinPath(at, name))
	}
	return out
}

// unknown warns about the key at (in tag names, as mapstructure names fields) that names no field:
// once, however often it is given.
func (r *rillReader) unknown(at string) {
	if r.unknownSeen[at] {
		return
	}
	if r.unknownSeen == nil {
		r.unknownSeen = map[string]bool{}
	}
	r.unknownSeen[at] = true
	r.warnings = append(r.warnings, FieldWarning{Path: at, Message: IgnoredFieldMessage})
}

// overriddenMessage is the warning for a key that a later key of its object, spelled differently, sets
// again; ft is the field's type, which says how the later value applies.
func overriddenMessage(later string, ft reflect.Type) string {
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	const names = "%q, later in the same object, names the same field (keys match fields whatever their case)"
	switch ft.Kind() {
	case reflect.Struct, reflect.Map:
		return fmt.Sprintf(names+": its fields are applied over these, as Rill's admin service reads it", later)
	case reflect.Slice, reflect.Array:
		return fmt.Sprintf(names+": its elements are applied over these one by one, and the list takes its length, as Rill's admin service reads it", later)
	}
	return fmt.Sprintf("not used: "+names+", and the last one is used, as Rill's admin service reads it", later)
}

// stringType is the type of a value that a later one replaces whole, for overriddenMessage.
var stringType = reflect.TypeOf("")

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
