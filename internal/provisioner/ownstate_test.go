package provisioner

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// registerTestStateKeys registers keys for a test type and forgets them when the test ends.
func registerTestStateKeys(t *testing.T, typ string, keys ...string) {
	t.Helper()
	RegisterStateKeys(typ, keys...)
	t.Cleanup(func() {
		ownKeysMu.Lock()
		defer ownKeysMu.Unlock()
		for _, k := range keys {
			delete(keyOwner, k)
		}
		delete(ownKeys, typ)
		keyTypes = slices.Sorted(maps.Keys(ownKeys))
	})
}

// A state that holds another type's own keys is refused, naming that type and the first of its keys
// it registered, wrapping ErrIdentityMismatch and never ErrResourceNotFound; an empty state (an
// import, a create, the adoption of a named resource), a type's own state, and a state of keys no
// type claims pass.
func TestCheckStateOwnerRefusesAnotherTypesState(t *testing.T) {
	registerTestStateKeys(t, "test-pool", "test_ledger_id", "test_ledger")
	registerTestStateKeys(t, "test-cluster", "test_namespace", "test_cluster_id")
	r := func(state map[string]any) *Resource {
		return &Resource{ID: "rt-1", Type: ResourceTypeRuntime, State: state}
	}
	for name, res := range map[string]*Resource{
		"no resource":          nil,
		"no state":             r(nil),
		"empty state":          r(map[string]any{}),
		"its own state":        r(map[string]any{"test_ledger_id": "L", StateKeySlots: 2}),
		"observed keys only":   r(map[string]any{StateKeySlots: 2, StateKeyVersion: ""}),
		"keys no type claims":  r(map[string]any{"override_disk_gb": 10}),
		"its own, and unknown": r(map[string]any{"test_ledger": "x", "other": 1}),
	} {
		if err := CheckStateOwner("test-pool", res); err != nil {
			t.Errorf("%s: %v, want nil", name, err)
		}
	}

	err := CheckStateOwner("test-pool", r(map[string]any{"test_cluster_id": "u", "test_namespace": "rill", StateKeySlots: 1}))
	var fe *ForeignStateError
	if !errors.As(err, &fe) || !errors.Is(err, ErrIdentityMismatch) || errors.Is(err, ErrResourceNotFound) {
		t.Fatalf("got %v; want a *ForeignStateError wrapping ErrIdentityMismatch, not ErrResourceNotFound", err)
	}
	if fe.Writer != "test-cluster" || fe.Key != "test_namespace" || fe.Reader != "test-pool" {
		t.Errorf("got %+v; want the namespace key of type test-cluster, read by test-pool", fe)
	}
	for _, want := range []string{"runtime rt-1", "this runtime's state was written by a test-cluster provisioner (it records test_namespace)",
		"a test-pool provisioner cannot read", "Not treating the runtime as deleted", `"type": "test-cluster"`, "terraform state rm"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	if err := CheckStateOwner("test-cluster", r(map[string]any{"test_ledger_id": "L"})); err == nil || !strings.Contains(err.Error(), "test-pool provisioner (it records test_ledger_id)") {
		t.Errorf("the other way round: %v", err)
	}
}

// A key two types register, or one of the contract's own, would tell no state apart: registering it
// panics, as a duplicate type does, in the init function that does it.
func TestRegisterStateKeysRefusesASharedKey(t *testing.T) {
	registerTestStateKeys(t, "test-pool", "test_ledger_id")
	registerTestStateKeys(t, "test-pool", "test_ledger_id") // again, by its own type: no change
	for name, tc := range map[string]struct {
		typ, key, want string
	}{
		"another type's": {"test-cluster", "test_ledger_id", `"test_ledger_id" is already type "test-pool"'s`},
		"the contract's": {"test-cluster", StateKeySlots, `"slots" is the contract's`},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Fatalf("want a panic with %q, got %v", tc.want, r)
				}
			}()
			RegisterStateKeys(tc.typ, tc.key)
		})
	}
}
