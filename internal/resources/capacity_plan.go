package resources

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// planCapacityTimeout bounds the ledger read of the plan-time capacity check: it is advice, and must
// not hold a plan up.
const planCapacityTimeout = 30 * time.Second

// capacityMaxAge is how old a pool's capacity read may be for the plan-time check to use it again.
// Reading the pool's use is a read of its whole ledger, so one read per planned runtime made the
// plans of N new runtimes cost O(N^2) (at 1,000 runtimes, 42% of the provider's CPU in an apply,
// BENCHMARKS.md): the plans of a command share a read instead, at most this old.
const capacityMaxAge = time.Second

// capacityReads shares the plan-time capacity reads of one Terraform command (the Client a Configure
// builds) per provisioner. Nothing in a plan writes to a ledger, so within a plan a shared read is
// what each plan would have read. In an apply, the Creates between two plans only take slots: a read
// up to capacityMaxAge old can miss a warning that the Create's own error then replaces, never warn
// wrongly. Updates and Deletes can free slots, and drop the provisioner's read (forget).
//
// Once the command has applied a change, the check is off (inApply): it is then an apply walk, whose
// plans Terraform made and showed in the plan walk before (each walk configures the provider anew,
// so a Client serves one), and where a Create on a full pool fails with its own error. Left on, an
// apply of N runtimes re-read the whole ledger every maxAge for as long as it ran: at 5,000 runtimes
// 360 s of reads of 5,000 rows, which made the provider's CPU per runtime grow with N (BENCHMARKS.md,
// "Scale").
type capacityReads struct {
	mu      sync.Mutex
	reads   map[string]*capacityRead
	now     func() time.Time // time.Now unless a test sets a clock
	inApply atomic.Bool
}

// applying records that the command applies changes (a Create, Update or Delete began): the checks
// that follow are skipped.
func (c *capacityReads) applying() { c.inApply.Store(true) }

// capacityRead is one Capacity call, shared by the callers that came while it was running or fresh.
type capacityRead struct {
	done    chan struct{} // closed when hosts and err are set
	started time.Time
	hosts   []provisioner.HostCapacity
	err     error
}

// get returns the capacity of provisioner name: a read at most capacityMaxAge old (waiting for one in
// progress), else a new one.
func (c *capacityReads) get(ctx context.Context, name string, cr provisioner.CapacityReporter) ([]provisioner.HostCapacity, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	c.mu.Lock()
	r, ok := c.reads[name]
	if !ok || (isClosed(r.done) && now().Sub(r.started) > capacityMaxAge) {
		r = &capacityRead{done: make(chan struct{}), started: now()}
		if c.reads == nil {
			c.reads = map[string]*capacityRead{}
		}
		c.reads[name] = r
		c.mu.Unlock()
		r.hosts, r.err = cr.Capacity(ctx)
		close(r.done)
		return r.hosts, r.err
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.hosts, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget drops the read of provisioner name: its ledger changed in a way that may have freed slots.
func (c *capacityReads) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reads, name)
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// warnIfNoRoom warns at plan time when a new runtime of `slots` slots fits on no host of a
// fixed-capacity pool (provisioner.CapacityReporter) as the ledger stands, so that a pool that is too
// small shows in the plan rather than half-way through the apply. It is a warning, not an error: the
// same apply may free slots before it creates (a replacement, a destroyed runtime) and another
// pipeline may free or take slots between plan and apply. Each runtime is checked on its own, not
// the sum of the plan. It only reads, through the command's shared reads (capacityReads); a ledger
// that cannot be read skips the check (Read reports it).
func warnIfNoRoom(ctx context.Context, reads *capacityReads, p provisioner.Provisioner, name string, slots int, diags *diag.Diagnostics) {
	cr, ok := p.(provisioner.CapacityReporter)
	if !ok || slots < 1 || reads.inApply.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planCapacityTimeout)
	defer cancel()
	hosts, err := reads.get(ctx, name, cr)
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
			"%q unless slots are freed first (a runtime destroyed or replaced "+
			"in the same apply, or by another pipeline). Add hosts or slots to the pool, or lower slots.",
			name, slots, strings.Join(free, ", "), provisioner.ErrInsufficientCapacity.Error()))
}
