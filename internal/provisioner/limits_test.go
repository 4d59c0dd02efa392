package provisioner

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// setSecret stands for a password inside a set that is not valid JSON.
const setSecret = "Pr0v1der-S3cret"

// The set's size, depth and encoding are refused before any parser sees them, saying where, and
// without showing the set's text.
func TestParseSetRefusesHostileTextBeforeParsing(t *testing.T) {
	registerFuzzType()
	deep := strings.Repeat("[", 1_000_000)
	cases := []struct{ name, set, want string }{
		{"nested a million deep", deep, "provisioner set is nested more than 32 levels deep at line 1, column 33 (byte 32)"},
		{"two million brackets", deep + deep, "bytes; at most 1048576 are accepted"},
		{"nested objects", `{"a": {"type": "fuzz", "spec": ` + strings.Repeat(`{"x": `, 40) + `1` + strings.Repeat(`}`, 40) + `}}`, "nested more than 32 levels deep"},
		{"too large", `{"a": {"type": "fuzz", "spec": {"x": "` + strings.Repeat("x", MaxSetBytes) + `"}}}`, "bytes; at most 1048576 are accepted"},
		{"raw invalid UTF-8 in a host", "{\"a\": {\"type\": \"fuzz\",\n \"spec\": {\"host\": \"http://h\xff1:9091\"}}}", "not valid UTF-8 at line 2, column 28 (byte 50): byte 0xff begins no UTF-8 character"},
		{"raw invalid UTF-8 in a comment", "{// caf\xe9\n}", "not valid UTF-8 at line 1, column 8 (byte 7): byte 0xe9 begins no UTF-8 character"},
		{"lone high surrogate", `{"a": {"type": "fuzz", "spec": {"host": "http://h\ud8001"}}}`, `not valid UTF-8 at line 1, column 50 (byte 49): \ud800 is half of a surrogate pair`},
		{"lone low surrogate", `{"a": {"type": "fuzz", "spec": {"host": "\uDC00"}}}`, `\uDC00 is half of a surrogate pair`},
		// A DSN built with file(), whose trailing newline ends up inside the string: the parser's
		// error quoted the whole string, password and all, and a URL's masking stops at a newline.
		{"newline inside a string", "{\"a\": {\"type\": \"fuzz\", \"spec\": {\"dsn\": \"clickhouse://admin:" + setSecret + "\n@ch:9000\"}}}",
			"provisioner set has a control character (byte 0x0a) inside a string at line 1, column 75 (byte 74)"},
		{"bad escape", `{"a": {"type": "fuzz", "spec": {"dsn": "clickhouse://admin:` + setSecret + `\x@ch:9000"}}}`,
			"provisioner set has an escape JSON does not allow inside a string at line 1, column 75 (byte 74)"},
		{"short unicode escape", `{"a": {"type": "fuzz", "spec": {"dsn": "clickhouse://admin:` + setSecret + `\u12@ch:9000"}}}`,
			"provisioner set has \\u without four hex digits inside a string at line 1, column 75 (byte 74)"},
		// A bare word hujson refuses is not shown either (an unquoted password pasted in).
		{"bare word", `{"a": {"type": "fuzz", "spec": {"password": ` + setSecret + `}}}`,
			"provisioner set is not valid JSON: hujson: line 1, column 45: invalid literal (a bare word"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSet(tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), setSecret) {
				t.Fatalf("the error shows the set's secret: %v", err)
			}
		})
	}
}

// What the limits let through still parses: a valid surrogate pair, characters outside ASCII, "//"
// and brackets inside strings, and nesting up to the bound.
func TestParseSetAcceptsWhatTheLimitsAllow(t *testing.T) {
	registerFuzzType()
	for _, set := range []string{
		`{"a": {"type": "fuzz", "spec": {"x": "\ud83d\ude00 é [[[[ // not a comment"}}}`,
		`{"a": {"type": "fuzz", "spec": ` + strings.Repeat(`{"x": `, 29) + `1` + strings.Repeat(`}`, 29) + `}}`,
		"{\"a\": {\"type\": \"fuzz\", /* ünïcode comment {{{{ */ \"spec\": {}}}",
	} {
		if _, err := ParseSet(set); err != nil {
			t.Errorf("%.60s: %v", set, err)
		}
	}
}

// Fields next to "type" and "spec" are ignored with a warning naming them (Rill ignores them too);
// keys match case-insensitively as encoding/json matches them in Rill, and of two spellings the last
// in the document wins, as in Rill, with a warning naming the one not used.
func TestParseSetWarnsAboutEntryFieldsRillIgnores(t *testing.T) {
	registerFuzzType()
	specs, warnings, err := ParseSetWithWarnings(`{
		"b": {"type": "fuzz", "spec": {}, "sepc": {}, "description": "x"},
		"a": {"Type": "fuzz", "SPEC": {"k": 1}},
		"c": {"Type": "other", "type": "fuzz"},
		"d": {"TYPE": "other", "Type": "fuzz", "type": null}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if specs["a"].Type != "fuzz" || string(specs["a"].Spec) != `{"k": 1}` || specs["c"].Type != "fuzz" || specs["d"].Type != "fuzz" {
		t.Fatalf("specs: %+v", specs)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	want := []string{
		`provisioner "b": description: unknown field, ignored (Rill's admin service ignores it too); check its spelling; an entry has only "type" and "spec"`,
		`provisioner "b": sepc: unknown field, ignored (Rill's admin service ignores it too); check its spelling; an entry has only "type" and "spec"`,
		`provisioner "c": Type: not used: "type", later in the same object, names the same field (keys match fields whatever their case), and the last one is used, as Rill's admin service reads it`,
		`provisioner "d": TYPE: not used: "Type", later in the same object, names the same field (keys match fields whatever their case), and the last one is used, as Rill's admin service reads it`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type fakeWarningProvisioner struct{ fakeFuzzProvisioner }

func (fakeWarningProvisioner) SpecWarnings() []FieldWarning {
	return []FieldWarning{{Path: "b.c", Message: "second"}, {Path: "a", Message: "first"}}
}

// NewSetWithWarnings gathers the set's warnings and every provisioner's spec warnings, prefixed with
// "spec." and sorted; NewSet keeps its signature and builds the same set.
func TestNewSetWithWarningsCollectsSpecWarnings(t *testing.T) {
	if _, ok := Initializers["warns"]; !ok {
		Register("warns", func([]byte, database.DB, *zap.Logger) (Provisioner, error) { return fakeWarningProvisioner{}, nil })
	}
	set, warnings, err := NewSetWithWarnings(`{"p": {"type": "warns", "spec": {}, "x": 1}}`, nil, nil)
	if err != nil || len(set) != 1 {
		t.Fatal(set, err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.Field+"="+w.Message)
	}
	if want := "spec.a=first spec.b.c=second x=" + IgnoredFieldMessage + `; an entry has only "type" and "spec"`; strings.Join(got, " ") != want {
		t.Fatalf("got %q\nwant %q", strings.Join(got, " "), want)
	}
	if set, err := NewSet(`{"p": {"type": "warns", "spec": {}, "x": 1}}`, nil, nil); err != nil || len(set) != 1 {
		t.Fatal(set, err)
	}
}

// DecodeSpecCompat ignores unknown fields at any depth and names each; DecodeSpec still refuses them.
func TestDecodeSpecCompatWarnsWhereDecodeSpecRefuses(t *testing.T) {
	type inner struct {
		PVC string `json:"pvc"`
	}
	type spec struct {
		Host  string  `json:"host"`
		Paths inner   `json:"template_paths"`
		List  []inner `json:"list"`
	}
	in := []byte(`{"host": "h", "hots": 1, "template_paths": {"pvc": "p", "pvcs": "x"}, "list": [{"pvc": "a", "z": 1}]}`)
	var s spec
	warnings, err := DecodeSpecCompat(in, &s)
	if err != nil || s.Host != "h" || s.Paths.PVC != "p" || s.List[0].PVC != "a" {
		t.Fatalf("%+v %v", s, err)
	}
	var paths []string
	for _, w := range warnings {
		paths = append(paths, w.Path)
	}
	if strings.Join(paths, " ") != "hots list[0].z template_paths.pvcs" {
		t.Fatalf("warning paths: %v", paths)
	}
	if err := DecodeSpec(in, &spec{}); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("DecodeSpec must stay strict: %v", err)
	}
	if _, err := DecodeSpecCompat([]byte(`{"host": 1}`), &spec{}); err == nil || !strings.Contains(err.Error(), "host: expected a string") {
		t.Fatalf("a wrong type stays an error: %v", err)
	}
}

// Entry shapes where this provider differs from Rill's json.Unmarshal of the set: a missing or null
// spec is an empty object (Rill's initializers fail on it), an empty name is refused (no resource
// could name it), comments and trailing commas are accepted (Rill's parser refuses them).
func TestParseSetEntryShapes(t *testing.T) {
	registerFuzzType()
	specs, err := ParseSet(`{"a": {"type": "fuzz"}, "b": {"type": "fuzz", "spec": null}, /* c */ "c": {"type": "fuzz", "spec": {},},}`)
	if err != nil || string(specs["a"].Spec) != "{}" || string(specs["b"].Spec) != "{}" || len(specs) != 3 {
		t.Fatalf("%+v %v", specs, err)
	}
	if _, err := ParseSet(`{"": {"type": "fuzz"}}`); err == nil || !strings.Contains(err.Error(), "provisioner names must not be empty") {
		t.Fatalf("empty name: %v", err)
	}
}

// A key given twice in one object keeps its last value, as encoding/json (and so Rill's admin
// service) does, with a warning naming the key's path: a provisioner given twice, a field of an entry
// or of a spec at any depth.
func TestParseSetWarnsAboutDuplicateKeys(t *testing.T) {
	registerFuzzType()
	specs, warnings, err := ParseSetWithWarnings(`{
		"p": {"type": "fuzz", "spec": {"hosts": 1}},
		"p": {"type": "fuzz", "spec": {"hosts": 1, "hosts": 2, "runtimes": [{"slots": 1}, {"slots": 1, "slots": 2, "slots": 3}]}},
		"q": {"type": "fuzz", "type": "fuzz", "spec": {"n": 1e400, "a": {"b": 1, "b": 2}}}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(specs["p"].Spec), `"runtimes"`) {
		t.Fatalf("the last p should win: %s", specs["p"].Spec)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	want := []string{
		`provisioner "p": ` + DuplicateKeyMessage,
		`provisioner "p": spec.hosts: ` + DuplicateKeyMessage,
		`provisioner "p": spec.runtimes[1].slots: ` + DuplicateKeyMessage,
		`provisioner "q": spec.a.b: ` + DuplicateKeyMessage,
		`provisioner "q": type: ` + DuplicateKeyMessage,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Decoding errors speak JSON's types and say the range of a number too large, never Go's types or
// mapstructure's words.
func TestDecodeSpecErrorsSpeakJSON(t *testing.T) {
	type item struct {
		N int `json:"n"`
	}
	type spec struct {
		Items []item `json:"items"`
		One   item   `json:"one"`
	}
	for in, want := range map[string]string{
		`{"items": {"n": 1}}`:     "items: expected a list, got object",
		`{"items": "x"}`:          "items: expected a list, got string",
		`{"items": [7]}`:          "items[0]: expected an object, got number",
		`{"one": [1]}`:            "one: expected an object, got list",
		`{"one": {"n": true}}`:    "one.n: expected a whole number, got boolean true",
		`{"one": {"n": "4"}}`:     `one.n: expected a whole number, got string "4"`,
		`{"one": {"n": 1e20}}`:    "one.n: number 1e20 is out of range: whole numbers here are between -9007199254740992 and 9007199254740992 (2^53)",
		`{"one": {"n": 1e400}}`:   "one.n: number 1e400 is out of range",
		`{"one": {"n": 1.5}}`:     "one.n: expected a whole number, got 1.5",
		`{"one": {"n": 1e3}}`:     "",
		`{"items": [{"n": 2e0}]}`: "",
	} {
		var out spec
		err := DecodeSpec([]byte(in), &out)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", in, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// The decoder goes on past a field in error: every wrong field of a spec is its own FieldError
// (SplitErrors takes them apart), in the spec's order, and each unknown key of a strict decode too.
func TestDecodeSpecReportsEveryError(t *testing.T) {
	type item struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	type spec struct {
		Items []item `json:"items"`
		One   item   `json:"one"`
	}
	paths := func(err error) string {
		var got []string
		for _, e := range SplitErrors(err) {
			var fe *FieldError
			if !errors.As(e, &fe) {
				t.Fatalf("%T %v is not a *FieldError", e, e)
			}
			got = append(got, e.Error())
		}
		return strings.Join(got, "\n")
	}
	in := []byte(`{"items": [{"n": "x"}, {"n": 1, "s": 5}, 7], "one": {"n": 1.5, "s": true}}`)
	want := strings.Join([]string{
		`items[0].n: expected a whole number, got string "x"`,
		"items[1].s: expected a string, got number",
		"items[2]: expected an object, got number",
		"one.n: expected a whole number, got 1.5",
		"one.s: expected a string, got boolean",
	}, "\n")
	if _, err := DecodeSpecCompat(in, &spec{}); paths(err) != want {
		t.Errorf("DecodeSpecCompat:\n%s\nwant:\n%s", paths(err), want)
	}
	if err := DecodeSpec(in, &spec{}); paths(err) != want {
		t.Errorf("DecodeSpec:\n%s\nwant:\n%s", paths(err), want)
	}
	want = "one.a: unknown field\none.b: unknown field\nz: unknown field"
	if err := DecodeSpec([]byte(`{"one": {"b": 1, "a": 2}, "z": 3}`), &spec{}); paths(err) != want {
		t.Errorf("unknown keys:\n%s\nwant:\n%s", paths(err), want)
	}
}
