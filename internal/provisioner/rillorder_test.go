package provisioner

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type orderPaths struct {
	Deployment string `json:"deployment"`
	Service    string `json:"service"`
}

type orderHost struct {
	Host  string `json:"host"`
	Slots int    `json:"slots"`
}

type orderSpec struct {
	Runtimes    []orderHost       `json:"runtimes"`
	Paths       orderPaths        `json:"template_paths"`
	PathsPtr    *orderPaths       `json:"paths_ptr"`
	Annotations map[string]string `json:"annotations"`
	Slots       int               `json:"slots"`
	Name        string            `json:"name"`
}

// A spec is read as Rill's admin service reads it, with encoding/json: keys apply in the order written,
// matching fields whatever their case, so the last of two spellings wins; objects for struct and map
// fields merge; null leaves a field that cannot be nil as it was. Each case is checked against
// encoding/json itself, and the earlier spelling is named in a warning. (mapstructure, on a map, picked
// among spellings by map order, so "SLOTS" and "Slots" gave either value from one run to the next, and
// warned that the other was an unknown field Rill ignores, which Rill does not.)
func TestSpecsAreReadAsRillReadsThem(t *testing.T) {
	for spec, wantWarnings := range map[string][]string{
		`{"slots": 1, "Slots": 50}`:   {`slots: not used: "Slots", later in the same object, names the same field`},
		`{"Slots": 50, "slots": 1}`:   {`Slots: not used: "slots", later`},
		`{"SLOTS": 1, "Slots": 5}`:    {`SLOTS: not used: "Slots", later`},
		`{"slots": 1, "Slots": null}`: nil,
		`{"runtimes": [{"host": "a"}], "RUNTIMES": [{"host": "b", "SLOTS": 2, "slots": 3}]}`: {
			`RUNTIMES[0].SLOTS: not used: "slots", later`, `runtimes: "RUNTIMES", later in the same object, names the same field (keys match fields whatever their case): its elements are applied over these one by one`},
		// A later list is applied element by element: what it does not set, the earlier element keeps.
		`{"runtimes": [{"host": "a", "slots": 5}], "Runtimes": [{"host": "b"}]}`:               {`runtimes: "Runtimes", later`},
		`{"runtimes": [{"host": "a"}, {"host": "c", "slots": 1}], "Runtimes": [{"slots": 2}]}`: {`runtimes: "Runtimes", later`},
		`{"runtimes": [{"host": "a"}], "Runtimes": [{"slots": 2}, {"host": "d"}]}`:             {`runtimes: "Runtimes", later`},
		`{"runtimes": [{"host": "a"}], "Runtimes": []}`:                                        {`runtimes: "Runtimes", later`},
		`{"runtimes": [{"host": "a"}], "Runtimes": null}`:                                      {`runtimes: "Runtimes", later`},
		`{"template_paths": {"deployment": "d"}, "Template_Paths": {"service": "s"}}`:          {`template_paths: "Template_Paths", later in the same object, names the same field (keys match fields whatever their case): its fields are applied over these`},
		`{"paths_ptr": {"deployment": "d"}, "PATHS_PTR": {"service": "s"}}`:                    {`paths_ptr: "PATHS_PTR", later`},
		`{"annotations": {"a": "1"}, "Annotations": {"b": "2", "a": "3"}}`:                     {`annotations: "Annotations", later`},
		`{"template_paths": {"deployment": "d"}, "template_paths": null}`:                      nil,
		`{"annotations": {"a": "1"}, "annotations": null}`:                                     nil,
		`{"ſlots": 3, "name": "x", "NAME": "y", "Name": "z"}`:                                  {`NAME: not used: "Name"`, `name: not used: "NAME"`},
		`{"name": "x", "name": "y"}`:                                                           nil, // one spelling twice: the set's duplicate-key warning says it
	} {
		var want orderSpec
		if err := json.Unmarshal([]byte(spec), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", spec, err)
		}
		for range 20 { // map order differs from run to run: every run must give Rill's value
			var got orderSpec
			warnings, err := DecodeSpecCompat([]byte(spec), &got)
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: got %+v, want Rill's %+v", spec, got, want)
			}
			if len(warnings) != len(wantWarnings) {
				t.Fatalf("%s: warnings %v, want %d: %q", spec, warnings, len(wantWarnings), wantWarnings)
			}
			for i, w := range warnings {
				if !strings.HasPrefix(w.String(), wantWarnings[i]) || !strings.HasSuffix(w.Message, "as Rill's admin service reads it") {
					t.Fatalf("%s: warning %d is %q, want it to start %q", spec, i, w, wantWarnings[i])
				}
			}
		}
	}
}

// A key that names no field stays an unknown field, whatever the others do.
func TestAnUnknownKeyBesideTwoSpellingsIsStillUnknown(t *testing.T) {
	var got orderSpec
	warnings, err := DecodeSpecCompat([]byte(`{"Slots": 2, "slot": 1, "slots": 3}`), &got)
	if err != nil {
		t.Fatal(err)
	}
	if got.Slots != 3 || len(warnings) != 2 || warnings[0].Path != "Slots" || warnings[1].Path != "slot" || warnings[1].Message != IgnoredFieldMessage {
		t.Fatalf("got %d, warnings %v", got.Slots, warnings)
	}
}

// The unknown fields of a spec in error are warned about with its errors, at every depth, by the
// path (one of them may be the misspelling behind an error, or a second mistake that the
// next run would show only once the first is fixed), named as the errors are, by the fields' tag names
// (as before, when the spec had no error). mapstructure records no unknown field when a value is in
// error, so they were lost then.
func TestASpecInErrorStillNamesItsUnknownFields(t *testing.T) {
	var got orderSpec
	warnings, err := DecodeSpecCompat([]byte(`{"name": 5, "nme": "x", "Runtimes": [{"host": "a", "slots": "two", "slot": 3, "slot": 4}]}`), &got)
	if err == nil || !strings.Contains(err.Error(), "name: ") || !strings.Contains(err.Error(), "runtimes[0].slots: ") {
		t.Fatalf("error %v, want name's and slots'", err)
	}
	var paths []string
	for _, w := range warnings {
		if w.Message != IgnoredFieldMessage {
			t.Errorf("warning %v, want only unknown fields", w)
		}
		paths = append(paths, w.Path)
	}
	if want := []string{"nme", "runtimes[0].slot"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("unknown fields warned %v, want %v", paths, want)
	}
}

// A value of the wrong type fails Rill's decode even when a later key replaces it (encoding/json goes
// on past it and fails at the end), so it is an error here too, naming the key as written.
func TestAValueOfTheWrongTypeThatALaterKeyReplacesIsStillAnError(t *testing.T) {
	for spec, want := range map[string]string{
		`{"Slots": "x", "slots": 5}`:                                              `Slots: expected a whole number, got string "x"`,
		`{"Slots": 1.5, "slots": 5}`:                                              `Slots: expected a whole number, got 1.5`,
		`{"template_paths": 7, "Template_Paths": {"deployment": "d"}}`:            `template_paths: expected an object, got number`,
		`{"template_paths": {"service": 7}, "Template_Paths": {"service": "s"}}`:  `template_paths.service: expected a string, got number`,
		`{"annotations": {"a": 5}, "Annotations": {"a": "x"}}`:                    `annotations.a: expected a string, got number`,
		`{"runtimes": [{"host": "a"}, {"host": 5}], "Runtimes": [{"host": "b"}]}`: `runtimes[1].host: expected a string, got number`,
		`{"runtimes": [{"slots": true}], "RUNTIMES": [{"slots": 2}]}`:             `runtimes[0].slots: expected a whole number, got boolean true`,
		`{"name": 1, "name": "x"}`:                                                `name: expected a string, got number`,
	} {
		if err := json.Unmarshal([]byte(spec), new(orderSpec)); err == nil {
			t.Fatalf("%s: encoding/json accepts it, so Rill does: the case is wrong", spec)
		}
		var got orderSpec
		_, err := DecodeSpecCompat([]byte(spec), &got)
		var fe *FieldError
		if err == nil || !errors.As(err, &fe) || err.Error() != want {
			t.Errorf("%s: got %v, want the error %q", spec, err, want)
		}
	}
}

// The reader's recursion is bounded where it happens, whoever calls it (a set is bounded before it is
// parsed; a spec decoded directly is not).
func TestASpecNestedTooDeepIsAnErrorNotACrash(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 10000) + "1" + strings.Repeat("}", 10000)
	if _, err := DecodeSpecCompat([]byte(deep), new(orderSpec)); err == nil || !strings.Contains(err.Error(), "nested more than 32 levels deep") {
		t.Fatalf("got %v", err)
	}
}

// Whatever spec encoding/json (so Rill) decodes, this provider decodes to the same value. (Not the
// reverse: a whole number written as 2.0 is accepted here, and refused by encoding/json.)
func FuzzSpecsAreReadAsRillReadsThem(f *testing.F) {
	for _, seed := range []string{
		`{"slots": 1, "Slots": 50}`,
		`{"runtimes": [{"host": "a", "slots": 5}], "Runtimes": [{"host": "b"}], "RUNTIMES": [{}, {"slots": 1}]}`,
		`{"template_paths": {"deployment": "d"}, "Template_Paths": {"service": "s"}, "paths_ptr": null}`,
		`{"annotations": {"a": "1"}, "Annotations": {"b": "2", "a": null}, "name": "x", "NAME": null}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var want orderSpec
		if json.Unmarshal([]byte(spec), &want) != nil || !strings.HasPrefix(strings.TrimSpace(spec), "{") {
			return
		}
		var got orderSpec
		if _, err := DecodeSpecCompat([]byte(spec), &got); err != nil {
			if strings.Contains(err.Error(), "nested more than") {
				return // deeper than a set may be
			}
			t.Fatalf("%s: encoding/json decodes it, this provider says %v", spec, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %+v, want Rill's %+v", spec, got, want)
		}
	})
}
