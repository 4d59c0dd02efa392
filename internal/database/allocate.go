package database

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidAllocation is wrapped by Allocate's error when its arguments, or the allocation the
// PlaceFunc returned, cannot be stored (empty resource ID or host, negative slots, nil allocation).
// Nothing is changed in that case.
//
// Errors returned by the PlaceFunc itself are returned by Allocate as they are (not wrapped), so
// errors.Is and errors.As see exactly what place returned.
//
// place runs while the ledger's exclusive lock is held: it must be quick and must not call the ledger
// (any DB method from inside place can wait for that lock, i.e. for itself, until its context ends).
//
// Both backends may call place more than once for one Allocate when the transaction has to be
// retried (SQLite on SQLITE_BUSY), each time with fresh data; place must therefore have no side
// effects beyond its return value.
var ErrInvalidAllocation = errors.New("invalid allocation")

func checkAllocateArgs(resourceID string, place PlaceFunc) error {
	if resourceID == "" {
		return fmt.Errorf("allocate: %w: empty resource ID", ErrInvalidAllocation)
	}
	if place == nil {
		return fmt.Errorf("allocate %q: %w: nil PlaceFunc", resourceID, ErrInvalidAllocation)
	}
	return nil
}

// checkPlaced validates what a PlaceFunc returned. Its ResourceID is ignored: Allocate stores the
// allocation under the resource ID it was called with.
func checkPlaced(a *Allocation) error {
	switch {
	case a == nil:
		return fmt.Errorf("%w: PlaceFunc returned neither an allocation nor an error", ErrInvalidAllocation)
	case a.Host == "":
		return fmt.Errorf("%w: PlaceFunc returned an allocation without a host", ErrInvalidAllocation)
	case a.Slots < 0 || a.Slots > math.MaxInt32:
		return fmt.Errorf("%w: PlaceFunc returned %d slots on host %q", ErrInvalidAllocation, a.Slots, a.Host)
	}
	return nil
}

// nowMicros is the current time in UTC at the microsecond precision both backends store.
func nowMicros() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}
