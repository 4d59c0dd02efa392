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

// An imported ID is kept in the form the runtime is known by elsewhere when it is a UUID in another
// spelling (the objects' dashless names, upper case), and as it is otherwise.
func TestCanonicalResourceID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0b6f1d2e-3c4a-4e5f-8a7b-9c0d1e2f3a4b", "0b6f1d2e-3c4a-4e5f-8a7b-9c0d1e2f3a4b"},
		{"0b6f1d2e3c4a4e5f8a7b9c0d1e2f3a4b", "0b6f1d2e-3c4a-4e5f-8a7b-9c0d1e2f3a4b"},
		{"0B6F1D2E-3C4A-4E5F-8A7B-9C0D1E2F3A4B", "0b6f1d2e-3c4a-4e5f-8a7b-9c0d1e2f3a4b"},
		{"rt-1", "rt-1"},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"},
	} {
		pid, err := provisionIDFor(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalResourceID(tc.in, pid); got != tc.want {
			t.Errorf("canonicalResourceID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
