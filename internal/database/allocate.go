package database

import (
	"context"
	"database/sql"
	"encoding/json"
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

// allocationReads are the two reads Allocate's decision needs, inside a driver's transaction.
type allocationReads struct {
	find func(ctx context.Context, resourceID string) (*Allocation, error) // ErrNotFound when none
	used func(ctx context.Context) (map[string]int, error)                 // slots in use per host
}

// decide is the part of Allocate that both drivers share, run inside their transaction with the
// ledger's lock held: the resource's current allocation (nil when none), the slots in use per host,
// place's decision, and its check. place's own error comes back as placeErr, apart from err, so
// that it reaches the caller unwrapped (and is never retried).
func decide(ctx context.Context, reads allocationReads, resourceID string, place PlaceFunc) (next *Allocation, placeErr, err error) {
	current, err := reads.find(ctx, resourceID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	used, err := reads.used(ctx)
	if err != nil {
		return nil, nil, err
	}
	next, placeErr = place(current, used)
	if placeErr != nil {
		return nil, placeErr, nil
	}
	if err := checkPlaced(next); err != nil {
		return nil, nil, err
	}
	return next, nil, nil
}

// sqliteUsedQuery and pgUsedQuery read the slots in use per host from the running totals that the
// triggers of migration 0005 (host_usage) keep in the same transaction as every write to allocations:
// one row per host, whatever the number of allocations (summing allocations instead costs O(N) per
// Allocate, O(N^2) per apply). PostgreSQL reads them through a SECURITY DEFINER function, so that a
// role granted only allocations (before host_usage existed) still can.
const (
	sqliteUsedQuery = `SELECT host, slots FROM host_usage WHERE allocations > 0`
	pgUsedQuery     = `SELECT host, slots FROM rill_host_usage()`
)

// upsertOnConflict is the conflict clause of both drivers' upsert of an allocation, given the
// driver's parameter of Allocation.NewHolder: everything but the resource ID is replaced, and
// created_at only for a new holder.
func upsertOnConflict(newHolder string) string {
	return `ON CONFLICT (resource_id) DO UPDATE SET
	created_at  = CASE WHEN ` + newHolder + ` THEN excluded.created_at ELSE allocations.created_at END,
	provisioner = excluded.provisioner,
	host        = excluded.host,
	slots       = excluded.slots,
	updated_at  = excluded.updated_at,
	name        = excluded.name,
	version     = excluded.version,
	hibernated  = excluded.hibernated,
	environment = excluded.environment,
	annotations = excluded.annotations`
}

// hostSumRows are the rows of sqliteUsedQuery or pgUsedQuery.
type hostSumRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readHostSums reads slots in use per host from hostSumRows (the caller closes them).
func readHostSums(rows hostSumRows) (map[string]int, error) {
	used := map[string]int{}
	for rows.Next() {
		var host string
		var n int64
		if err := rows.Scan(&host, &n); err != nil {
			return nil, err
		}
		used[host] = int(n)
	}
	return used, rows.Err()
}

// recordColumns are an allocation's nullable columns of schema version 2 (name and the runtime's
// record), in the types both drivers bind and scan. Annotations are a JSON object.
type recordColumns struct {
	name, version, environment, annotations sql.NullString
	hibernated                              sql.NullBool
}

// recordColumnsOf returns the columns to store for a.
func recordColumnsOf(a *Allocation) (recordColumns, error) {
	var c recordColumns
	c.name = sql.NullString{String: a.Name, Valid: a.Name != ""}
	if r := a.Runtime; r != nil {
		ann := r.Annotations
		if ann == nil {
			ann = map[string]string{}
		}
		b, err := json.Marshal(ann)
		if err != nil {
			return c, fmt.Errorf("%w: annotations: %v", ErrInvalidAllocation, err)
		}
		c.version = sql.NullString{String: r.Version, Valid: true}
		c.environment = sql.NullString{String: r.Environment, Valid: true}
		c.annotations = sql.NullString{String: string(b), Valid: true}
		c.hibernated = sql.NullBool{Bool: r.Hibernated, Valid: true}
	}
	return c, nil
}

// scanTargets are the pointers to scan the columns into, in the order the backends select them
// (pgRecordColumns, sqliteRecordColumns).
func (c *recordColumns) scanTargets() []any {
	return []any{&c.name, &c.version, &c.hibernated, &c.environment, &c.annotations}
}

// fill sets a's Name and Runtime from the scanned columns. A row without a recorded version was written
// before the ledger recorded runtimes: its Runtime stays nil (unknown).
func (c *recordColumns) fill(a *Allocation) error {
	a.Name = c.name.String
	if !c.version.Valid {
		return nil
	}
	r := &RuntimeRecord{Version: c.version.String, Hibernated: c.hibernated.Bool, Environment: c.environment.String}
	if c.annotations.Valid && c.annotations.String != "" {
		if err := json.Unmarshal([]byte(c.annotations.String), &r.Annotations); err != nil {
			return fmt.Errorf("allocation %s: annotations column is not a JSON object of strings: %w", a.ResourceID, err)
		}
	}
	a.Runtime = r
	return nil
}

// ErrNameTaken is wrapped by Allocate's error when another resource ID of the same provisioner already
// holds the allocation's name.
var ErrNameTaken = errors.New("name already taken")

// nameTakenError is Allocate's error, on both backends, when the name index refused next: another
// resource ID of next's provisioner holds its name.
func nameTakenError(next *Allocation) error {
	return fmt.Errorf("%w: provisioner %q already has a resource named %q", ErrNameTaken, next.Provisioner, next.Name)
}
