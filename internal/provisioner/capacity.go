package provisioner

import (
	"context"
	"errors"
	"sync"
)

// ErrInsufficientCapacity is what a pool's Provision wraps when no host has room for a resource (the
// static pool's *CapacityError), in the words of Rill's admin service; the Terraform layer's plan-time
// capacity warning quotes it.
var ErrInsufficientCapacity = errors.New("no runtimes found with sufficient available slots")

// HostCapacity is the use of one host of a pool.
type HostCapacity struct {
	Host      string
	Slots     int
	UsedSlots int
	Runtimes  int
	// Removed marks a host that is no longer in the pool's spec but on which the pool still holds
	// allocations (Slots is 0): destroying or replacing those runtimes frees them.
	Removed bool
}

// FreeSlots is how many more slots the host has room for: none when its allocations fill it or
// exceed it (a host whose slots the spec lowered, or one removed from the spec).
func (h HostCapacity) FreeSlots() int64 { return max(int64(h.Slots)-int64(h.UsedSlots), 0) }

// CapacityReporter is implemented by provisioners with a fixed capacity (the static pool). The Terraform
// layer's data source uses it to show how full a pool is before an apply.
type CapacityReporter interface {
	Capacity(ctx context.Context) ([]HostCapacity, error)
}

// ReadCacher is implemented by provisioners whose CheckResource may answer from what an earlier call
// read (the kubernetes provisioner's snapshots, which serve every read of a refresh). The provider
// calls ForgetReads whenever Terraform configures it, at the start of every Terraform command, so that
// no cached read outlives the command that made it: the provider process, and the provisioners it
// builds once per configuration, can outlive many commands (the acceptance tests run them all in one
// process).
type ReadCacher interface {
	ForgetReads()
}

// Named is implemented by provisioners that want to know their name in the set; NewSet calls SetName
// right after building them.
type Named interface {
	SetName(name string)
}

// SetMember implements Named for a provisioner that embeds it, and gives the provisioner its name back
// through NameInSet. The name can be set after the provisioner has started serving calls (NewSet sets
// it right after building), so it is guarded.
type SetMember struct {
	mu   sync.RWMutex
	name string
}

// SetName implements Named.
func (m *SetMember) SetName(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.name = name
}

// NameInSet is the name NewSet gave the provisioner ("" before that, e.g. in a provisioner built
// outside a set).
func (m *SetMember) NameInSet() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.name
}
