package kubernetes

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The state Provision writes reads back the same after Terraform stored it as JSON (private state):
// numbers come back as float64 and lists as []any.
func TestParseStateAfterJSON(t *testing.T) {
	in := runtimeState{Namespace: "rill", ProvisionID: "abc", Slots: 2, Version: "v1", ImageTag: "v1",
		Hibernated: true, TemplatesChecksum: "sum", Warnings: []string{"w"}, Drift: []string{"d"}}
	raw, err := json.Marshal(in.asMap())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if got := parseState(m); !reflect.DeepEqual(got, in) {
		t.Fatalf("got %+v, want %+v", got, in)
	}
	if got := parseState(nil); !reflect.DeepEqual(got, runtimeState{}) {
		t.Fatalf("empty state (import): got %+v", got)
	}
}
