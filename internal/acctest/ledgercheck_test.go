package acctest

import (
	"maps"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// A state agrees with its ledger when it holds exactly the ledger's allocations and each runtime says
// what its allocation says; every attribute both hold that differs (a host or slots the ledger does
// not say, a name, an environment given as either the attribute or the annotation) is a
// disagreement, named with the runtime's address and both values. Before, CheckStateEqualsLedger
// compared the IDs only, so a state whose runtimes had other slots or hosts than the ledger passed.
func TestLedgerDisagreementsCompareEveryAttributeBothHold(t *testing.T) {
	const id, other = "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a01", "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a02"
	alloc := func() map[string]*database.Allocation {
		return map[string]*database.Allocation{id: {ResourceID: id, Provisioner: "pool", Host: "http://h1.test:9091", Slots: 2, Name: "web",
			Runtime: &database.RuntimeRecord{Version: "v1", Environment: "prod", Annotations: map[string]string{"team": "data"}}}}
	}
	runtime := func() map[string]string {
		return map[string]string{"id": id, "provisioner_name": "pool", "host": "http://h1.test:9091", "slots": "2", "name": "web",
			"version": "v1", "hibernated": "false", "environment": "prod", "annotations.%": "1", "annotations.team": "data", "cpu": "4"}
	}
	state := func(change func(map[string]string)) map[string]map[string]string {
		r := runtime()
		change(r)
		return map[string]map[string]string{"rill_runtime.web": r}
	}
	if d := LedgerDisagreements(state(func(map[string]string) {}), alloc()); len(d) != 0 {
		t.Fatalf("a state that agrees with its ledger: %q", d)
	}
	// The environment given as an annotation: the ledger keeps it apart all the same.
	if d := LedgerDisagreements(state(func(r map[string]string) {
		delete(r, "environment")
		r["annotations.%"], r["annotations.environment"] = "2", "prod"
	}), alloc()); len(d) != 0 {
		t.Fatalf("the environment as an annotation: %q", d)
	}
	// An allocation from before the ledger recorded the runtime's arguments says nothing of them.
	old := alloc()
	old[id].Runtime = nil
	if d := LedgerDisagreements(state(func(r map[string]string) { r["version"] = "v2" }), old); len(d) != 0 {
		t.Fatalf("an allocation without a record: %q", d)
	}

	for name, tc := range map[string]struct {
		change func(map[string]string)
		allocs func(map[string]*database.Allocation)
		want   string
	}{
		"slots":         {change: func(r map[string]string) { r["slots"] = "1" }, want: `rill_runtime.web (` + id + `): slots is "1" in state and "2" in the ledger`},
		"host":          {change: func(r map[string]string) { r["host"] = "http://h2.test:9091" }, want: `host is "http://h2.test:9091" in state and "http://h1.test:9091" in the ledger`},
		"name":          {change: func(r map[string]string) { delete(r, "name") }, want: `name is "" in state and "web" in the ledger`},
		"provisioner":   {change: func(r map[string]string) { r["provisioner_name"] = "other" }, want: `provisioner_name is "other" in state and "pool" in the ledger`},
		"version":       {change: func(r map[string]string) { delete(r, "version") }, want: `version is "" in state and "v1" in the ledger`},
		"hibernated":    {change: func(r map[string]string) { r["hibernated"] = "true" }, want: `hibernated is "true" in state and "false" in the ledger`},
		"environment":   {change: func(r map[string]string) { r["environment"] = "dev" }, want: `environment is "dev" in state and "prod" in the ledger`},
		"annotations":   {change: func(r map[string]string) { r["annotations.team"] = "ops" }, want: `annotations is "team=ops" in state and "team=data" in the ledger`},
		"no allocation": {change: func(r map[string]string) { r["id"] = other }, want: `rill_runtime.web (` + other + `) is in state but has no allocation`},
		"leaked": {change: func(map[string]string) {}, allocs: func(a map[string]*database.Allocation) {
			a[other] = &database.Allocation{ResourceID: other, Host: "http://h1.test:9091", Slots: 1}
		}, want: `allocation ` + other + ` (name "", host http://h1.test:9091) is in no state: leaked`},
	} {
		t.Run(name, func(t *testing.T) {
			allocs := maps.Clone(alloc())
			if tc.allocs != nil {
				tc.allocs(allocs)
			}
			d := LedgerDisagreements(state(tc.change), allocs)
			if len(d) == 0 || !strings.Contains(strings.Join(d, "\n"), tc.want) {
				t.Fatalf("got %q, want a disagreement saying %q", d, tc.want)
			}
		})
	}
}

// CheckStateEqualsLedger reads `terraform show -json`, whose values flatten turns into the flatmap
// strings that LedgerDisagreements compares, as terraform-plugin-testing's state holds them.
func TestFlattenGivesShowJSONValuesAsFlatmap(t *testing.T) {
	values := map[string]any{"id": "x", "slots": float64(2), "hibernated": false, "name": nil,
		"annotations": map[string]any{"team": "data"}, "drift": []any{"a"}, "timeouts": nil}
	got := map[string]string{}
	for k, v := range values {
		flatten(got, k, v)
	}
	want := map[string]string{"id": "x", "slots": "2", "hibernated": "false", "annotations.%": "1", "annotations.team": "data", "drift.#": "1", "drift.0": "a"}
	if !maps.Equal(got, want) {
		t.Errorf("flatten: %v, want %v", got, want)
	}
}
