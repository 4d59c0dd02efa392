package database

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// Identity is who a ledger is: the random ID it was given once, when its schema was created (or first
// migrated by a provider that knows identities), and where it was reached. Callers record the ID of
// the ledger they allocated in, and compare it on later reads: a different ID means another ledger,
// never "the allocation was deleted".
type Identity struct {
	// ID is the ledger's identity. It is "" for a ledger created before identities existed that has
	// not been opened for writing since (OpenReadOnly does not migrate it); Open gives it one.
	ID string
	// Location is the ledger's DSN with any password redacted, to name it in messages.
	Location string
}

// ErrNoLedger is wrapped by Identity on a handle from OpenReadOnly when the ledger does not exist: no
// SQLite file, or a PostgreSQL database without the ledger's tables. Such a handle reads as an empty
// ledger; only the first write (Open) creates it.
var ErrNoLedger = errors.New("the ledger does not exist")

// ErrReadOnly is returned by the writes of a handle from OpenReadOnly.
var ErrReadOnly = errors.New("the ledger was opened read-only")

// ErrLocked is wrapped by the error of an operation that gave up waiting for the ledger's write lock.
var ErrLocked = errors.New("locked by another writer (another terraform apply?)")

// LockWait bounds how long a write waits for the ledger's write lock while nobody else commits: a
// ledger transaction holds the lock for milliseconds, so a lock held that long belongs to a stuck
// writer (an interrupted process, a sqlite3 shell left in a transaction). The operation's context
// bounds the wait as well, whichever ends first. SQLite keeps waiting while other writers make
// progress (their commits show in the WAL); PostgreSQL applies it as lock_timeout.
var LockWait = 15 * time.Second

// LockedError says that an operation gave up waiting for the ledger's write lock. It wraps ErrLocked
// and, when the operation's context ended first, the context's error.
type LockedError struct {
	Location string        // the ledger, redacted
	Waited   time.Duration // how long the operation waited
	Lock     string        // what it waited for; "" for the ledger's write lock
	// Earlier is how long an earlier operation of this process waited for the same lock before it gave
	// up, which made this one try it only briefly; 0 when it waited its own LockWait.
	Earlier time.Duration
	Cause   error // the last error from the store, or the context's
}

// pgOtherLock is what a PostgreSQL statement waited for that its transaction's lock_timeout ended: not
// the ledger's write lock (the advisory lock of an allocation or a migration) but a lock on the rows
// or tables it reads or writes.
const pgOtherLock = "a row or table lock that another session holds"

func (e *LockedError) Error() string {
	lock := e.Lock
	if lock == "" {
		lock = "its write lock"
	}
	if e.Earlier > 0 {
		lock += fmt.Sprintf(", which an earlier operation gave up on after %s", e.Earlier.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("ledger %s is %v: waited %s for %s (%v)", e.Location, ErrLocked, e.Waited.Round(100*time.Millisecond), lock, e.Cause)
}

// Unwrap returns ErrLocked and the cause.
func (e *LockedError) Unwrap() []error { return []error{ErrLocked, e.Cause} }

// WaitError says that an operation on the ledger gave up because its context ended (the operation's
// deadline, or an interrupt) while it waited: on PostgreSQL for the server (a statement queued behind
// a lock another session holds: another terraform apply on another runner, stuck or slow; or a server
// that stopped answering), on SQLite for its reads and writes of the file. It wraps the context's
// error. A wait for the ledger's write lock is a *LockedError.
type WaitError struct {
	Location string        // the ledger, redacted
	Op       string        // what the operation did, e.g. "list allocations"
	Waited   time.Duration // how long it waited
	Cause    error         // the store's error; wraps the context's
	// For is what it waited for, and Why what may have held it up; both "" for PostgreSQL's server.
	For, Why string
	// Late: the deadline had passed before the operation began; it did not wait (see waits.Ended).
	Late bool
}

// What a SQLite ledger's *WaitError waited for: a wait for its write lock is a *LockedError, so what
// is left is SQLite's own work on the file.
const (
	sqliteWaitFor = "SQLite to read and write the ledger file"
	sqliteWaitWhy = "not a lock, whose wait would say so: a slow or busy disk or network filesystem, or a timeout shorter than the operation needs"
)

func (e *WaitError) Error() string {
	what, why := e.For, e.Why
	if what == "" {
		what, why = "the ledger to answer", "a lock that another session holds, such as another terraform apply, or a server that stopped answering"
	}
	if e.Late {
		return fmt.Sprintf("ledger %s: %s: did not wait for %s: the operation's deadline had passed before it began: %v", e.Location, e.Op, what, e.Cause)
	}
	return fmt.Sprintf("ledger %s: %s: waited %s for %s, until %s (%s): %v",
		e.Location, e.Op, e.Waited.Round(100*time.Millisecond), what, waits.Until(e.Cause), why, e.Cause)
}

// newWaitError is the *WaitError of operation op on the ledger at location, begun at start, whose
// error err came when ctx had ended. It wraps ctx's error.
func newWaitError(ctx context.Context, start time.Time, location, op, what, why string, err error) *WaitError {
	if !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return &WaitError{Location: location, Op: op, Waited: time.Since(start), Cause: err, For: what, Why: why, Late: waits.PassedBefore(ctx, start)}
}

// withContextErr is err, a store's error when ctx had ended, with ctx's error joined to it unless err
// is (or wraps) that already: such an error read "(context deadline exceeded\ncontext deadline
// exceeded)".
func withContextErr(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return errors.Join(err, ctx.Err())
}

// Unwrap returns the cause.
func (e *WaitError) Unwrap() error { return e.Cause }

// absentDB is what OpenReadOnly returns for a ledger that does not exist: every read sees an empty
// ledger, Identity reports ErrNoLedger, writes are refused. Nothing is created.
type absentDB struct {
	driver   string
	location string
}

var _ DB = (*absentDB)(nil)

func (a *absentDB) Driver() string                 { return a.driver }
func (a *absentDB) Close() error                   { return nil }
func (a *absentDB) Ping(ctx context.Context) error { return ctx.Err() }

func (a *absentDB) Identity(context.Context) (Identity, error) {
	return Identity{Location: a.location}, fmt.Errorf("ledger %s: %w (the first apply that allocates creates it)", a.location, ErrNoLedger)
}

func (a *absentDB) Allocate(context.Context, string, PlaceFunc) (*Allocation, error) {
	return nil, fmt.Errorf("ledger %s: %w", a.location, ErrReadOnly)
}

func (a *absentDB) FindAllocation(context.Context, string) (*Allocation, error) {
	return nil, ErrNotFound
}

func (a *absentDB) ListAllocations(context.Context) ([]*Allocation, error) { return nil, nil }

func (a *absentDB) UsedSlotsByHost(context.Context) (map[string]int, error) {
	return map[string]int{}, nil
}

func (a *absentDB) DeleteAllocation(context.Context, string) (bool, error) {
	return false, fmt.Errorf("ledger %s: %w", a.location, ErrReadOnly)
}

func (a *absentDB) DeleteAllocationClaimedAt(ctx context.Context, resourceID string, _ time.Time) (bool, error) {
	return a.DeleteAllocation(ctx, resourceID)
}

// identityKey is the ledger_meta key of the ledger's identity (migration 0003).
const identityKey = "ledger_id"

// identityCache keeps a ledger's identity once read: it never changes.
type identityCache struct {
	id atomic.Pointer[string]
}

// get returns the cached identity, or reads it (read returns "" for a ledger without one yet, which
// is not cached).
func (c *identityCache) get(location string, read func() (string, error)) (Identity, error) {
	if id := c.id.Load(); id != nil {
		return Identity{ID: *id, Location: location}, nil
	}
	id, err := read()
	if err != nil {
		return Identity{Location: location}, err
	}
	if id != "" {
		c.id.Store(&id)
	}
	return Identity{ID: id, Location: location}, nil
}
