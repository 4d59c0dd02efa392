package provisioner

import (
	"encoding/json"
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
			`RUNTIMES[0].SLOTS: not used: "slots", later`, `runtimes: not used: "RUNTIMES", later`},
		`{"template_paths": {"deployment": "d"}, "Template_Paths": {"service": "s"}}`: {`template_paths: "Template_Paths", later in the same object, names the same field (keys match fields whatever their case): its fields are applied over these`},
		`{"paths_ptr": {"deployment": "d"}, "PATHS_PTR": {"service": "s"}}`:           {`paths_ptr: "PATHS_PTR", later`},
		`{"annotations": {"a": "1"}, "Annotations": {"b": "2", "a": "3"}}`:            {`annotations: "Annotations", later`},
		`{"template_paths": {"deployment": "d"}, "template_paths": null}`:             nil,
		`{"annotations": {"a": "1"}, "annotations": null}`:                            nil,
		`{"ſlots": 3, "name": "x", "NAME": "y", "Name": "z"}`:                         {`NAME: not used: "Name"`, `name: not used: "NAME"`},
		`{"name": "x", "name": "y"}`:                                                  nil, // one spelling twice: the set's duplicate-key warning says it
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
