// Package ledgerbarrier makes callers of a real ledger overlap for certain: a Barrier holds the first
// n Allocate calls made through the handles it wraps until all n have arrived, then lets them all go
// to the ledger at once. Everything else goes straight through; the ledger is the real one, so what
// happens after the barrier (which caller's transaction wins the ledger's lock) is the ledger's doing.
//
// A test that races two Provision calls for one resource ID needs both to have done everything they do
// before they write (any read of the ledger a Provision makes to decide something, a Terraform layer's
// check before Provision) before either writes: without the barrier, a loaded machine often runs one
// call to its end before the other starts, and the test proves nothing. Allocate is where a Provision
// claims the ID, so the barrier sits at its door: a barrier inside the transaction would wait for a
// caller that waits for the lock it holds.
package ledgerbarrier

import (
	"context"
	"fmt"
	"sync"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// Barrier releases the first n Allocate calls through its handles once all n have arrived.
type Barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{} // closed when n have arrived
}

// New returns a barrier for n Allocate calls.
func New(n int) *Barrier {
	return &Barrier{n: n, all: make(chan struct{})}
}

// Wrap returns db with its Allocate calls held at the barrier.
func (b *Barrier) Wrap(db database.DB) database.DB {
	return &ledger{DB: db, barrier: b}
}

// Passed reports whether all n calls have arrived (and were released together).
func (b *Barrier) Passed() bool {
	select {
	case <-b.all:
		return true
	default:
		return false
	}
}

// wait holds a caller until n have arrived, or until its context ends (an error saying how many came).
func (b *Barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("ledgerbarrier: %d of %d Allocate calls arrived before the context ended: %w", b.arrived, b.n, ctx.Err())
	}
}

// ledger is a real ledger handle whose Allocate waits at the barrier first.
type ledger struct {
	database.DB
	barrier *Barrier
}

func (l *ledger) Allocate(ctx context.Context, resourceID string, place database.PlaceFunc) (*database.Allocation, error) {
	if err := l.barrier.wait(ctx); err != nil {
		return nil, err
	}
	return l.DB.Allocate(ctx, resourceID, place)
}
