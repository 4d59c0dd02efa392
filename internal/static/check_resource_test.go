package static

import (
	"context"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// The ledger is the truth: an allocation resized out of band (another tool, an operator's UPDATE) is
// what CheckResource reports, whatever the configuration asks for, so Terraform plans the way back.
func TestCheckResourceReportsTheLedgersSlotsNotTheConfigured(t *testing.T) {
	p, db, _ := newPool(t, twoHosts)
	r, err := provision(t, p, "rt", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Allocate(context.Background(), "rt", func(current *database.Allocation, _ map[string]int) (*database.Allocation, error) {
		next := *current
		next.Slots = 2
		return &next, nil
	}); err != nil {
		t.Fatal(err)
	}

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
