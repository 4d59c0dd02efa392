package provisioner

import "context"

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

// CapacityReporter is implemented by provisioners with a fixed capacity (the static pool). The Terraform
// layer's data source uses it to show how full a pool is before an apply.
type CapacityReporter interface {
	Capacity(ctx context.Context) ([]HostCapacity, error)
}

// Named is implemented by provisioners that want to know their name in the set; NewSet calls SetName
// right after building them.
type Named interface {
	SetName(name string)
}
