package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// lazyLedger opens the ledger on first use. Configure runs for every Terraform command, including
// `terraform validate`-like paths and plans that touch no static pool; opening the ledger only when a
// provisioner actually needs it keeps those side-effect free, and lets a provider block name a ledger
// that does not exist yet at plan time.
//
// Reads go through a read-only handle (database.OpenReadOnly: it creates no file, table or row and
// migrates nothing, so `terraform plan` writes nothing), until the first write opens the ledger for
// writing (database.Open: create and migrate); from then on everything uses that handle.
//
// The default ledger (no DSN given) is located on the first open too (defaultLedgerDSN): only a static
// pool keeps anything in the ledger, so a set without one configures on a machine where the default
// has no location (a container run as a user ID without a home), and a pool's use fails naming
// ledger_dsn.
//
// Each handle is opened once per process: concurrent callers wait for the one attempt in progress
// (each no longer than its own context allows), and a failed attempt is remembered, so that an
// unreachable ledger costs a plan of many runtimes one connect timeout, not one per runtime. Only an
// attempt cut short by its caller's context (an operation's timeout, Ctrl-C) is tried again.
type lazyLedger struct {
	// dsn is the DSN given, else the default ledger's, located once, on the first call.
	dsn    func() (string, error)
	logger *zap.Logger

	read  onceOpener
	write onceOpener
}

var _ database.DB = (*lazyLedger)(nil)

// defaultLedgerDSN locates the default ledger (a variable so that a test can stand for a machine where
// it has no location: the test's user has a home in /etc/passwd whatever $HOME says).
var defaultLedgerDSN = database.DefaultDSN

// newLazyLedger returns the ledger at dsn, or at the default location when dsn is "".
func newLazyLedger(dsn string, logger *zap.Logger) *lazyLedger {
	l := &lazyLedger{logger: logger, dsn: func() (string, error) { return dsn, nil }}
	if dsn == "" {
		l.dsn = sync.OnceValues(func() (string, error) {
			d, err := defaultLedgerDSN()
			if err != nil {
				// The machine's, not the configuration's (provisioner.ErrFromEnvironment): the plan's
				// warning then says what to set rather than to check the ledger's host and credentials.
				return "", provisioner.FromEnvironment(fmt.Errorf("ledger_dsn is not set (nor %s), and the default SQLite ledger has no location: %w; "+
					"set ledger_dsn, or HOME or %s to a writable directory", envnames.LedgerDSN, err, database.DefaultSQLitePathEnv))
			}
			return d, nil
		})
	}
	l.read.open = func(ctx context.Context) (database.DB, error) {
		dsn, err := l.dsn()
		if err != nil {
			return nil, err
		}
		return database.OpenReadOnly(ctx, dsn, logger)
	}
	l.write.open = func(ctx context.Context) (database.DB, error) {
		dsn, err := l.dsn()
		if err != nil {
			return nil, err
		}
		return database.Open(ctx, dsn, logger)
	}
	l.read.location, l.write.location = l.location, l.location
	return l
}

// location names the ledger in errors: its DSN, redacted.
func (l *lazyLedger) location() string {
	dsn, err := l.dsn()
	if err != nil {
		return "(the default, which has no location here)"
	}
	return database.Redact(dsn)
}

// onceOpener opens one handle once per process.
type onceOpener struct {
	open     func(ctx context.Context) (database.DB, error)
	location func() string

	mu      sync.Mutex
	attempt *openAttempt
}

type openAttempt struct {
	done chan struct{} // closed when the attempt ends; then db and err are set
	db   database.DB
	err  error
	// retry: the attempt failed because its caller's context ended, not because of the ledger.
	retry bool
}

// get returns the handle, opening it (or waiting for the attempt in progress) as needed.
func (o *onceOpener) get(ctx context.Context) (database.DB, error) {
	for {
		o.mu.Lock()
		a := o.attempt
		mine := a == nil || (a.retry && isDone(a.done))
		if mine {
			a = &openAttempt{done: make(chan struct{})}
			o.attempt = a
		}
		o.mu.Unlock()

		if mine {
			a.db, a.err = o.open(ctx)
			a.retry = a.err != nil && ctx.Err() != nil
			close(a.done)
			return a.db, a.err
		}
		start := time.Now()
		if ctx.Err() != nil {
			// Out of time before the wait: the other attempt held nothing up, and is not named.
			return nil, waits.Ended(ctx, start, fmt.Sprintf("the ledger %s to open", o.location()))
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			return nil, waits.Ended(ctx, start, fmt.Sprintf("the ledger %s to open (another operation of this run is opening it)", o.location()))
		}
		switch {
		case a.err == nil:
			return a.db, nil
		case a.retry && ctx.Err() == nil:
			continue // the attempt ran out of its caller's time, not of ours: try again
		}
		return nil, fmt.Errorf("%w (the first attempt of this run failed; not tried again until the next terraform command)", a.err)
	}
}

// opened returns the handle if it has been opened successfully, without opening it.
func (o *onceOpener) opened() database.DB {
	o.mu.Lock()
	defer o.mu.Unlock()
	if a := o.attempt; a != nil && isDone(a.done) && a.err == nil {
		return a.db
	}
	return nil
}

func (o *onceOpener) close() error {
	db := o.opened()
	o.mu.Lock()
	o.attempt = nil
	o.mu.Unlock()
	if db == nil {
		return nil
	}
	return db.Close()
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// reader returns the handle for reads: the write handle once it is open, else the read-only one.
func (l *lazyLedger) reader(ctx context.Context) (database.DB, error) {
	if db := l.write.opened(); db != nil {
		return db, nil
	}
	return l.read.get(ctx)
}

func (l *lazyLedger) Driver() string {
	if db := l.write.opened(); db != nil {
		return db.Driver()
	}
	if db := l.read.opened(); db != nil {
		return db.Driver()
	}
	return "lazy"
}

func (l *lazyLedger) Close() error {
	return errors.Join(l.write.close(), l.read.close())
}

func (l *lazyLedger) Ping(ctx context.Context) error {
	db, err := l.reader(ctx)
	if err != nil {
		return err
	}
	return db.Ping(ctx)
}

func (l *lazyLedger) Identity(ctx context.Context) (database.Identity, error) {
	db, err := l.reader(ctx)
	if err != nil {
		return database.Identity{Location: l.location()}, err
	}
	return db.Identity(ctx)
}

func (l *lazyLedger) Allocate(ctx context.Context, resourceID string, place database.PlaceFunc) (*database.Allocation, error) {
	db, err := l.write.get(ctx)
	if err != nil {
		return nil, err
	}
	return db.Allocate(ctx, resourceID, place)
}

func (l *lazyLedger) FindAllocation(ctx context.Context, resourceID string) (*database.Allocation, error) {
	db, err := l.reader(ctx)
	if err != nil {
		return nil, err
	}
	return db.FindAllocation(ctx, resourceID)
}

func (l *lazyLedger) ListAllocations(ctx context.Context) ([]*database.Allocation, error) {
	db, err := l.reader(ctx)
	if err != nil {
		return nil, err
	}
	return db.ListAllocations(ctx)
}

func (l *lazyLedger) UsedSlotsByHost(ctx context.Context) (map[string]int, error) {
	db, err := l.reader(ctx)
	if err != nil {
		return nil, err
	}
	return db.UsedSlotsByHost(ctx)
}

func (l *lazyLedger) DeleteAllocation(ctx context.Context, resourceID string) (bool, error) {
	db, err := l.write.get(ctx)
	if err != nil {
		return false, err
	}
	return db.DeleteAllocation(ctx, resourceID)
}

func (l *lazyLedger) DeleteAllocationClaimedAt(ctx context.Context, resourceID string, createdAt time.Time) (bool, error) {
	db, err := l.write.get(ctx)
	if err != nil {
		return false, err
	}
	return db.DeleteAllocationClaimedAt(ctx, resourceID, createdAt)
}
