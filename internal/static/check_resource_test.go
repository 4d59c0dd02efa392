package static

import (
	"context"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// editRow changes a runtime's ledger row out of band, as another tool or an operator would.
func editRow(t *testing.T, db database.DB, id string, edit func(*database.Allocation)) {
	t.Helper()
	if _, err := db.Allocate(context.Background(), id, func(current *database.Allocation, _ map[string]int) (*database.Allocation, error) {
		next := *current
		edit(&next)
		return &next, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// The ledger is the truth: an allocation resized out of band (another tool, an operator's UPDATE) is
// what CheckResource reports, whatever the configuration asks for, so Terraform plans the way back.
func TestCheckResourceReportsTheLedgersSlotsNotTheConfigured(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt", 1)
	if err != nil {
		t.Fatal(err)
	}
	editRow(t, db, "rt", func(a *database.Allocation) { a.Slots = 2 })

	got, err := p.CheckResource(context.Background(), r, runtimeOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	if got.State[stateSlots] != 2 || got.Config["cpu"] != 2 || got.Config["memory_gb"] != 8 {
		t.Fatalf("after the ledger went from 1 to 2 slots, CheckResource reports state %v, config %v", got.State, got.Config)
	}
	if hostOf(got) != hostOf(r) {
		t.Fatalf("host changed from %s to %s", hostOf(r), hostOf(got))
	}
}

// A row written before the ledger recorded runtime arguments has no version or hibernation: they are
// reported as the caller's state has them, and not at all when it has none (the Terraform layer
// stores states without observations), so that the caller's own values stand instead of a "not
// hibernated" the ledger never said.
func TestCheckResourceOfARowWithoutARuntimeRecordReportsOnlyWhatTheStateHas(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt", 1)
	if err != nil {
		t.Fatal(err)
	}
	editRow(t, db, "rt", func(a *database.Allocation) { a.Runtime = nil })
	if a, err := db.FindAllocation(context.Background(), "rt"); err != nil || a.Runtime != nil {
		t.Fatalf("the row kept a runtime record: %+v, %v", a, err)
	}

	stored := provisioner.WithoutObservations(r.State)
	got, err := p.CheckResource(context.Background(), &provisioner.Resource{ID: "rt", Type: provisioner.ResourceTypeRuntime, State: stored}, runtimeOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	if o := provisioner.NewRuntimeObservation(got.State); o.Version != "" || o.Hibernated != nil || o.Slots != 1 {
		t.Fatalf("from a state without observations: observed %+v, want slots only", o)
	}

	stored[stateVersion], stored[stateHibernated] = "v0.50.0", true
	got, err = p.CheckResource(context.Background(), &provisioner.Resource{ID: "rt", Type: provisioner.ResourceTypeRuntime, State: stored}, runtimeOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	if o := provisioner.NewRuntimeObservation(got.State); o.Version != "v0.50.0" || o.Hibernated == nil || !*o.Hibernated {
		t.Fatalf("from a state that has them: observed %+v, want v0.50.0 and hibernated", o)
	}
}
