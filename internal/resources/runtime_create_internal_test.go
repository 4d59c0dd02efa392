package resources

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// contractOnly is a real provisioner seen through the contract alone: without the optional
// interfaces it implements (provisioner.CreationReporter among them), as a provisioner that does not
// implement them is seen.
type contractOnly struct{ provisioner.Provisioner }

// Create may undo a failed Provision only when it created what is at the ID: a provisioner that
// reports creation says so (nothing, for a create that failed before it claimed the ID: a full pool
// here, an unreachable ledger alike); any other is asked before Provision (nothingAt) for a named
// runtime, which tells a free ID from one that holds a runtime when nobody creates it meanwhile, and
// may always undo a runtime without a name (its random ID can hold only this call's work).
func TestProvisionNewUndoesOnlyWhatItCreated(t *testing.T) {
	for name, wrap := range map[string]func(provisioner.Provisioner) provisioner.Provisioner{
		"creation reporter": func(p provisioner.Provisioner) provisioner.Provisioner { return p },
		"contract only":     func(p provisioner.Provisioner) provisioner.Provisioner { return contractOnly{p} },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			p := wrap(onePoolOn(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db")))
			if _, ok := p.(provisioner.CreationReporter); ok != (name == "creation reporter") {
				t.Fatalf("the provisioner implements CreationReporter: %v", ok)
			}
			opts := func(name string) *provisioner.ResourceOptions {
				return &provisioner.ResourceOptions{Name: name, Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}
			}
			id := provisioner.NamedResourceID("pool", "orders")
			if _, undoable, err := provisionNew(ctx, p, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts("orders")); err != nil || !undoable {
				t.Fatalf("a named runtime at a free ID: undoable=%v err=%v, want true (it created it)", undoable, err)
			}
			if _, undoable, err := provisionNew(ctx, p, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts("orders")); err != nil || undoable {
				t.Fatalf("a named runtime found at its ID: undoable=%v err=%v, want false (it adopted it)", undoable, err)
			}
			// The pool's one slot is taken: this create fails before it claims its random ID.
			wantUndo := name == "contract only" // which cannot tell
			if _, undoable, err := provisionNew(ctx, p, &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeRuntime}, opts("")); err == nil || undoable != wantUndo {
				t.Fatalf("a runtime without a name on a full pool: undoable=%v err=%v, want %v and the capacity error", undoable, err, wantUndo)
			}
		})
	}
}
