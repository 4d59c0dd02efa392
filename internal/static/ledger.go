package static

import (
	"context"
	"errors"
	"fmt"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// State keys that record the ledger a runtime was allocated in.
const (
	// stateLedgerID is the ledger's identity (database.Identity.ID).
	stateLedgerID = "ledger_id"
	// stateLedger is where that ledger was reached (the redacted DSN), to name it in errors. It is
	// left out for the default SQLite ledger (database.IsDefaultLocation): that path names a home
	// directory of the machine that applied, which another machine or CI runner does not share, and
	// Terraform rewrites the whole state after each resource an apply completes, so its bytes (a
	// tenth of a runtime's state) would be written N times in an apply of N runtimes. A recorded
	// ledger_id without a location is therefore "the default ledger where it was applied".
	stateLedger = "ledger"
)

// checkLedger compares the ledger the runtime was allocated in, as recorded in r.State, with the one
// the provisioner reaches now. It reads only, so a missing ledger stays missing. A runtime recorded
// before ledgers had identities (no ledger_id) is taken to be in the current ledger, which it then
// records (see DESIGN.md, "Ledger and cluster identity"). It returns the current identity; exists is
// false for a missing ledger when r records no allocation at all (recordsAllocation).
func (p *Provisioner) checkLedger(ctx context.Context, r *provisioner.Resource) (cur database.Identity, exists bool, err error) {
	recorded, _ := r.State[stateLedgerID].(string)
	recordedAt, _ := r.State[stateLedger].(string)
	cur, err = p.db.Identity(ctx)
	switch {
	case errors.Is(err, database.ErrNoLedger):
		if !recordsAllocation(r) {
			return cur, false, nil
		}
		return cur, false, &LedgerMismatchError{ResourceID: r.ID, Recorded: recorded, RecordedLocation: recordedAt, Current: cur, Missing: true}
	case err != nil:
		return cur, false, fmt.Errorf("reading the identity of the ledger: %w", err)
	case recorded != "" && cur.ID != recorded:
		return cur, true, &LedgerMismatchError{ResourceID: r.ID, Recorded: recorded, RecordedLocation: recordedAt, Current: cur}
	}
	return cur, true, nil
}

// recordsAllocation reports whether r is a runtime that a completed create allocated: its state, or
// its host (which Terraform keeps in the resource's attributes), says so. Only a runtime that records
// nothing, an import or the undo of a failed create (whose Provision returned nothing), can have
// nothing in a ledger that does not exist. A state from before ledgers had identities has no
// ledger_id, and its private state may be empty (the Terraform layer keeps no observed keys), but it
// was allocated in a ledger that existed: before, its destroy read a missing ledger as "nothing to
// free" (the runtime left state, its slots stayed booked in the real ledger) and its update
// allocated in a new ledger.
func recordsAllocation(r *provisioner.Resource) bool {
	host, _ := r.Config["host"].(string)
	return len(r.State) > 0 || host != ""
}

// LedgerMismatchError says that a runtime was allocated in another ledger than the one the provider
// reaches now, or that the ledger it reaches does not exist. It wraps
// provisioner.ErrIdentityMismatch, never ErrResourceNotFound.
type LedgerMismatchError struct {
	ResourceID       string
	Recorded         string // "" for a runtime recorded before ledgers had identities
	RecordedLocation string
	Current          database.Identity
	Missing          bool // the current ledger does not exist
}

func (e *LedgerMismatchError) Error() string {
	recordedDefault := e.Recorded != "" && e.RecordedLocation == ""
	was := "a ledger that existed then"
	switch {
	case recordedDefault:
		was = "ledger " + e.Recorded + ", the default SQLite ledger of the machine that applied it"
	case e.Recorded != "":
		was = "ledger " + e.Recorded + " at " + e.RecordedLocation
	}
	var now string
	switch {
	case e.Missing && e.Current.Location == e.RecordedLocation:
		// The DSN it was allocated through: the SQLite file (or the database's tables) went away.
		now = fmt.Sprintf("no ledger exists at %s any more (was it moved or deleted?)", e.Current.Location)
	case e.Missing && recordedDefault && database.IsDefaultLocation(e.Current.Location):
		// Both the default: this machine's may never have held it (another runner, another $HOME).
		now = fmt.Sprintf("the default ledger here, %s, does not exist (another machine or CI runner, "+
			"or another $HOME or $"+database.DefaultSQLitePathEnv+", has a default ledger of its own; or it was moved or deleted)", e.Current.Location)
	case e.Missing:
		now = fmt.Sprintf("the provider's ledger is now %s, which does not exist", e.Current.Location)
	case e.Current.ID == "":
		now = fmt.Sprintf("the provider's ledger is now a ledger without an identity at %s", e.Current.Location)
	default:
		now = fmt.Sprintf("the provider's ledger is now ledger %s at %s", e.Current.ID, e.Current.Location)
	}
	return fmt.Sprintf("%v: runtime %s was allocated in %s, but %s. "+
		"Not treating the runtime as deleted: set ledger_dsn (or "+envnames.LedgerDSN+"; the default SQLite ledger lives under "+
		"$"+database.DefaultSQLitePathEnv+" or ~/.local/share) to the ledger the runtime was allocated in. If that ledger is lost for good, "+
		"remove the runtime from state with `terraform state rm`",
		provisioner.ErrIdentityMismatch, e.ResourceID, was, now)
}

// Unwrap returns provisioner.ErrIdentityMismatch.
func (e *LedgerMismatchError) Unwrap() error { return provisioner.ErrIdentityMismatch }
