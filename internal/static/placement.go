package static

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// ErrInsufficientCapacity is returned (wrapped in a *CapacityError) when no host has room: the
// contract's provisioner.ErrInsufficientCapacity.
var ErrInsufficientCapacity = provisioner.ErrInsufficientCapacity

// CapacityError says what was asked for and what each host had free, so the user can act on it.
type CapacityError struct {
	Requested int
	// Resize is set when an existing runtime could not grow on its host.
	Resize bool
	Host   string
	Free   []HostFree
}

// HostFree is the free capacity of one host at the moment of the decision.
type HostFree struct {
	Host  string
	Free  int
	Slots int
}

func (e *CapacityError) Error() string {
	var b strings.Builder
	if e.Resize {
		fmt.Fprintf(&b, "cannot resize in place: host %s needs %d more free slot(s)", e.Host, e.Requested)
	} else {
		fmt.Fprintf(&b, "%s: %d slot(s) requested", ErrInsufficientCapacity, e.Requested)
	}
	b.WriteString("; free slots per host: ")
	for i, h := range e.Free {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d of %d", h.Host, h.Free, h.Slots)
	}
	if e.Resize {
		b.WriteString(" (a static runtime cannot move between hosts; free slots on its host or replace the resource)")
	} else {
		b.WriteString(" (add hosts or slots to the pool, or free some)")
	}
	return b.String()
}

func (e *CapacityError) Unwrap() error { return ErrInsufficientCapacity }

// choose picks the host for a new runtime of `slots` slots given the slots in use per host. It returns
// the chosen host and a sentence saying why, for the logs.
func choose(spec *Spec, used map[string]int, slots int) (string, string, error) {
	type candidate struct {
		idx  int
		host string
		used int
		cap  int
	}
	var eligible []candidate
	for i, rt := range spec.Runtimes {
		if used[rt.Host]+slots <= rt.Slots {
			eligible = append(eligible, candidate{i, rt.Host, used[rt.Host], rt.Slots})
		}
	}
	if len(eligible) == 0 {
		return "", "", &CapacityError{Requested: slots, Free: freeByHost(spec, used)}
	}
	// Compare shares of capacity in use without floating point: a.used/a.cap vs b.used/b.cap, as
	// 128-bit products so that no host size can overflow them.
	less := func(a, b candidate) bool {
		if c := compareProducts(a.used, b.cap, b.used, a.cap); c != 0 {
			if spec.Placement == PlacementPack {
				return c > 0
			}
			return c < 0
		}
		return a.idx < b.idx
	}
	sort.SliceStable(eligible, func(i, j int) bool { return less(eligible[i], eligible[j]) })
	best := eligible[0]
	why := fmt.Sprintf("placement %s: host %s had %d of %d slots in use, %d eligible host(s)", spec.Placement, best.host, best.used, best.cap, len(eligible))
	return best.host, why, nil
}

func freeByHost(spec *Spec, used map[string]int) []HostFree {
	free := make([]HostFree, 0, len(spec.Runtimes))
	for _, rt := range spec.Runtimes {
		f := rt.Slots - used[rt.Host]
		if f < 0 {
			f = 0
		}
		free = append(free, HostFree{Host: rt.Host, Free: f, Slots: rt.Slots})
	}
	return free
}

// compareProducts compares a*b with c*d for non-negative ints without overflow: -1, 0 or 1.
func compareProducts(a, b, c, d int) int {
	lh, ll := bits.Mul64(uint64(max(a, 0)), uint64(max(b, 0)))
	rh, rl := bits.Mul64(uint64(max(c, 0)), uint64(max(d, 0)))
	switch {
	case lh != rh:
		return cmpUint(lh, rh)
	default:
		return cmpUint(ll, rl)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
