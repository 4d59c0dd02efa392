// Package static implements the `static` provisioner: a fixed pool of pre-provisioned Rill runtime
// hosts, each offering a number of slots. Which resource holds how many slots on which host is kept in
// the ledger (internal/database), so that several provider processes sharing one ledger never
// oversubscribe a host.
package static

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Type is the provisioner type name in a provisioner set.
const Type = "static"

func init() {
	provisioner.Register(Type, New)
	// The ledger's identity is in every state a static runtime has had since ledgers had identities:
	// another type's provisioner refuses a state that holds it (provisioner.CheckStateOwner).
	provisioner.RegisterStateKeys(Type, stateLedgerID, stateLedger)
}

// State keys of a static runtime: the contract's observed keys, and the disk override it reports as
// asked (the ledger's identity is in ledger.go). The host is in the runtime's config.
const (
	stateSlots      = provisioner.StateKeySlots
	stateVersion    = provisioner.StateKeyVersion
	stateHibernated = provisioner.StateKeyHibernated
	stateDiskGB     = "override_disk_gb"
	stateWarnings   = provisioner.StateKeyWarnings
	// stateClaimedAt is, for a named runtime, the created_at (Unix microseconds, as a decimal string)
	// that the ledger gave its allocation when this Terraform instance created or adopted it: a create
	// that adopts what is at the name's ID gives the allocation a new one (database.Allocation's
	// NewHolder), an update keeps it. Deprovision leaves an allocation whose created_at differs, since
	// a later create took it over (provisioner.ErrTakenOver). A refresh keeps the recorded value, and
	// records the ledger's when there is none (a state from before the claim), as an import does.
	stateClaimedAt = "claimed_at"
)

// Provisioner allocates runtimes on a static pool.
type Provisioner struct {
	spec   *Spec
	db     database.DB
	logger *zap.Logger

	// SetMember holds the name in the set (provisioner.Named), recorded with each allocation.
	provisioner.SetMember
}

var (
	_ provisioner.Provisioner      = (*Provisioner)(nil)
	_ provisioner.CapacityReporter = (*Provisioner)(nil)
	_ provisioner.Named            = (*Provisioner)(nil)
	_ provisioner.Inventory        = (*Provisioner)(nil)
	_ provisioner.SpecWarner       = (*Provisioner)(nil)
	_ provisioner.CreationReporter = (*Provisioner)(nil)
)

// New is the static provisioner's initializer. It validates the spec and touches nothing.
func New(specJSON []byte, db database.DB, logger *zap.Logger) (provisioner.Provisioner, error) {
	spec, err := ParseSpec(specJSON)
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, provisioner.WithWarnings(errors.New("the static provisioner keeps its allocations in the ledger, but no ledger database was given"), spec.warnings)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Provisioner{spec: spec, db: db, logger: logger}, nil
}

// Type implements provisioner.Provisioner.
func (p *Provisioner) Type() string { return Type }

// SpecWarnings implements provisioner.SpecWarner.
func (p *Provisioner) SpecWarnings() []provisioner.FieldWarning { return p.spec.warnings }

// Close implements provisioner.Provisioner. The ledger belongs to the caller and stays open.
func (p *Provisioner) Close() error { return nil }

// Supports implements provisioner.Provisioner: runtimes only.
func (p *Provisioner) Supports(rt provisioner.ResourceType) bool {
	return rt == provisioner.ResourceTypeRuntime
}

// Provision allocates slots for the runtime, or resizes its allocation in place. It is idempotent per
// resource ID: a retried call finds the existing allocation and neither double-counts nor moves it.
func (p *Provisioner) Provision(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	res, _, err := p.ProvisionReportingCreation(ctx, r, opts)
	return res, err
}

// ProvisionReportingCreation implements provisioner.CreationReporter: it is Provision, and reports
// whether the call created the allocation. The ledger's Allocate reads the resource's current
// allocation and writes the new one in one transaction under the ledger's exclusive lock (both
// backends), so "there was none" is decided by the same step that claims the ID: of two calls for
// one ID at the same instant, in any processes sharing the ledger, exactly one sees none.
func (p *Provisioner) ProvisionReportingCreation(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, bool, error) {
	if err := checkOwnRuntime(r); err != nil {
		return nil, false, err
	}
	args, err := provisioner.NewRuntimeArgs(argsOf(opts))
	if err != nil {
		return nil, false, fmt.Errorf("runtime args: %w", err)
	}
	log := p.logger.With(zap.String("resource_id", r.ID), zap.Int("slots", args.Slots))
	update := recordsAllocation(r)
	var ledgerAt string
	if update {
		// The runtime must be in the ledger it was allocated in, or an allocation in another one
		// (a new one, created by this write) would be made for it.
		cur, _, err := p.checkLedger(ctx, r)
		if err != nil {
			return nil, false, err
		}
		ledgerAt = cur.Location
	}

	name := nameOf(opts)
	owner := p.NameInSet()
	// claimed: the last run of place (a retried transaction runs it again, on fresh data) found no
	// allocation and returned one to write. Until Allocate returns, that write's outcome is the
	// transaction's.
	claimed := false
	alloc, err := p.db.Allocate(ctx, r.ID, func(current *database.Allocation, used map[string]int) (*database.Allocation, error) {
		claimed = false
		var next database.Allocation
		used = canonicalUsed(used)
		if current != nil {
			// A retried or interrupted earlier Provision of this resource left its allocation: adopt it,
			// but only when it is this resource's (same provisioner, same name).
			if err := adoptable(current, owner, name); err != nil {
				return nil, err
			}
			placed, err := p.resize(log, current, used, args.Slots)
			if err != nil {
				return nil, err
			}
			next = *placed
			// A create takes over what an interrupted apply, or another instance of the name, left:
			// from now on the allocation is this instance's, and an earlier one's destroy leaves it.
			next.NewHolder = !update
		} else if update {
			// Placing it anew would move it to whichever host choose picks (a static runtime never
			// moves: its host is in the state and the plan), and Terraform would fail the apply with
			// an inconsistent result for host. Its re-creation is for a plan to show.
			return nil, &AllocationGoneError{ResourceID: r.ID, Ledger: ledgerAt}
		} else {
			host, why, err := choose(p.spec, used, args.Slots)
			if err != nil {
				log.Info("no host has room for the runtime", zap.Error(err))
				return nil, err
			}
			log.Info("placing runtime", zap.String("host", host), zap.String("reason", why))
			next = database.Allocation{ResourceID: r.ID, Host: host, Slots: args.Slots}
		}
		next.Provisioner, next.Name, next.Runtime = owner, name, recordOf(args, opts)
		claimed = current == nil
		return &next, nil
	})
	if errors.Is(err, database.ErrNameTaken) {
		// The name's unique index refused the row: nothing was written.
		return nil, false, p.nameHolder(ctx, owner, name, err)
	}
	if err != nil {
		// A place error wrote nothing (claimed is false then); a failure after place returned a new
		// allocation (the write or the commit) may have left it: it would be this call's.
		return nil, claimed, err
	}
	ledger, err := p.db.Identity(ctx)
	if err != nil {
		return nil, claimed, fmt.Errorf("runtime %s was allocated, but the identity of the ledger cannot be read: %w", r.ID, err)
	}
	res := p.resource(r, alloc, args, ledger)
	if name != "" {
		claim, recorded := claimOf(r)
		if !update || !recorded {
			claim = strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10)
		}
		res.State[stateClaimedAt] = claim
	}
	if recordedAudience, _ := r.Config["audience"].(string); update && recordedAudience != "" && res.Config["host"] == r.Config["host"] {
		// An update returns the audience its plan has (Terraform's plan keeps the state's: the
		// audience is computed): an audience_url changed in the spec since the state was refreshed
		// (an apply with -refresh=false, or a saved plan) is the next refresh's to report (CheckResource
		// reads the spec), as drift of the state. Returning it here failed the apply with
		// "Provider produced inconsistent result after apply" for audience.
		res.Config["audience"] = recordedAudience
	}
	return res, claimed, nil
}

// adoptable reports, as an *provisioner.IDConflictError, an existing allocation at a resource's ID that
// belongs to another provisioner or carries another name. An empty owner (a provisioner built without
// a name) is not checked.
func adoptable(current *database.Allocation, owner, name string) error {
	conflict := &provisioner.IDConflictError{ID: current.ResourceID, Provisioner: current.Provisioner, Name: current.Name}
	switch {
	case owner != "" && current.Provisioner != owner:
		conflict.Reason = fmt.Sprintf("the ledger holds this ID for provisioner %q, not %q", current.Provisioner, owner)
	case current.Name != name:
		conflict.Reason = fmt.Sprintf("the ledger holds this ID under the name %q, not %q", current.Name, name)
	default:
		return nil
	}
	return conflict
}

// nameHolder turns the ledger's "name already taken" into an *provisioner.IDConflictError naming the
// resource that holds the name.
func (p *Provisioner) nameHolder(ctx context.Context, owner, name string, taken error) error {
	all, err := p.db.ListAllocations(ctx)
	if err != nil {
		return taken
	}
	for _, a := range all {
		if a.Provisioner == owner && a.Name == name {
			return &provisioner.IDConflictError{ID: a.ResourceID, Provisioner: a.Provisioner, Name: a.Name,
				Reason: fmt.Sprintf("the name %q is held by another runtime ID", name)}
		}
	}
	return taken
}

// recordOf is what the ledger keeps of a runtime's arguments, for an import to restore them: the
// environment argument, and the project's annotations apart from it (RuntimeArgs.ProjectAnnotations:
// an "environment" annotation given without the argument is the project's own).
func recordOf(args *provisioner.RuntimeArgs, opts *provisioner.ResourceOptions) *database.RuntimeRecord {
	var annotations map[string]string
	if opts != nil {
		annotations = opts.Annotations
	}
	return &database.RuntimeRecord{Version: args.Version, Hibernated: args.Hibernated,
		Environment: args.Environment, Annotations: args.ProjectAnnotations(annotations)}
}

func nameOf(opts *provisioner.ResourceOptions) string {
	if opts == nil {
		return ""
	}
	return opts.Name
}

// resize keeps an existing allocation on its host and grows or shrinks it when the host has room.
func (p *Provisioner) resize(log *zap.Logger, current *database.Allocation, used map[string]int, slots int) (*database.Allocation, error) {
	if current.Slots == slots {
		log.Debug("allocation unchanged", zap.String("host", current.Host))
		return current, nil
	}
	rt := p.spec.host(current.Host)
	if rt == nil {
		return nil, &HostRemovedError{ResourceID: current.ResourceID, Host: current.Host}
	}
	delta := slots - current.Slots
	if delta > 0 && used[rt.Host]+delta > rt.Slots {
		return nil, &CapacityError{Requested: delta, Resize: true, Host: rt.Host, Free: freeByHost(p.spec, used)}
	}
	log.Info("resizing runtime in place", zap.String("host", rt.Host), zap.Int("from_slots", current.Slots), zap.Int("to_slots", slots))
	next := *current
	next.Slots = slots
	return &next, nil
}

// Deprovision frees the runtime's slots. A runtime without an allocation is already gone: success.
// A runtime allocated in another ledger than the provider's is an error (freeing nothing here would
// leak its slots there), and so is a ledger that does not exist, unless the runtime records no
// allocation at all (recordsAllocation: an import, or the undo of a failed create): that ledger is
// not created to find nothing in it.
func (p *Provisioner) Deprovision(ctx context.Context, r *provisioner.Resource) error {
	if err := checkOwnRuntime(r); err != nil {
		return err
	}
	if _, exists, err := p.checkLedger(ctx, r); err != nil || !exists {
		return err
	}
	// Look before deleting: reads never wait for the write lock, so undoing a create that allocated
	// nothing (say, because another writer holds the lock) needs no lock either.
	alloc, err := p.db.FindAllocation(ctx, r.ID)
	claim, recorded := claimOf(r)
	switch {
	case errors.Is(err, database.ErrNotFound):
		p.logger.Info("runtime has no allocation to free", zap.String("resource_id", r.ID))
		return nil
	case err == nil && recorded && claim != strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10):
		return p.takenOver(r, claim, alloc)
	}
	var existed bool
	if recorded {
		// The look is not enough: a create adopting the runtime (another workspace) may commit between
		// it and the delete, so the delete checks the claim again, in its own statement.
		claimedAt, perr := strconv.ParseInt(claim, 10, 64)
		if perr != nil {
			return fmt.Errorf("runtime %s: its state's %s %q is not Unix microseconds: %w", r.ID, stateClaimedAt, claim, perr)
		}
		existed, err = p.db.DeleteAllocationClaimedAt(ctx, r.ID, time.UnixMicro(claimedAt))
	} else {
		existed, err = p.db.DeleteAllocation(ctx, r.ID)
	}
	if nh := (*database.NewHolderError)(nil); errors.As(err, &nh) {
		return p.takenOver(r, claim, nh.Current)
	}
	if err != nil {
		return fmt.Errorf("freeing the slots of runtime %s: %w", r.ID, err)
	}
	p.logger.Info("freed runtime slots", zap.String("resource_id", r.ID), zap.Bool("existed", existed))
	return nil
}

// takenOver logs and returns Deprovision's error for a runtime whose allocation, alloc, a later
// create of its name took over from the claim this state recorded.
func (p *Provisioner) takenOver(r *provisioner.Resource, claim string, alloc *database.Allocation) error {
	p.logger.Info("runtime was taken over by a later create of its name: leaving it", zap.String("resource_id", r.ID),
		zap.String("claimed_at", claim), zap.Time("allocation_created_at", alloc.CreatedAt))
	return &TakenOverError{ResourceID: r.ID, Name: alloc.Name, ClaimedAt: alloc.CreatedAt}
}

// claimOf returns the claim a named runtime's state recorded (stateClaimedAt), if any: states from
// before it, and unnamed runtimes, have none.
func claimOf(r *provisioner.Resource) (string, bool) {
	claim, ok := r.State[stateClaimedAt].(string)
	return claim, ok && claim != ""
}

// TakenOverError says that Deprovision left a named runtime because a later create of its name took
// its allocation over (the allocation's created_at is not the one this state recorded). It wraps
// provisioner.ErrTakenOver. Nothing was freed.
type TakenOverError struct {
	ResourceID string
	Name       string
	ClaimedAt  time.Time // when the later create took it over
}

func (e *TakenOverError) Error() string {
	return fmt.Sprintf("runtime %s (name %q) was not freed: a later create of its name took its allocation over at %s, "+
		"after this instance had created or adopted it (the old half of a create_before_destroy replacement whose apply "+
		"was interrupted before this destroy, or another state or workspace that declares the name), and that create's "+
		"state manages it now", e.ResourceID, e.Name, e.ClaimedAt.UTC().Format(time.RFC3339Nano))
}

// Unwrap returns provisioner.ErrTakenOver.
func (e *TakenOverError) Unwrap() error { return provisioner.ErrTakenOver }

// AwaitReady returns at once, as Rill's does: the hosts of a static pool are already running, so
// there is nothing to wait for, even for a caller that was interrupted (it returned ctx.Err(), and a
// Ctrl-C just after the allocation left the runtime marked as not confirmed ready).
func (p *Provisioner) AwaitReady(context.Context, *provisioner.Resource) error {
	return nil
}

// Check reaches the ledger and reports the pool's use; it logs a warning for each host at or above
// 80% of its slots and for allocations held on hosts that are no longer in the spec.
func (p *Provisioner) Check(ctx context.Context) error {
	if err := p.db.Ping(ctx); err != nil {
		return fmt.Errorf("ledger unreachable: %w", err)
	}
	hosts, err := p.Capacity(ctx)
	if err != nil {
		return err
	}
	removedHosts := map[string]bool{}
	for _, h := range hosts {
		removedHosts[h.Host] = h.Removed
		fields := []zap.Field{zap.String("host", h.Host), zap.Int("used_slots", h.UsedSlots), zap.Int("slots", h.Slots)}
		if h.Removed {
			p.logger.Warn("this pool holds allocations on a host removed from its spec; destroy or replace those runtimes to free them", fields...)
		} else if h.Slots > 0 && int64(h.UsedSlots)*5 >= int64(h.Slots)*4 {
			p.logger.Warn("static pool host is at or above 80% of its slots", fields...)
		} else {
			p.logger.Debug("static pool host use", fields...)
		}
	}
	used, err := p.db.UsedSlotsByHost(ctx)
	if err != nil {
		return err
	}
	for host, n := range used {
		if p.spec.host(host) == nil && !removedHosts[canonicalHost(host)] {
			p.logger.Warn("the ledger holds allocations on a host that is not in this pool's spec (another pool's host, or one removed from the spec)", zap.String("host", host), zap.Int("used_slots", n))
		}
	}
	return nil
}

// Capacity implements provisioner.CapacityReporter: slots and use per host, in spec order, then the
// hosts no longer in the spec on which this pool still holds allocations (Removed, 0 slots), sorted.
func (p *Provisioner) Capacity(ctx context.Context) ([]provisioner.HostCapacity, error) {
	allocs, err := p.db.ListAllocations(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	used := map[string]int{}
	count := map[string]int{}
	removed := map[string]bool{}
	name := p.NameInSet()
	for _, a := range allocs {
		h := canonicalHost(a.Host)
		used[h] += a.Slots
		count[h]++
		if p.spec.host(h) == nil && a.Provisioner == name {
			removed[h] = true
		}
	}
	out := make([]provisioner.HostCapacity, 0, len(p.spec.Runtimes)+len(removed))
	for _, rt := range p.spec.Runtimes {
		out = append(out, provisioner.HostCapacity{Host: rt.Host, Slots: rt.Slots, UsedSlots: used[rt.Host], Runtimes: count[rt.Host]})
	}
	gone := make([]string, 0, len(removed))
	for h := range removed {
		gone = append(gone, h)
	}
	sort.Strings(gone)
	for _, h := range gone {
		out = append(out, provisioner.HostCapacity{Host: h, UsedSlots: used[h], Runtimes: count[h], Removed: true})
	}
	return out, nil
}

// CheckResource reads the runtime's allocation from the ledger and changes nothing. A runtime without
// an allocation is reported as not found (wrapping provisioner.ErrResourceNotFound); a ledger that
// cannot be read is a plain error; a ledger that does not exist, or is another than the one the
// runtime was allocated in, is a *LedgerMismatchError. A runtime whose host left the spec still exists
// and still holds its slots: it is reported with a warning, so that it stays in state and destroy (or
// a replacement) frees it; reading it as gone would leave its allocation in the ledger forever.
func (p *Provisioner) CheckResource(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	if err := checkOwnRuntime(r); err != nil {
		return nil, err
	}
	ledger, exists, err := p.checkLedger(ctx, r)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("runtime %s has no allocation: the ledger %s does not exist: %w", r.ID, ledger.Location, provisioner.ErrResourceNotFound)
	}
	alloc, err := p.db.FindAllocation(ctx, r.ID)
	if errors.Is(err, database.ErrNotFound) {
		return nil, fmt.Errorf("runtime %s has no allocation in the ledger: %w", r.ID, provisioner.ErrResourceNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the allocation of runtime %s from the ledger: %w", r.ID, err)
	}
	// Version and hibernation are not observable on a static host: the ledger records what was asked
	// for. Rows written before it did (schema version 2) have no record: then they are reported as
	// the caller's state has them, and as not observed when it has not (a caller that stores states
	// without observations: provisioner.WithoutObservations), so that the caller keeps its own.
	args := &provisioner.RuntimeArgs{Slots: alloc.Slots}
	var unobserved []string
	if rec := alloc.Runtime; rec != nil {
		args.Version, args.Hibernated = rec.Version, rec.Hibernated
	} else {
		var ok bool
		if args.Version, ok = r.State[stateVersion].(string); !ok {
			unobserved = append(unobserved, stateVersion)
		}
		if args.Hibernated, ok = r.State[stateHibernated].(bool); !ok {
			unobserved = append(unobserved, stateHibernated)
		}
	}
	// The disk size of a static host is whatever the host has; override_disk_gb is reported as asked.
	if a, err := provisioner.NewRuntimeArgs(argsOf(opts)); err == nil {
		args.OverrideDiskGB = a.OverrideDiskGB
	} else {
		switch n := r.State[stateDiskGB].(type) { // float64 once the state went through JSON
		case int64:
			args.OverrideDiskGB = n
		case float64:
			args.OverrideDiskGB = int64(n)
		}
	}
	res := p.resource(r, alloc, args, ledger)
	if claim, recorded := claimOf(r); recorded {
		// What this instance claimed, not what the ledger holds now: a later create of the name that
		// took the runtime over must not make this (older) instance's destroy free it.
		res.State[stateClaimedAt] = claim
	} else if alloc.Name != "" {
		// An import, or a state from before the claim, manages the runtime as the ledger holds it:
		// from then on the destroy of this instance leaves a runtime that a later create takes over
		// (the deposed half of an interrupted create_before_destroy replacement). Recording nothing
		// would free it, as before the claim; recording the ledger's frees it in every case where
		// that did (this instance deposed, or another state's create adopted the runtime since).
		res.State[stateClaimedAt] = strconv.FormatInt(alloc.CreatedAt.UnixMicro(), 10)
	}
	for _, k := range unobserved {
		delete(res.State, k)
	}
	if p.spec.host(alloc.Host) == nil {
		removed := &HostRemovedError{ResourceID: r.ID, Host: alloc.Host}
		p.logger.Warn("runtime is on a host removed from the spec", zap.String("resource_id", r.ID), zap.String("host", alloc.Host))
		res.State[stateWarnings] = []string{removed.Error() + "; it keeps its slots there until it is destroyed or replaced (terraform apply -replace)"}
	}
	return res, nil
}

func (p *Provisioner) resource(r *provisioner.Resource, alloc *database.Allocation, args *provisioner.RuntimeArgs, ledger database.Identity) *provisioner.Resource {
	host := canonicalHost(alloc.Host)
	audience := host
	if rt := p.spec.host(host); rt != nil {
		audience = rt.AudienceURL
	} else if a, ok := r.Config["audience"].(string); ok && a != "" {
		audience = a // the host left the spec: keep the audience the runtime was given
	}
	cpu, mem, _ := provisioner.NewRuntimeSizes(alloc.Slots)
	sized := provisioner.RuntimeArgs{Slots: alloc.Slots, OverrideDiskGB: args.OverrideDiskGB}
	cfg := &provisioner.RuntimeConfig{Host: host, Audience: audience, CPU: cpu, MemoryGB: mem, StorageBytes: sized.StorageBytes()}
	state := map[string]any{
		stateSlots:                      alloc.Slots,
		stateVersion:                    args.Version,
		stateHibernated:                 args.Hibernated,
		provisioner.StateKeyProvisioner: alloc.Provisioner,
		provisioner.StateKeyName:        alloc.Name,
		stateLedgerID:                   ledger.ID,
	}
	if !database.IsDefaultLocation(ledger.Location) {
		state[stateLedger] = ledger.Location
	}
	if args.OverrideDiskGB > 0 {
		state[stateDiskGB] = args.OverrideDiskGB
	}
	if rec := alloc.Runtime; rec != nil {
		state[provisioner.StateKeyEnvironment] = rec.Environment
		state[provisioner.StateKeyAnnotations] = rec.Annotations
	}
	return &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeRuntime, State: state, Config: cfg.AsMap()}
}

// AllocationGoneError says that an update's runtime has no allocation in its ledger any more: it was
// freed (destroyed through another state or configuration, or deleted by hand) after the state was
// last refreshed, and the update was applied from a plan that did not see it (a saved plan, or
// -refresh=false). It wraps provisioner.ErrResourceNotFound. Nothing was written.
type AllocationGoneError struct {
	ResourceID string
	Ledger     string // the ledger's location, redacted
}

func (e *AllocationGoneError) Error() string {
	return fmt.Sprintf("runtime %s is no longer in the ledger %s: its allocation was freed after the plan was made "+
		"(the plan did not refresh it: a saved plan, or -refresh=false). Nothing was changed, and it is not placed anew, "+
		"which could move it to another host. Run `terraform plan` or `terraform apply` without -refresh=false: "+
		"the refresh finds it gone and plans its re-creation", e.ResourceID, e.Ledger)
}

// Unwrap returns provisioner.ErrResourceNotFound.
func (e *AllocationGoneError) Unwrap() error { return provisioner.ErrResourceNotFound }

// HostRemovedError says that a runtime's allocation is on a host that is no longer in the pool's spec:
// it cannot be resized there. (CheckResource reports such a runtime with a warning, not as gone: it
// still holds its slots until it is destroyed.)
type HostRemovedError struct {
	ResourceID string
	Host       string
}

func (e *HostRemovedError) Error() string {
	return fmt.Sprintf("runtime %s is allocated on host %s, which is no longer in the static pool's spec", e.ResourceID, e.Host)
}

func checkRuntime(r *provisioner.Resource) error {
	if r == nil || r.ID == "" {
		return errors.New("a resource with an ID is required")
	}
	if r.Type != "" && r.Type != provisioner.ResourceTypeRuntime {
		return fmt.Errorf("the static provisioner provisions runtimes only, not %q", r.Type)
	}
	return nil
}

// checkOwnRuntime is checkRuntime for a call that reads r's State (CheckResource, an update's
// Provision, Deprovision): a state that another type's provisioner wrote is a
// *provisioner.ForeignStateError. Read as a static one, it holds no ledger_id, which a static state
// from before ledgers had identities lacks too: it was taken to be in the current ledger, where the
// runtime has no row, and a Kubernetes runtime was reported gone (planned anew, its objects left to
// nobody), or its destroy "freed" nothing and succeeded. An empty state (an import, a create, the
// adoption of a named runtime) passes.
func checkOwnRuntime(r *provisioner.Resource) error {
	if err := checkRuntime(r); err != nil {
		return err
	}
	return provisioner.CheckStateOwner(Type, r)
}

func argsOf(opts *provisioner.ResourceOptions) map[string]any {
	if opts == nil {
		return nil
	}
	return opts.Args
}

// Allocated implements provisioner.Inventory: the ledger's allocations made by this provisioner (by
// its name in the set), by host then ID.
func (p *Provisioner) Allocated(ctx context.Context) ([]provisioner.Allocated, error) {
	all, err := p.db.ListAllocations(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	owner := p.NameInSet()
	out := []provisioner.Allocated{}
	for _, a := range all {
		if a.Provisioner != owner {
			continue
		}
		item := provisioner.Allocated{ID: a.ResourceID, Type: provisioner.ResourceTypeRuntime, Name: a.Name, Provisioner: a.Provisioner,
			Host: a.Host, Slots: a.Slots, CreatedAt: a.CreatedAt}
		if rec := a.Runtime; rec != nil {
			item.Environment, item.Annotations = rec.Environment, rec.Annotations
		}
		out = append(out, item)
	}
	return out, nil
}

// MissingStore implements provisioner.StoreChecker: a ledger that does not exist reads as empty.
func (p *Provisioner) MissingStore(ctx context.Context) (string, error) {
	_, err := p.db.Identity(ctx)
	switch {
	case errors.Is(err, database.ErrNoLedger):
		return err.Error(), nil
	case err != nil:
		return "", fmt.Errorf("reading the identity of the ledger: %w", err)
	}
	return "", nil
}

// canonicalUsed merges the slots in use per host under canonical host names (the migration to
// canonical hosts makes this a copy; it guards against a row written in another spelling).
func canonicalUsed(used map[string]int) map[string]int {
	out := make(map[string]int, len(used))
	for h, n := range used {
		out[canonicalHost(h)] += n
	}
	return out
}
