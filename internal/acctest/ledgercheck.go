package acctest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// LedgerDisagreements lists how the rill_runtime resources of a state and the allocations of a static
// pool's ledger disagree; none when they agree. state is address -> attributes, as strings the way
// terraform-plugin-testing's state holds them (flatmap: "slots" = "2", "annotations.team" = "data"; a
// null attribute absent); allocs is resource ID -> allocation (LedgerAllocations). A disagreement is a
// runtime with no allocation, an allocation in no state (leaked), or an attribute that both hold and
// that differs: host, slots, name and provisioner_name, and, on an allocation that records the
// runtime's arguments (schema version 2), version, hibernated, environment and annotations.
func LedgerDisagreements(state map[string]map[string]string, allocs map[string]*database.Allocation) []string {
	var out []string
	inState := map[string]bool{}
	for _, addr := range slices.Sorted(maps.Keys(state)) {
		attrs := state[addr]
		id := attrs["id"]
		inState[id] = true
		a, ok := allocs[id]
		if !ok {
			out = append(out, fmt.Sprintf("%s (%s) is in state but has no allocation", addr, id))
			continue
		}
		for _, f := range sharedAttributes(attrs, a) {
			if f.state != f.ledger {
				out = append(out, fmt.Sprintf("%s (%s): %s is %q in state and %q in the ledger", addr, id, f.name, f.state, f.ledger))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(allocs)) {
		if a := allocs[id]; !inState[id] {
			out = append(out, fmt.Sprintf("allocation %s (name %q, host %s) is in no state: leaked", id, a.Name, a.Host))
		}
	}
	return out
}

type sharedAttribute struct{ name, state, ledger string }

// sharedAttributes pairs what a runtime's state attributes and its allocation both say, as strings.
func sharedAttributes(attrs map[string]string, a *database.Allocation) []sharedAttribute {
	shared := []sharedAttribute{
		{"host", attrs["host"], a.Host},
		{"slots", attrs["slots"], strconv.Itoa(a.Slots)},
		{"name", attrs["name"], a.Name},
		{"provisioner_name", attrs["provisioner_name"], a.Provisioner},
	}
	rec := a.Runtime
	if rec == nil {
		return shared // an allocation from before the ledger recorded the runtime's arguments
	}
	// The ledger keeps the environment apart from the other annotations (static's recordOf); a
	// configuration may give it as either the attribute or the annotation.
	annotations := map[string]string{}
	for k, v := range attrs {
		if key, ok := strings.CutPrefix(k, "annotations."); ok && key != "%" {
			annotations[key] = v
		}
	}
	environment := attrs["environment"]
	if e, ok := annotations["environment"]; ok && environment == "" {
		environment = e
	}
	delete(annotations, "environment")
	return append(shared,
		sharedAttribute{"version", attrs["version"], rec.Version},
		sharedAttribute{"hibernated", attrs["hibernated"], strconv.FormatBool(rec.Hibernated)},
		sharedAttribute{"environment", environment, rec.Environment},
		sharedAttribute{"annotations", renderAnnotations(annotations), renderAnnotations(rec.Annotations)},
	)
}

func renderAnnotations(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

// flatten writes a `terraform show -json` value into attrs as terraform-plugin-testing's flatmap
// state holds it, under key: scalars as strings, a map's entries as key.<k> with key.% its length, a
// list's as key.<i> with key.# its length; null is left out.
func flatten(attrs map[string]string, key string, v any) {
	switch v := v.(type) {
	case nil:
	case string:
		attrs[key] = v
	case bool:
		attrs[key] = strconv.FormatBool(v)
	case float64:
		attrs[key] = strconv.FormatFloat(v, 'f', -1, 64)
	case map[string]any:
		attrs[key+".%"] = strconv.Itoa(len(v))
		for k, e := range v {
			flatten(attrs, key+"."+k, e)
		}
	case []any:
		attrs[key+".#"] = strconv.Itoa(len(v))
		for i, e := range v {
			flatten(attrs, key+"."+strconv.Itoa(i), e)
		}
	default:
		attrs[key] = fmt.Sprint(v)
	}
}
