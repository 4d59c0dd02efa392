// Package database defines the ledger: the store that provisioners share for their bookkeeping,
// such as which static runtime host holds how many slots for which resource.
//
// Two backends implement DB: SQLite (embedded, the default, pure Go) and PostgreSQL (for pools that
// several Terraform processes or pipelines share). Open picks one from a DSN-like string.
package database

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// Allocation records that a resource holds a number of slots on a host.
// A resource ID holds at most one allocation.
type Allocation struct {
	ResourceID string
	// Provisioner names the provisioner set entry that made the allocation (informational).
	Provisioner string
	Host        string
	Slots       int
	// Name is the user's name for the resource, unique per provisioner ("" when it has none).
	Name string
	// Runtime records the runtime's arguments, so that an import can restore them; nil on allocations
	// written before the ledger recorded them (schema version 2).
	Runtime   *RuntimeRecord
	CreatedAt time.Time
	UpdatedAt time.Time
	// NewHolder, set by a PlaceFunc on what it returns for an existing allocation, says that a new
	// holder takes the allocation over (a named runtime's create that adopts what is at its ID): the
	// stored created_at becomes the write's time, so that it tells this holder's claim from an
	// earlier one's. Otherwise an existing allocation keeps its created_at. Never read back.
	NewHolder bool
}

// RuntimeRecord is what the ledger keeps of a runtime's arguments besides its slots.
type RuntimeRecord struct {
	Version     string
	Hibernated  bool
	Environment string
	Annotations map[string]string
}

// PlaceFunc decides where a resource goes. It is called inside the ledger's exclusive transaction with
// the resource's current allocation (nil when it has none) and the slots in use per host, counting all
// allocations including the current one. It returns the allocation to store; returning an error aborts
// the transaction and nothing changes.
type PlaceFunc func(current *Allocation, usedByHost map[string]int) (*Allocation, error)

// DB is the ledger. Implementations are safe for concurrent use, and Allocate is atomic across
// processes that share the same store: no two callers can both see the same free slot.
type DB interface {
	// Driver names the backend: "sqlite" or "postgres".
	Driver() string
	// Close releases the store.
	Close() error
	// Ping checks that the store can be reached.
	Ping(ctx context.Context) error
	// Identity returns the ledger's identity. On a handle from OpenReadOnly of a ledger that does
	// not exist it returns the location and an error wrapping ErrNoLedger.
	Identity(ctx context.Context) (Identity, error)

	// Allocate runs place under an exclusive lock on the ledger and upserts the allocation it returns,
	// keyed by its ResourceID. It returns the stored allocation.
	Allocate(ctx context.Context, resourceID string, place PlaceFunc) (*Allocation, error)
	// FindAllocation returns the allocation of a resource, or ErrNotFound.
	FindAllocation(ctx context.Context, resourceID string) (*Allocation, error)
	// ListAllocations returns every allocation, ordered by host then resource ID.
	ListAllocations(ctx context.Context) ([]*Allocation, error)
	// UsedSlotsByHost returns the slots in use per host (hosts without allocations are absent).
	UsedSlotsByHost(ctx context.Context) (map[string]int, error)
	// DeleteAllocation removes a resource's allocation. It reports whether one existed; a missing
	// allocation is not an error.
	DeleteAllocation(ctx context.Context, resourceID string) (bool, error)
	// DeleteAllocationClaimedAt removes a resource's allocation only while its created_at is still
	// createdAt, the claim of the holder that deletes it (see Allocation.NewHolder): the check and the
	// delete are one statement, so a new holder's write that commits first keeps the allocation, at
	// whatever instant it comes. It reports whether one existed; a missing allocation is not an error,
	// and one that carries another created_at is kept and returned in a *NewHolderError.
	DeleteAllocationClaimedAt(ctx context.Context, resourceID string, createdAt time.Time) (bool, error)
}

// ErrNewHolder is wrapped by DeleteAllocationClaimedAt's error when the allocation has a new holder.
var ErrNewHolder = errors.New("the allocation has a new holder")

// NewHolderError is DeleteAllocationClaimedAt's error when the allocation's created_at is not the one
// it was given: a new holder took the allocation over (Allocation.NewHolder), and nothing was deleted.
// It wraps ErrNewHolder.
type NewHolderError struct {
	Claimed time.Time   // the created_at the caller held the allocation by
	Current *Allocation // the allocation as the delete found it
}

func (e *NewHolderError) Error() string {
	return fmt.Sprintf("allocation %s was not deleted: its created_at is %s, not %s", e.Current.ResourceID,
		e.Current.CreatedAt.UTC().Format(time.RFC3339Nano), e.Claimed.UTC().Format(time.RFC3339Nano))
}

// Unwrap returns ErrNewHolder.
func (e *NewHolderError) Unwrap() error { return ErrNewHolder }

// keptForANewHolder is what DeleteAllocationClaimedAt reports when its delete matched no row, given
// the driver's read of the row in the same transaction: none (gone already: success, as
// DeleteAllocation's), or another holder's.
func keptForANewHolder(current *Allocation, err error, claimed time.Time) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return &NewHolderError{Claimed: claimed, Current: current}
}
