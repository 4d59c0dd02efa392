package main

import "fmt"

// slotsPerHost: every host of the bench's static pool has 100 slots; its runtimes take one each.
const slotsPerHost = 100

// hosts: the static pool of a count of one-slot runtimes, the one home of its layout (scripts/bench.sh's
// write_runtime_config asks `report pool` for it; the scale table labels its rows with it): 100 slots
// per host, enough hosts for every runtime, and at least 4, so that the placement has a choice to
// make at every size.
func hosts(count int) int {
	return max((count+slotsPerHost-1)/slotsPerHost, 4)
}

// poolHosts: `report pool -count N`.
type poolHosts struct{ count int }

func (h *poolHosts) render() (string, error) {
	return fmt.Sprintf("%d %d\n", hosts(h.count), slotsPerHost), nil
}
