package provider

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// lazyLedger opens the ledger on first use. Configure runs for every Terraform command, including
// `terraform validate`-like paths and plans that touch no static pool; opening (and migrating) the
// ledger only when a provisioner actually needs it keeps those side-effect free, and lets a provider
// block name a ledger that does not exist yet at plan time.
type lazyLedger struct {
	dsn    string
	logger *zap.Logger

	mu sync.Mutex
	db database.DB
}

var _ database.DB = (*lazyLedger)(nil)

func newLazyLedger(dsn string, logger *zap.Logger) *lazyLedger {
	return &lazyLedger{dsn: dsn, logger: logger}
}

func (l *lazyLedger) open(ctx context.Context) (database.DB, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != nil {
		return l.db, nil
	}
	db, err := database.Open(ctx, l.dsn, l.logger)
	if err != nil {
		return nil, err // a failed open is retried on the next call
	}
	l.db = db
	return db, nil
}

func (l *lazyLedger) Driver() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != nil {
		return l.db.Driver()
	}
	return "lazy"
}

func (l *lazyLedger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db = nil
	return err
}

func (l *lazyLedger) Ping(ctx context.Context) error {
	db, err := l.open(ctx)
	if err != nil {
		return err
	}
	return db.Ping(ctx)
}

func (l *lazyLedger) Allocate(ctx context.Context, resourceID string, place database.PlaceFunc) (*database.Allocation, error) {
	db, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return db.Allocate(ctx, resourceID, place)
}

func (l *lazyLedger) FindAllocation(ctx context.Context, resourceID string) (*database.Allocation, error) {
	db, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return db.FindAllocation(ctx, resourceID)
}

func (l *lazyLedger) ListAllocations(ctx context.Context) ([]*database.Allocation, error) {
	db, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return db.ListAllocations(ctx)
}

func (l *lazyLedger) UsedSlotsByHost(ctx context.Context) (map[string]int, error) {
	db, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return db.UsedSlotsByHost(ctx)
}

func (l *lazyLedger) DeleteAllocation(ctx context.Context, resourceID string) (bool, error) {
	db, err := l.open(ctx)
	if err != nil {
		return false, err
	}
	return db.DeleteAllocation(ctx, resourceID)
}
