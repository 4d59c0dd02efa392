package provisioner

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A state written by a provisioner reads the same as it is handed back after a trip through JSON
// (private state) or through a decoder that keeps numbers as json.Number.
func TestNewRuntimeObservationSurvivesJSON(t *testing.T) {
	written := observedState()
	hibernated := true
	want := RuntimeObservation{Slots: 3, Version: "v0.50.0", Hibernated: &hibernated,
		Warnings: []string{"volume kept at 120Gi"}, Drift: []string{"image edited"},
		Owner: "pool", Name: "orders", Environment: "dev", Annotations: map[string]string{"project_name": "orders"}}
	if got := NewRuntimeObservation(written); !reflect.DeepEqual(got, want) {
		t.Fatalf("as written: got %+v, want %+v", got, want)
	}
	raw, _ := json.Marshal(written)
	var viaJSON map[string]any
	_ = json.Unmarshal(raw, &viaJSON)
	if got := NewRuntimeObservation(viaJSON); !reflect.DeepEqual(got, want) {
		t.Fatalf("after JSON: got %+v, want %+v", got, want)
	}
	viaJSON[StateKeySlots] = json.Number("3")
	if got := NewRuntimeObservation(viaJSON); !reflect.DeepEqual(got, want) {
		t.Fatalf("json.Number slots: got %+v, want %+v", got, want)
	}
}

// observedState is a runtime state with every observed key set, and one key of the provisioner's own.
func observedState() map[string]any {
	return map[string]any{
		StateKeySlots: 3, StateKeyVersion: "v0.50.0", StateKeyHibernated: true,
		StateKeyWarnings: []string{"volume kept at 120Gi"}, StateKeyDrift: []string{"image edited"},
		StateKeyProvisioner: "pool", StateKeyName: "orders", StateKeyEnvironment: "dev",
		StateKeyAnnotations: map[string]string{"project_name": "orders"},
		"namespace":         "rill", // a provisioner's own key, ignored
	}
}

// What a provisioner did not observe, or wrote with the wrong type, reads as not observed; nothing
// panics on an empty (imported) state.
func TestNewRuntimeObservationNotObserved(t *testing.T) {
	for name, state := range map[string]map[string]any{
		"nil":          nil,
		"empty":        {},
		"wrong types":  {StateKeySlots: "3", StateKeyVersion: 1, StateKeyHibernated: "true", StateKeyWarnings: "w", StateKeyDrift: 2},
		"bad numbers":  {StateKeySlots: 2.5},
		"zero slots":   {StateKeySlots: 0},
		"minus slots":  {StateKeySlots: int64(-1)},
		"huge float64": {StateKeySlots: 1e300},
	} {
		t.Run(name, func(t *testing.T) {
			if got := NewRuntimeObservation(state); !reflect.DeepEqual(got, RuntimeObservation{}) {
				t.Fatalf("got %+v, want nothing observed", got)
			}
		})
	}
	// A list with a non-string element keeps its strings.
	got := NewRuntimeObservation(map[string]any{StateKeyDrift: []any{"a", 1, "b"}})
	if !reflect.DeepEqual(got.Drift, []string{"a", "b"}) {
		t.Fatalf("drift %q", got.Drift)
	}
}

// What a caller stores keeps a provisioner's own keys and none of the observed ones (every key
// NewRuntimeObservation reads); the state it was given is left as it was.
func TestWithoutObservationsKeepsOnlyTheProvisionersOwnKeys(t *testing.T) {
	state := observedState()
	got := WithoutObservations(state)
	if want := map[string]any{"namespace": "rill"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if !reflect.DeepEqual(state, observedState()) {
		t.Fatalf("the given state was changed: %v", state)
	}
	if got := WithoutObservations(nil); len(got) != 0 {
		t.Fatalf("nil state stored as %v", got)
	}
}

// The one loose number conversion, shared by args/spec decoding and observations.
func TestWholeNumber(t *testing.T) {
	for _, v := range []any{3, int8(3), int16(3), int32(3), int64(3), uint8(3), uint16(3), uint32(3),
		float32(3), float64(3), json.Number("3"), json.Number("3.0"), json.Number("3e0")} {
		if n, err := wholeNumber(v); err != nil || n != 3 {
			t.Errorf("wholeNumber(%T %v) = %d, %v; want 3", v, v, n, err)
		}
	}
	for _, v := range []any{2.5, json.Number("2.5"), json.Number("x"), float64(1 << 60), "3", true, nil, []any{}} {
		if n, err := wholeNumber(v); err == nil {
			t.Errorf("wholeNumber(%T %v) = %d, want an error", v, v, n)
		}
	}
}
