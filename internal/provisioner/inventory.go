package provisioner

import (
	"context"
	"time"
)

// Allocated is one resource a provisioner holds, as its inventory lists it: enough to find an orphan
// (a resource that no Terraform state knows, left by an interrupted apply) and to import it.
type Allocated struct {
	ID          string
	Type        ResourceType
	Name        string // "" when it has none
	Provisioner string
	Host        string
	Slots       int
	Environment string
	Annotations map[string]string
	CreatedAt   time.Time
}

// Inventory is implemented by provisioners that can list what they hold (the static pool, from its
// ledger). The rill_allocations data source uses it.
type Inventory interface {
	Allocated(ctx context.Context) ([]Allocated, error)
}

// StoreChecker is implemented by provisioners whose Inventory and Capacity read a store that may not
// exist yet (the static pool's ledger, which the first apply that allocates creates): such a store
// reads as empty. MissingStore returns what says so, naming the store, when it does not exist, and ""
// when it does. It creates nothing.
type StoreChecker interface {
	MissingStore(ctx context.Context) (string, error)
}
