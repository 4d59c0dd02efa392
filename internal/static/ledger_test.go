package static

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// A runtime records the identity of the ledger it was allocated in. Against another ledger (one
// with another identity, or one that does not exist) refresh, update and destroy are errors that name
// both ledgers and the fix; nothing is written to the other ledger and nothing is created.
func TestARuntimeInAnotherLedgerIsAnErrorNeverGone(t *testing.T) {
	ctx := context.Background()
	a, dbA, _ := newPool(t, twoHosts)
	idA, err := dbA.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := provision(t, a, "rt-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.State[stateLedgerID] != idA.ID || r.State[stateLedger] != idA.Location {
		t.Fatalf("Provision recorded ledger %v at %v, want %s at %s", r.State[stateLedgerID], r.State[stateLedger], idA.ID, idA.Location)
	}
	if got, err := a.CheckResource(ctx, r, nil); err != nil || got.State[stateLedgerID] != idA.ID {
		t.Fatalf("CheckResource in its own ledger = %+v, %v", got, err)
	}

	b, dbB, _ := newPool(t, twoHosts) // another ledger, same pool spec
	idB, _ := dbB.Identity(ctx)
	missing, missingPath := poolOfAMissingLedger(t)
	for name, tc := range map[string]struct {
		p    *Provisioner
		want []string
	}{
		"another ledger": {b, []string{idA.ID, idA.Location, idB.ID, idB.Location}},
		"missing ledger": {missing, []string{idA.ID, idA.Location, "sqlite://" + missingPath + ", which does not exist"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, errCheck := tc.p.CheckResource(ctx, r, runtimeOpts(1))
			_, errUpdate := tc.p.Provision(ctx, r, runtimeOpts(2))
			errDelete := tc.p.Deprovision(ctx, r)
			for op, err := range map[string]error{"CheckResource": errCheck, "Provision": errUpdate, "Deprovision": errDelete} {
				var me *LedgerMismatchError
				if !errors.As(err, &me) || !errors.Is(err, provisioner.ErrIdentityMismatch) || errors.Is(err, provisioner.ErrResourceNotFound) {
					t.Fatalf("%s: %v; want a LedgerMismatchError, not ErrResourceNotFound", op, err)
				}
				for _, w := range append(tc.want, "ledger_dsn", "terraform state rm") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error lacks %q: %v", op, w, err)
					}
				}
			}
			t.Logf("error: %v", errCheck)
		})
	}
	if list, err := dbB.ListAllocations(ctx); err != nil || len(list) != 0 {
		t.Errorf("the other ledger got allocations: %v, %v", list, err)
	}
	// The ledger is gone from the place the runtime was allocated through (the file moved or deleted):
	// the error says that rather than naming one location as both the old and the new ledger.
	moved := *r
	moved.State = maps.Clone(r.State)
	moved.State[stateLedger] = "sqlite://" + missingPath
	_, err = missing.CheckResource(ctx, &moved, runtimeOpts(1))
	if want := "no ledger exists at sqlite://" + missingPath + " any more (was it moved or deleted?)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckResource after the ledger left its place: %v; want %q", err, want)
	}
	if _, err := os.Stat(filepath.Dir(missingPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing ledger's directory was created: %v", err)
	}
	// The runtime is intact in its own ledger.
	if got, err := dbA.FindAllocation(ctx, "rt-1"); err != nil || got.Slots != 1 {
		t.Errorf("allocation in the runtime's own ledger = %+v, %v", got, err)
	}
}

// A runtime allocated in the default SQLite ledger records the ledger's identity without its
// location, a path under a home directory of the machine that applied (state bytes are written N
// times in an apply of N runtimes). Refused on another machine's default ledger, the error says that
// the runtime was in the default ledger of the machine that applied it, and names this one's.
func TestTheDefaultLedgerIsRecordedByItsIdentityAlone(t *testing.T) {
	ctx := context.Background()
	t.Setenv(database.DefaultSQLitePathEnv, t.TempDir())
	dsn, err := database.DefaultDSN()
	if err != nil {
		t.Fatal(err)
	}
	p, r, id := provisionedIn(t, dsn)
	if loc, recorded := r.State[stateLedger]; recorded || r.State[stateLedgerID] != id.ID {
		t.Fatalf("Provision in the default ledger recorded ledger %v at %v; want %s and no location", r.State[stateLedgerID], loc, id.ID)
	}
	if got, err := p.CheckResource(ctx, r, runtimeOpts(1)); err != nil || got.State[stateLedgerID] != id.ID {
		t.Fatalf("CheckResource in its own default ledger = %+v, %v", got, err)
	}

	// Another runner: its own default ledger, which does not exist.
	t.Setenv(database.DefaultSQLitePathEnv, t.TempDir())
	other, _ := database.DefaultDSN()
	missingDB, err := database.OpenReadOnly(ctx, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := New([]byte(twoHosts), missingDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = missing.CheckResource(ctx, r, runtimeOpts(1))
	if !errors.Is(err, provisioner.ErrIdentityMismatch) {
		t.Fatalf("CheckResource on another runner: %v; want ErrIdentityMismatch", err)
	}
	for _, w := range []string{"ledger " + id.ID + ", the default SQLite ledger of the machine that applied it",
		"the default ledger here, " + other + ", does not exist (another machine or CI runner", "ledger_dsn"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

// What decides is the location, not how it was named (DESIGN.md, "Ledger and cluster identity"): a
// ledger_dsn that spells out the default path with ~/ (XDG_DATA_HOME relative, so ignored, as the XDG
// spec says) reaches the default ledger and is recorded as it; one that names another file keeps it.
func TestALedgerDSNNamingTheDefaultPathIsRecordedAsTheDefault(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(database.DefaultSQLitePathEnv, "relative/data")
	for dsn, wantLocation := range map[string]bool{
		"sqlite://~/.local/share/terraform-provider-rill/ledger.db": false,
		"sqlite://~/elsewhere/ledger.db":                            true,
	} {
		_, r, id := provisionedIn(t, dsn)
		if loc, recorded := r.State[stateLedger]; recorded != wantLocation || r.State[stateLedgerID] != id.ID {
			t.Errorf("%s: Provision recorded ledger %v at %v (recorded: %v); want %s, location recorded: %v",
				dsn, r.State[stateLedgerID], loc, recorded, id.ID, wantLocation)
		}
	}
}

// A runtime from before ledgers had identities (no ledger_id in its state) adopts the ledger that
// holds its allocation on the next refresh; an import, or the cleanup of a failed create (nothing
// recorded), in a ledger that does not exist finds nothing and creates nothing.
func TestARuntimeWithoutARecordedLedgerAdoptsTheCurrentOne(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	id, _ := db.Identity(ctx)
	r, err := provision(t, p, "rt-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	delete(r.State, stateLedgerID)
	delete(r.State, stateLedger)
	got, err := p.CheckResource(ctx, r, runtimeOpts(1))
	if err != nil || got.State[stateLedgerID] != id.ID || got.State[stateLedger] != id.Location {
		t.Fatalf("CheckResource of a runtime without a recorded ledger = %+v, %v; want it to record %s", got, err, id.ID)
	}

	missingPath := filepath.Join(t.TempDir(), "none", "ledger.db")
	ro, err := database.OpenReadOnly(ctx, "sqlite://"+missingPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	mp, _ := New([]byte(twoHosts), ro, nil)
	// An import (nothing recorded) from a ledger that does not exist: not found, as for any unknown ID.
	if _, err := mp.CheckResource(ctx, &provisioner.Resource{ID: "rt-2", Type: provisioner.ResourceTypeRuntime}, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("CheckResource of an import from a missing ledger: %v, want ErrResourceNotFound", err)
	}
	if err := mp.Deprovision(ctx, &provisioner.Resource{ID: "rt-2", Type: provisioner.ResourceTypeRuntime}); err != nil {
		t.Fatalf("Deprovision of an unrecorded runtime in a missing ledger: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(missingPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Deprovision created the ledger's directory: %v", err)
	}
}

// provisionedIn provisions runtime rt-1 (one slot) on a two-host pool over a new ledger at dsn, and
// returns the pool, the runtime and the ledger's identity.
func provisionedIn(t *testing.T, dsn string) (*Provisioner, *provisioner.Resource, database.Identity) {
	t.Helper()
	db := ledgertest.Open(t, dsn)
	p, err := New([]byte(twoHosts), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := provision(t, p.(*Provisioner), "rt-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.Identity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provisioner), r, id
}

// A runtime from before ledgers had identities (no ledger_id in its state) was allocated in a ledger
// that existed: on a runner whose ledger is missing, its update and destroy are refused as its
// refresh is, whether its private state still holds keys or holds nothing (the Terraform layer keeps
// no observed keys) and only its host says it was allocated. Before, a destroy with -refresh=false
// read the missing ledger as "nothing to free" (its slots stayed booked in the real ledger), and an
// update allocated it in a new ledger. The undo of a failed create (nothing recorded) still succeeds.
func TestARuntimeWithoutARecordedLedgerNeedsItsLedgerToUpdateOrDestroy(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	preIdentity := &provisioner.Resource{ID: r.ID, Type: r.Type, State: maps.Clone(r.State), Config: r.Config}
	delete(preIdentity.State, stateLedgerID)
	delete(preIdentity.State, stateLedger)
	hostOnly := &provisioner.Resource{ID: r.ID, Type: r.Type, State: provisioner.WithoutObservations(preIdentity.State), Config: r.Config}

	missingPath := filepath.Join(t.TempDir(), "new-runner", "ledger.db")
	ro, err := database.OpenReadOnly(ctx, "sqlite://"+missingPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	mp, _ := New([]byte(twoHosts), ro, nil)
	missing := mp.(*Provisioner)
	for name, rt := range map[string]*provisioner.Resource{"state without ledger_id": preIdentity, "host alone": hostOnly} {
		t.Run(name, func(t *testing.T) {
			_, errCheck := missing.CheckResource(ctx, rt, runtimeOpts(1))
			_, errUpdate := missing.Provision(ctx, rt, runtimeOpts(2))
			errDelete := missing.Deprovision(ctx, rt)
			for op, err := range map[string]error{"CheckResource": errCheck, "Provision": errUpdate, "Deprovision": errDelete} {
				var me *LedgerMismatchError
				if !errors.As(err, &me) || !me.Missing || errors.Is(err, provisioner.ErrResourceNotFound) {
					t.Errorf("%s on a missing ledger: %v; want a LedgerMismatchError saying the ledger is missing", op, err)
				}
			}
		})
	}
	// The undo of a failed create: the failed Provision returned nothing, so nothing is recorded.
	if err := missing.Deprovision(ctx, &provisioner.Resource{ID: "rt-2", Type: provisioner.ResourceTypeRuntime}); err != nil {
		t.Errorf("Deprovision of a failed create's runtime on a missing ledger: %v; want nil", err)
	}
	if _, err := os.Stat(filepath.Dir(missingPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing ledger's directory was created: %v", err)
	}
	if got, err := db.FindAllocation(ctx, "rt-1"); err != nil || got.Slots != 1 {
		t.Errorf("allocation in the runtime's own ledger = %+v, %v; want it kept, 1 slot", got, err)
	}
}

// MissingStore says, naming it, that the ledger does not exist (its inventory and capacity read as
// empty), and creates nothing; of a ledger that exists, even an empty one, it says nothing.
func TestMissingStoreNamesALedgerThatDoesNotExist(t *testing.T) {
	ctx := context.Background()
	missing, missingPath := poolOfAMissingLedger(t)
	if got, err := missing.MissingStore(ctx); err != nil || !strings.Contains(got, "sqlite://"+missingPath) || !strings.Contains(got, "does not exist") {
		t.Errorf("MissingStore of a missing ledger = %q, %v; want it named, as not existing", got, err)
	}
	if _, err := os.Stat(filepath.Dir(missingPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MissingStore created %s: %v", filepath.Dir(missingPath), err)
	}
	present, _, _ := newPool(t, twoHosts)
	if got, err := present.MissingStore(ctx); got != "" || err != nil {
		t.Errorf("MissingStore of an empty ledger that exists = %q, %v; want nothing", got, err)
	}
}

// poolOfAMissingLedger is the twoHosts pool over a SQLite ledger, opened read-only, that does not
// exist (a new runner's), and the ledger's path.
func poolOfAMissingLedger(t *testing.T) (*Provisioner, string) {
	t.Helper()
	missingPath := filepath.Join(t.TempDir(), "new-runner", "ledger.db")
	missingDB, err := database.OpenReadOnly(context.Background(), "sqlite://"+missingPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := New([]byte(twoHosts), missingDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	return missing.(*Provisioner), missingPath
}
