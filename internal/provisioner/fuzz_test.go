package provisioner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// FuzzParseSet: any input either parses or returns an error; it never panics, and a parsed set only
// holds registered types and object specs.
func FuzzParseSet(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"a": {"type": "fuzz", "spec": {}}}`,
		`{"a": {"type": "fuzz", "spec": {"x": 1}}, "b": {"type": "fuzz"}}`,
		`{"a": {"type": "fuzz", // comment
		  "spec": {"runtimes": [{"host": "http://localhost:9091", /* c */ "slots": 50,},],},},}`,
		`{"a": {"type": "nope"}}`,
		`{"a": {"spec": {}}}`,
		`{"": {"type": "fuzz"}}`,
		`[1, 2]`, `null`, `"x"`, `{"a": null}`, `{"a": {"type": "fuzz", "spec": null}}`,
		`{"a": {"type": "fuzz", "spec": "s"}}`, `{"a": {"type": ["fuzz"]}}`, `{`, `/*`, "",
		`{"a": {"type": "fuzz", "spec": {}, "x": 1}}`, `{"a": {"Type": "fuzz", "SPEC": {}}}`, `{"a": {"type": "fuzz", "Type": "x"}}`,
		"{\"a\": {\"type\": \"fuzz\", \"spec\": {\"h\": \"\xff\"}}}", `{"a": {"type": "fuzz", "spec": {"h": "\ud800"}}}`,
		`{"a": {"type": "fuzz", "spec": {"h": "\ud83d\ude00"}}}`, strings.Repeat("[", 100), strings.Repeat(`{"a":`, 40),
	} {
		f.Add(seed)
	}
	registerFuzzType()
	f.Fuzz(func(t *testing.T, in string) {
		specs, err := ParseSet(in)
		if err != nil {
			if specs != nil {
				t.Fatalf("error %v with a non-nil result", err)
			}
			return
		}
		for name, s := range specs {
			if _, ok := Initializers[s.Type]; !ok {
				t.Fatalf("%q has unregistered type %q", name, s.Type)
			}
			var obj map[string]any
			if err := json.Unmarshal(s.Spec, &obj); err != nil || obj == nil {
				t.Fatalf("%q spec is not an object: %s", name, s.Spec)
			}
		}
		// Building the same set must succeed too (the fuzz initializer accepts any object).
		set, err := NewSet(in, nil, zap.NewNop())
		if err != nil || len(set) != len(specs) {
			t.Fatalf("NewSet disagrees with ParseSet: %v (%d vs %d)", err, len(set), len(specs))
		}
	})
}

// FuzzNewRuntimeArgs: args decoded from arbitrary JSON either decode to 1 <= slots <= MaxSlots or fail with a
// FieldError; never a panic.
func FuzzNewRuntimeArgs(f *testing.F) {
	for _, seed := range []string{
		`{"slots": 1}`, `{"slots": 2, "version": "v0.50.1"}`, `{"slots": 0}`, `{"slots": -1}`,
		`{"slots": 1.5}`, `{"slots": "2"}`, `{"slots": 1e300}`, `{"slots": 9007199254740993}`,
		`{"slots": true}`, `{"slots": null}`, `{"slots": [1]}`, `{"slots": {"n": 1}}`,
		`{"slots": 2147483648}`, `{"slots": 214748365}`, `{"slots": 9223372036854775807}`, `{"slots": 1, "extra": 1}`, `{"slots": 1, "version": 5}`, `{"slots": 1, "hibernated": "yes"}`, `{}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var m map[string]any
		if json.Unmarshal([]byte(in), &m) != nil {
			return
		}
		args, err := NewRuntimeArgs(m)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a FieldError: %T %v", err, err)
			}
			return
		}
		if args.Slots < 1 || args.Slots > MaxSlots {
			t.Fatalf("accepted slots %d", args.Slots)
		}
		again, err := NewRuntimeArgs(args.AsMap())
		if err != nil || *again != *args {
			t.Fatalf("AsMap round trip: %+v -> %+v, %v", args, again, err)
		}
	})
}

type fakeFuzzProvisioner struct{ Provisioner }

func (fakeFuzzProvisioner) Close() error { return nil }

func registerFuzzType() {
	if _, ok := Initializers["fuzz"]; ok {
		return
	}
	Register("fuzz", func(spec []byte, _ database.DB, _ *zap.Logger) (Provisioner, error) {
		var m map[string]any
		if err := json.Unmarshal(spec, &m); err != nil {
			return nil, err
		}
		return fakeFuzzProvisioner{}, nil
	})
}
