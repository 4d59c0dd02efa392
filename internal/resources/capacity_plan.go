package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// planCapacityTimeout bounds the ledger read of the plan-time capacity check: it is advice, and must
// not hold a plan up.
const planCapacityTimeout = 30 * time.Second

// warnIfNoRoom warns at plan time when a new runtime of `slots` slots fits on no host of a
// fixed-capacity pool (provisioner.CapacityReporter) as the ledger stands, so that a pool that is too
// small shows in the plan rather than half-way through the apply. It is a warning, not an error: the
// same apply may free slots before it creates (a replacement, a destroyed runtime) and another
// pipeline may free or take slots between plan and apply. Each runtime is checked on its own, not
// the sum of the plan. It only reads; a ledger that cannot be read skips the check (Read reports it).
func warnIfNoRoom(ctx context.Context, p provisioner.Provisioner, name string, slots int, diags *diag.Diagnostics) {
	cr, ok := p.(provisioner.CapacityReporter)
	if !ok || slots < 1 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planCapacityTimeout)
	defer cancel()
	hosts, err := cr.Capacity(ctx)
	if err != nil {
		tflog.Debug(ctx, "plan-time capacity check skipped: the ledger could not be read", map[string]any{"provisioner": name, "error": err.Error()})
		return
	}
	var free []string
	for _, h := range hosts {
		if h.Removed {
			continue
		}
		f := int64(h.Slots) - int64(h.UsedSlots)
		if f >= int64(slots) {
			return
		}
		free = append(free, fmt.Sprintf("%s %d of %d", h.Host, max(f, 0), h.Slots))
	}
	if len(free) == 0 {
		free = append(free, "the pool lists no host")
	}
	diags.AddAttributeWarning(path.Root("slots"), "No host has room for this runtime",
		fmt.Sprintf("Provisioner %q has no host with %d free slot(s) right now (free slots per host: %s). The apply will fail with "+
			"\"no runtimes found with sufficient available slots\" unless slots are freed first (a runtime destroyed or replaced "+
			"in the same apply, or by another pipeline). Add hosts or slots to the pool, or lower slots.",
			name, slots, strings.Join(free, ", ")))
}
