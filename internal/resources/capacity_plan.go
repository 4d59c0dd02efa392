package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// PlanCheckTimeout bounds a plan-time check (the ledger read of the capacity check, the backend's
// reads of a provisioner.CreateChecker, a named runtime's existence check): it must not hold a plan
// up. Exported for the docs' test (docs_test.go), which holds the guides' figure to it.
const PlanCheckTimeout = 30 * time.Second

// capacityMaxAge is how old a pool's capacity read may be for the plan-time check to use it again.
// Reading the pool's use is a read of its whole ledger, so one read per planned runtime made the
// plans of N new runtimes cost O(N^2) (at 1,000 runtimes, 42% of the provider's CPU in an apply,
// BENCHMARKS.md): the plans of a command share a read instead, at most this old.
const capacityMaxAge = time.Second

// capacityReads shares the plan-time reads of one Terraform command (the Client a Configure builds)
// per provisioner: the capacity reads, and the answers of provisioner.CreateChecker (checkCreate),
// which follow the same rules. Nothing in a plan writes to a ledger, so within a plan a shared read is
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
	mu    sync.Mutex
	reads map[string]*capacityRead
	// untold holds the provisioners whose provisioner.ExistenceChecker could not answer in this
	// command (warnIfAdopting): not asked again.
	untold  syncSet
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
	return c.share(ctx, name, fmt.Sprintf("provisioner %q's free slots", name), capacityMaxAge, cr.Capacity)
}

// checkCreate returns the answer of provisioner name's CheckCreate for type rt, shared by the plans
// of the whole command: the plans of N new resources on one server ask it once, and while a server
// does not answer, they wait for the one attempt in progress rather than each dialing it in turn.
// Unlike a capacity read that succeeded, the answer does not expire: Terraform plans at most -parallelism resources
// at once, so with an age limit each later wave would dial a server that does not answer again and
// wait its timeout again. The answer does not change within a plan either: a server's capabilities
// are what they are (a passed check is remembered by the provisioner anyway), and an unreachable
// server is only a warning.
func (c *capacityReads) checkCreate(ctx context.Context, name string, rt provisioner.ResourceType, cc provisioner.CreateChecker) error {
	_, err := c.share(ctx, "create-check "+string(rt)+" "+name, fmt.Sprintf("provisioner %q's check that it can create a %s", name, rt), 0, func(ctx context.Context) ([]provisioner.HostCapacity, error) {
		return nil, cc.CheckCreate(ctx, rt)
	})
	return err
}

// share returns the result of read under key: one at most maxAge old from its start (0: any age),
// waiting for one in progress, else a new one. A read that failed is used at any age, as a create
// check's answer is: Terraform plans at most -parallelism resources at once, and each later wave
// would otherwise wait again for the ledger or server that did not answer the first (the provider's
// ledger tries a connection again after an attempt the plan check's timeout cut short). what names
// the read in the error of a wait for one in progress that ctx ended.
func (c *capacityReads) share(ctx context.Context, key, what string, maxAge time.Duration, read func(context.Context) ([]provisioner.HostCapacity, error)) ([]provisioner.HostCapacity, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	c.mu.Lock()
	r, ok := c.reads[key]
	if !ok || (isClosed(r.done) && r.err == nil && maxAge > 0 && now().Sub(r.started) > maxAge) {
		r = &capacityRead{done: make(chan struct{}), started: now()}
		if c.reads == nil {
			c.reads = map[string]*capacityRead{}
		}
		c.reads[key] = r
		c.mu.Unlock()
		r.hosts, r.err = read(ctx)
		if r.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.err = planCheckTimedOut{r.err}
		}
		close(r.done)
		return r.hosts, r.err
	}
	c.mu.Unlock()
	start := time.Now()
	select {
	case <-r.done:
		return r.hosts, r.err
	case <-ctx.Done():
		return nil, waits.Ended(ctx, start, "the read of "+what+" that another resource of this plan started")
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
// the sum of the plan. It only reads, through the command's shared reads (capacityReads). A ledger
// that cannot be read (unreachable, refused credentials) is a warning too, as checkCreateAtPlan's
// unreachable server: a plan of only new runtimes reads the ledger nowhere else, and skipping the
// check silently showed a clean plan whose every create then failed.
func warnIfNoRoom(ctx context.Context, reads *capacityReads, p provisioner.Provisioner, name string, slots int, diags *diag.Diagnostics) {
	cr, ok := p.(provisioner.CapacityReporter)
	if !ok || slots < 1 || reads.inApply.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, PlanCheckTimeout)
	defer cancel()
	hosts, err := reads.get(ctx, name, cr)
	if err != nil {
		tflog.Warn(ctx, "plan-time capacity check skipped: the ledger could not be read", map[string]any{"provisioner": name, "error": err.Error()})
		advice := "Check ledger_dsn (or " + envnames.LedgerDSN + "): host, port, credentials."
		if errors.Is(err, provisioner.ErrFromEnvironment) {
			// No ledger to reach (the default SQLite ledger has no location on this machine): the
			// error says what to set, and a host, port or credentials have nothing to do with it.
			advice = "Set what the error names where the apply runs."
		}
		diags.AddAttributeWarning(path.Root("slots"), "Pool capacity not checked before the create",
			fmt.Sprintf("Provisioner %q could not read its ledger%s to check that a host has %d free slot(s): %v\n\nThe plan "+
				"goes on (the ledger may be reachable by the time of the apply); if it still cannot be read then, the apply fails "+
				"with its own error and creates nothing. %s", name, withinTimeout(ctx, err), slots, err, advice))
		return
	}
	var free []string
	for _, h := range hosts {
		if h.Removed {
			continue
		}
		f := h.FreeSlots()
		if f >= int64(slots) {
			return
		}
		free = append(free, fmt.Sprintf("%s %d of %d", h.Host, f, h.Slots))
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

// warnIfCannotResize warns at plan time when a runtime of a fixed-capacity pool changes from `from`
// to `to` slots and its host (a static runtime never moves) cannot take that, as the ledger stands:
// the host has fewer free slots than a growth needs (the apply would fail with "cannot resize in
// place"), or it is no longer in the pool's spec, where no resize is possible, growth or shrink.
// A warning, as warnIfNoRoom's: the same apply may free slots on the host first, or the spec may have
// dropped the host by mistake. A ledger that cannot be read skips it: the refresh reports that, and
// warnIfNoRoom for a plan without one.
func warnIfCannotResize(ctx context.Context, reads *capacityReads, p provisioner.Provisioner, name, host string, from, to int, diags *diag.Diagnostics) {
	cr, ok := p.(provisioner.CapacityReporter)
	if !ok || to == from || host == "" || reads.inApply.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, PlanCheckTimeout)
	defer cancel()
	hosts, err := reads.get(ctx, name, cr)
	if err != nil {
		tflog.Debug(ctx, "plan-time resize check skipped: the ledger could not be read", map[string]any{"provisioner": name, "error": err.Error()})
		return
	}
	for _, h := range hosts {
		if h.Host != host {
			continue
		}
		if h.Removed {
			// The refresh warned of the host already; what the user acts on now is the resize.
			diags.AddAttributeWarning(path.Root("slots"), "This runtime's host is no longer in the pool's spec",
				fmt.Sprintf("Provisioner %q: the runtime's host %s is no longer in the pool's spec, so its slots cannot change "+
					"from %d to %d there, and a static runtime cannot move between hosts: the apply will fail, unless this plan replaces "+
					"the runtime (-replace or replace_triggered_by, which a provider's plan is not told of). Put the host back "+
					"in the spec, keep slots at %d, or replace the runtime (a new one is placed on a host of the spec).",
					name, h.Host, from, to, from))
			return
		}
		if free := h.FreeSlots(); to > from && free < int64(to-from) {
			diags.AddAttributeWarning(path.Root("slots"), "No room on its host to grow this runtime",
				fmt.Sprintf("Provisioner %q: the runtime's host %s has %d free slot(s) of %d right now, and growing the runtime from %d to %d "+
					"slots needs %d. A static runtime cannot move between hosts: the apply will fail with \"cannot resize in place\" "+
					"unless slots on that host are freed first (a runtime on it destroyed, replaced or shrunk in the same apply, or by "+
					"another pipeline), or this plan replaces the runtime (-replace or replace_triggered_by, which a provider's plan "+
					"is not told of). Free slots on the host, add slots to it in the pool's spec, or replace the runtime (a new one "+
					"may be placed on another host).", name, h.Host, free, h.Slots, from, to, to-from))
		}
		return
	}
}

// withinTimeout is " within 30s" when a plan-time check ended because its time was up (its own
// timeout, or that of the shared attempt it waited for or used), else "": a refusal that came at once
// (a closed port, wrong credentials) must not read as a server that did not answer in time, nor one
// that a timeout of the backend's own ended (a PostgreSQL DSN's connect_timeout, whose error wraps
// context.DeadlineExceeded too), whose error names that timeout.
func withinTimeout(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, new(planCheckTimedOut)) {
		return " within " + PlanCheckTimeout.String()
	}
	return ""
}

// planCheckTimedOut is the error of a shared plan-time read that its reader's plan-check timeout
// ended (share), so that the plans that waited for it or used it later say their time ran out too
// (withinTimeout). Its text is the read's error.
type planCheckTimedOut struct{ error }

func (e planCheckTimedOut) Unwrap() error { return e.error }

// checkCreateAtPlan asks a provisioner.CreateChecker, at plan time, whether a new resource of type rt
// can be created at all, so that a backend that lacks what every create needs (a ClickHouse server
// that cannot manage users by SQL) fails the plan, with the reason the apply would give, rather than
// half-way through the apply. It only reads, bounded by PlanCheckTimeout, through the command's
// shared reads, and is off once the command applies (the Create then reports the same error itself).
//
// A backend that could not be asked (unreachable, or not in time) is a warning, not an error: the
// server may come up in the same apply (created by another resource, or a network path that is
// being set up), and a passing outage must not stop a plan that may be fine by the time it is
// applied; the apply's Create fails with its own error if it is not. Nothing is known to be wrong,
// but the plan cannot vouch for the create either, and says so. An error on a field of the
// provisioner's spec (a *provisioner.FieldError: the kubernetes provisioner's kubeconfig_path) names
// it as a path in the set.
//
// It reports whether the check passed or was not made (a provisioner without one, or an apply): the
// caller's other plan-time checks of the provisioner would only meet the same failure, and wait for
// it again.
func checkCreateAtPlan(ctx context.Context, reads *capacityReads, p provisioner.Provisioner, name string, rt provisioner.ResourceType, kind resourceKind, diags *diag.Diagnostics) bool {
	cc, ok := p.(provisioner.CreateChecker)
	if !ok || reads.inApply.Load() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, PlanCheckTimeout)
	defer cancel()
	err := reads.checkCreate(ctx, name, rt, cc)
	switch {
	case err == nil:
		return true
	case errors.Is(err, provisioner.ErrCannotCreate):
		diags.AddAttributeError(path.Root("provisioner_name"), "Provisioner cannot create this resource",
			fmt.Sprintf("Provisioner %q cannot create a new %s: %v\n\nThe apply would fail with this error; the plan stops here "+
				"and nothing was created. Change the server or the provisioner as the error says, or use another provisioner.", name, kind.noun, err))
	default:
		tflog.Warn(ctx, "plan-time create check failed", map[string]any{"provisioner": name, "error": err.Error()})
		var reason any = err
		if fe := (*provisioner.FieldError)(nil); errors.As(err, &fe) && fe.Path != "" {
			reason = provisioner.SpecField(name, fe.Path) + ": " + fe.Err.Error()
		}
		diags.AddAttributeWarning(path.Root("provisioner_name"), "Provisioner not checked before the create",
			fmt.Sprintf("Provisioner %q could not be asked%s whether it can create a new %s: %v\n\nThe plan goes on "+
				"(the server, or what reaching it takes, may be there by the time of the apply); if it still cannot be reached then, "+
				"the apply fails with its own error and creates nothing.", name, withinTimeout(ctx, err), kind.noun, reason))
	}
	return false
}
