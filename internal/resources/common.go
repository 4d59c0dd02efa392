package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// resourceBase is embedded by every resource: the provider's client, set by Configure. Each resource
// keeps its schema versions and state upgraders in its own <resource>_schema.go.
type resourceBase struct {
	client *Client
}

// applying switches the plan-time checks (capacity, CreateChecker) off for the rest of the command (a
// Create, Update or Delete began). Without provider data there is nothing to switch: startCall then
// says the provider is not configured.
func (b *resourceBase) applying() {
	if b.client != nil {
		b.client.capacity.applying()
	}
}

// Configure implements resource.ResourceWithConfigure.
func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// clientFrom takes the provider's data in a resource's or data source's Configure.
func clientFrom(data any, diags *diag.Diagnostics) *Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *resources.Client, got %T; this is a bug in the provider", data))
		return nil
	}
	return client
}

// addInvalidConfig reports a Resource.Config that the contract could not read (what: "runtime",
// "ClickHouse"): the fault of provisioner name, not of the user's configuration.
func addInvalidConfig(diags *diag.Diagnostics, what, name string, err error) {
	diags.AddError("Provisioner returned an invalid "+what+" config", fmt.Sprintf("Provisioner %q: %v; this is a bug in the provisioner", name, err))
}

// configured reports (as a diagnostic) a provider whose configuration is not known yet.
func configured(client *Client, diags *diag.Diagnostics) bool {
	if client == nil || client.Unknown {
		diags.AddError("Provider not configured",
			"The rill provider's configuration is not known yet (it depends on values computed during apply). Apply the resources it depends on first.")
		return false
	}
	return true
}

// planProvisioner resolves a resource's provisioner_name at plan time: the configured name, else the
// one in state, else the provider's default. A bad name fails the plan on the attribute (p is then
// nil); a change of provisioner forces replacement (reported as replace). The caller puts the name
// into the plan, and hands p to the plan's other checks, which would otherwise resolve it again.
func planProvisioner(client *Client, rt provisioner.ResourceType, configured types.String, stateName *string, resp *resource.ModifyPlanResponse) (resolved string, p provisioner.Provisioner, replace bool) {
	name := configured.ValueString()
	if configured.IsNull() && stateName != nil {
		name = *stateName
	}
	resolved, p, err := client.Resolve(name, rt)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("provisioner_name"), "Invalid provisioner", invalidProvisioner(client, name, configured.IsNull() && stateName != nil, err))
		return "", nil, false
	}
	if stateName != nil && *stateName != resolved {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("provisioner_name"))
		return resolved, p, true
	}
	return resolved, p, false
}

// replaceOnAnotherProvisioner is ModifyPlan's only work while the provider's configuration is not
// known (ledger_dsn, rill_version or default_provisioner from another resource's attribute: the
// client is Unknown and resolves nothing): a resource in state whose configured provisioner_name is
// unknown, or known and not the one in state, is replaced, as the apply's plan (with the provider
// configured) will say. Planned as an update, Terraform failed the apply ("Provider produced
// inconsistent final plan"). A null name is the default provisioner's, which may not be known yet:
// the apply's plan settles it.
func replaceOnAnotherProvisioner(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var configured, inState types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("provisioner_name"), &configured)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("provisioner_name"), &inState)...)
	if unknownProvisioner(configured, true, resp) || configured.IsNull() || configured.Equal(inState) {
		return
	}
	resp.RequiresReplace = append(resp.RequiresReplace, path.Root("provisioner_name"))
}

// unknownProvisioner reports whether the configured provisioner_name is unknown at plan time (another
// resource's attribute), when ModifyPlan can resolve nothing. A resource in state is then replaced, as
// the framework's RequiresReplace does for an unknown value: planned as an update, the apply found
// another provisioner, and Terraform failed it ("Provider produced inconsistent final plan").
func unknownProvisioner(configured types.String, inState bool, resp *resource.ModifyPlanResponse) bool {
	if !configured.IsUnknown() {
		return false
	}
	if inState {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("provisioner_name"))
	}
	return true
}

// invalidProvisioner is the detail of "Invalid provisioner": err, from Resolve(name). For a resource in
// state whose recorded provisioner the set does not have (an entry renamed or removed), it also says
// why nothing else can be done with it and what can: a resource stays with the provisioner that made it
// (its allocation is recorded under that name, and a named runtime's ID derives from it).
func invalidProvisioner(client *Client, name string, inState bool, err error) string {
	if _, ok := client.Set[name]; !inState || ok || name == "" {
		return err.Error()
	}
	return fmt.Sprintf("%v\n\nThe resource was provisioned by %q (its state records the provisioner), and a resource stays with the "+
		"provisioner that made it: renaming or removing an entry of the set leaves its resources without one. Put %q back into the set to "+
		"refresh, update or destroy them (another entry may list the same hosts: a static pool counts capacity per host). To move a "+
		"resource to another provisioner, set its provisioner_name to that one while %q is still in the set (the resource is replaced). "+
		"To forget it, `terraform state rm` it; what it holds stays where it is (`rill_allocations` lists a static pool's).", err, name, name, name)
}

// addProvisionerTypeChanged reports a *ProvisionerTypeMismatchError (checkProvisionerType) on
// provisioner_name, which names the entry whose type changed.
func addProvisionerTypeChanged(diags *diag.Diagnostics, err error) {
	diags.AddAttributeError(path.Root("provisioner_name"), "Provisioner type changed", err.Error()+".")
}

// addForeignState reports a *provisioner.ForeignStateError, a provisioner's refusal of a state that
// another type's provisioner wrote, as addProvisionerTypeChanged reports checkProvisionerType's
// error, and says whether err was one. It is what the entry's type edited in place looks like for a
// resource whose private state is older than provisionerTypeKey (the check before the call had no
// type to compare): the provisioner tells by its own keys, and the user gets the same diagnostic,
// with what gave the other type away. name is the set entry's name.
func addForeignState(diags *diag.Diagnostics, name string, err error) bool {
	var fe *provisioner.ForeignStateError
	if !errors.As(err, &fe) {
		return false
	}
	mismatch := &ProvisionerTypeMismatchError{ResourceType: fe.ResourceType, ResourceID: fe.ResourceID, Provisioner: name,
		Recorded: fe.Writer, Current: fe.Reader}
	diags.AddAttributeError(path.Root("provisioner_name"), "Provisioner type changed",
		fmt.Sprintf("This %s's state was written by a %s provisioner (it records %s). %v.", fe.ResourceType, fe.Writer, fe.Key, mismatch))
	return true
}

// call is what a CRUD method needs to call a provisioner: a context bounded by the operation's timeout
// and carrying the log fields, the resolved provisioner, and the resource's stored provisioner state.
type call struct {
	ctx       context.Context
	cancel    context.CancelFunc
	name      string
	p         provisioner.Provisioner
	privState map[string]any

	// For end: the operation's timeout, the context it bounds (ctx may gain log fields), the
	// operation's own context, and its diagnostics from the call's start.
	timeout   operationTimeout
	bounded   context.Context
	parent    context.Context
	diags     *diag.Diagnostics
	diagsFrom int
}

// startCall prepares a call; it returns nil (with diagnostics) when the call cannot be made. private
// is nil in Create, where there is no stored state yet. The caller must defer c.end().
func startCall(ctx context.Context, client *Client, rt provisioner.ResourceType, provisionerName, id string,
	timeout operationTimeout, private privateState, diags *diag.Diagnostics) *call {
	diags.Append(timeout.diags...)
	if diags.HasError() || !configured(client, diags) {
		return nil
	}
	name, p, err := client.Resolve(provisionerName, rt)
	if err != nil {
		diags.AddAttributeError(path.Root("provisioner_name"), "Invalid provisioner", invalidProvisioner(client, provisionerName, id != "", err))
		return nil
	}
	var privState map[string]any
	if private != nil {
		// Before any call: a provisioner handed another type's state takes it for an old state of
		// its own, finds nothing where it would have put the resource, and reports it gone.
		if err := checkProvisionerType(ctx, private, rt, id, name, p); err != nil {
			addProvisionerTypeChanged(diags, err)
			return nil
		}
		var d diag.Diagnostics
		privState, d = loadProvisionerState(ctx, private)
		diags.Append(d...)
		if diags.HasError() {
			return nil
		}
	}
	bounded, cancel := context.WithTimeout(ctx, timeout.d)
	c := &call{ctx: bounded, cancel: cancel, name: name, p: p, privState: privState,
		timeout: timeout, bounded: bounded, parent: ctx, diags: diags, diagsFrom: len(*diags)}
	if id != "" { // Create sets it once the ID is chosen
		c.ctx = tflog.SetField(c.ctx, string(rt)+"_id", id)
	}
	c.ctx = tflog.SetField(c.ctx, "provisioner", name)
	return c
}

// end releases the call's context. It is the one place that says, for every operation of every
// resource, that the operation's timeout ended it: the error of each wait says what it waited for,
// but not which setting bounded it, nor (for a refresh, handed the state's value) how to change
// that setting when the refresh itself is what fails. The first error the call reported gets the
// paragraph; an interrupt (the operation's own context canceled) gets none.
func (c *call) end() {
	defer c.cancel()
	if !errors.Is(c.bounded.Err(), context.DeadlineExceeded) || c.parent.Err() != nil {
		return
	}
	for i := c.diagsFrom; i < len(*c.diags); i++ {
		d := (*c.diags)[i]
		if d.Severity() != diag.SeverityError {
			continue
		}
		detail := d.Detail() + "\n\n" + c.timeout.deadlinePassed()
		if p, ok := d.(diag.DiagnosticWithPath); ok {
			(*c.diags)[i] = diag.NewAttributeErrorDiagnostic(p.Path(), d.Summary(), detail)
		} else {
			(*c.diags)[i] = diag.NewErrorDiagnostic(d.Summary(), detail)
		}
		return
	}
}

// importByID is the ImportState of resources imported by "<provisioner>/<id>": it sets id and
// provisioner_name, and Read does the rest. example is an ID to show when the format is wrong.
// A provisioner the set does not have (or one that cannot hold rt) is refused here: left to Read, it
// failed as a resource in state whose provisioner left the set, with advice (put it back into the
// set, `terraform state rm`) for a resource that was never in state.
func importByID(ctx context.Context, client *Client, rt provisioner.ResourceType, req resource.ImportStateRequest, resp *resource.ImportStateResponse, example string) bool {
	name, id, ok := splitImportID(req.ID)
	if !ok {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected \"<provisioner>/<id>\", such as %q, got %q.", example, req.ID))
		return false
	}
	// A padded table's leading space is before the provisioner's name, which keeps it only when the
	// set has a provisioner of that name.
	trimmedName := name
	if !client.Has(name) && strings.TrimSpace(name) != "" {
		trimmedName = strings.TrimSpace(name)
	}
	if trimmed := strings.TrimSpace(id); trimmed != id || trimmedName != name {
		// Copied from a padded table (psql's), it was looked up as it is: a static pool's import then
		// said "not found" of a runtime its ledger holds, printing the ID without the spaces it had.
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected \"<provisioner>/<id>\", such as %q, got %q: the ID has spaces around it, which no ID has. Try %q.",
				example, req.ID, importID(trimmedName, trimmed)))
		return false
	}
	if client != nil && !client.Unknown {
		if _, _, err := client.Resolve(name, rt); err != nil {
			resp.Diagnostics.AddError("Invalid provisioner in import ID", fmt.Sprintf("%v.\n\nThe import ID %q starts with the name, "+
				"in the provider's provisioner set, of the provisioner that made the resource: \"<provisioner>/<id>\", such as %q "+
				"(the rill_allocations data source lists a static pool's runtimes with their import_id).", err, req.ID, example))
			return false
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("provisioner_name"), name)...)
	return !resp.Diagnostics.HasError()
}

// importID is the import ID of the resource id of provisioner provisionerName, "<provisioner>/<id>":
// what importByID reads (splitImportID), rill_allocations' import_id and a name conflict's hint give.
func importID(provisionerName, id string) string { return provisionerName + "/" + id }

// splitImportID splits an importID into the provisioner's name and the ID, at its last "/".
func splitImportID(id string) (string, string, bool) {
	i := strings.LastIndex(id, "/")
	if i <= 0 || i == len(id)-1 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// resourceKind names a resource type in diagnostics and logs.
type resourceKind struct {
	typeName string // "rill_runtime"
	title    string // "Runtime", as a diagnostic's summary starts
	noun     string // "runtime", inside a sentence
	// whereToLook is what to check when an import finds nothing at an ID.
	whereToLook string
}

var (
	runtimeKind = resourceKind{typeName: "rill_runtime", title: "Runtime", noun: "runtime",
		whereToLook: "Check the ID (the rill_allocations data source lists a pool's runtimes with their import_id), and that ledger_dsn " +
			"(or " + envnames.LedgerDSN + ", or the kubeconfig) reaches where the runtime lives. A runtime that Rill's admin service placed on a " +
			"static pool is in the ledger once migrate-rill-static has copied it there (see the guide Migrating from Rill's admin service)."}
	clickhouseKind = resourceKind{typeName: "rill_clickhouse", title: "ClickHouse database", noun: "ClickHouse database",
		whereToLook: "Check the ID (the Rill resource's ID, as Rill's provisioner_resources table lists it, or this provider's), and that the " +
			"provisioner's dsn (or dsn_env) reaches the server that holds the database."}
)

// importHint is what to check when an import finds nothing at id.
func (k resourceKind) importHint(id string) string {
	hint := k.whereToLook
	if lower := strings.ToLower(id); lower != id {
		hint += fmt.Sprintf(" IDs are lower case: try %q.", lower)
	}
	return hint
}

// readFound applies the refresh rule of every resource to CheckResource's error, and reports whether
// Read may go on: a resource that no longer exists is removed from state with a warning, so that
// Terraform plans its re-creation; any other failure (an unreachable cluster or server, say) is an
// error and the state is kept. The Read that follows an import of a runtime that is not there fails
// with the provisioner's reason (such as a ledger that does not exist, on a runner whose default
// ledger is elsewhere), which Terraform's own "Cannot import non-existent remote object" leaves out:
// it drops the warning.
func readFound(ctx context.Context, c *call, kind resourceKind, id string, err error, resp *resource.ReadResponse) bool {
	importing := importMarked(ctx, resp.Private)
	if errors.Is(err, provisioner.ErrResourceNotFound) && importing {
		resp.Diagnostics.AddError(kind.title+" to import was not found",
			fmt.Sprintf("Provisioner %q found no %s to import at ID %s: %v. %s", c.name, kind.noun, id, err, kind.importHint(id)))
		return false
	}
	if errors.Is(err, provisioner.ErrResourceNotFound) {
		tflog.Warn(c.ctx, kind.noun+" no longer exists; removing it from state so it is planned for re-creation", map[string]any{"reason": err.Error()})
		resp.Diagnostics.AddWarning(kind.title+" no longer exists",
			fmt.Sprintf("%s %s (provisioner %q) was removed outside Terraform and will be planned for re-creation: %v", kind.typeName, id, c.name, err))
		resp.State.RemoveResource(ctx)
		return false
	}
	if err != nil {
		if addForeignState(&resp.Diagnostics, c.name, err) {
			return false
		}
		summary := "Reading the " + kind.noun + " failed"
		if errors.Is(err, provisioner.ErrIdentityMismatch) {
			summary = kind.title + " was provisioned in another ledger or cluster"
		}
		resp.Diagnostics.AddError(summary, readFailureDetail(c.name, kind, id, err, importing))
		return false
	}
	return true
}

// readFailureDetail is the detail of a failed refresh, or of a failed read that follows an import:
// err is not "not found". An import has no state yet to keep: it says nothing was imported.
func readFailureDetail(name string, kind resourceKind, id string, err error, importing bool) string {
	outcome := "the state is kept unchanged"
	if importing {
		outcome = "nothing was imported"
	}
	return fmt.Sprintf("Provisioner %q could not report %s %s (%s): %v", name, kind.noun, id, outcome, err)
}

// cleanupTimeout bounds the undo of a failed or interrupted create.
const cleanupTimeout = 30 * time.Second

// cleanupContext is the context of an undo after a failed create: it keeps the log fields but not
// the cancellation, because an interrupted apply (Ctrl-C cancels the operation's context) must still
// free what it allocated rather than leave it tainted in state.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// interrupted reports whether the operation's own request was cancelled (Terraform was interrupted:
// Ctrl-C, or it is stopping the provider), as opposed to a timeout or a real failure, while AwaitReady
// waited. The resource was provisioned and is in state: it stays there untainted, with a warning, so
// that state and provisioner agree and the next plan refreshes it.
func interrupted(ctx context.Context, diags *diag.Diagnostics, kind resourceKind, id string) bool {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	tflog.Warn(ctx, "interrupted while waiting for the "+kind.noun+" to be ready; keeping it in state")
	next := "The next plan refreshes it."
	if kind == runtimeKind {
		// A runtime's refresh reads its allocation or objects, not whether it answers, so the caller
		// marks it (readinessUnconfirmedKey) and its refresh reports that as drift.
		next = "The next plan that refreshes it (not one with -refresh=false) shows an update of it, its drift saying it is not confirmed ready, that waits for it to be ready again."
	}
	diags.AddWarning("Interrupted before the "+kind.noun+" was ready",
		fmt.Sprintf("%s %s was provisioned and is kept in state, but Terraform was interrupted before it was ready. %s",
			kind.typeName, id, next))
	return true
}

// provisionNew is Create's Provision of a new resource (r: its ID and type). It also reports whether a
// failure may be undone (Deprovision), as a failed create may undo only what it made itself: it may
// have failed before it made anything (an unreachable ledger, cluster or server), and Provision adopts
// what already sits at a named runtime's ID (another configuration's runtime of the same name, or
// what a killed apply left), which is not this create's to undo either.
//
// A provisioner that implements provisioner.CreationReporter says whether this call created what is
// at the ID, decided by the same atomic step that claimed it, which is exact even when another apply
// creates the same name at the same instant. Any other is asked before Provision (nothingAt) for a
// named runtime, which cannot see a claim made between its answer and Provision's; a resource
// without a name has a random ID, so whatever is there can only be this call's.
func provisionNew(ctx context.Context, p provisioner.Provisioner, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, bool, error) {
	if reporter, ok := p.(provisioner.CreationReporter); ok {
		res, created, err := reporter.ProvisionReportingCreation(ctx, r, opts)
		if err != nil {
			tflog.Debug(ctx, "provisioning failed", map[string]any{"created_by_this_call": created})
		}
		return res, created, err
	}
	undoable := opts == nil || opts.Name == "" || nothingAt(ctx, p, r, opts)
	res, err := p.Provision(ctx, r, opts)
	return res, undoable, err
}

// nothingAt reports whether the provisioner says for sure that nothing is at the ID (CheckResource
// fails with ErrResourceNotFound). Any other answer, an error included, may mean something is there.
func nothingAt(ctx context.Context, p provisioner.Provisioner, r *provisioner.Resource, opts *provisioner.ResourceOptions) bool {
	_, err := p.CheckResource(ctx, &provisioner.Resource{ID: r.ID, Type: r.Type}, opts)
	if err != nil && !errors.Is(err, provisioner.ErrResourceNotFound) {
		tflog.Debug(ctx, "cannot tell whether the resource's ID is free: a failed create will not undo it", map[string]any{"error": err.Error()})
	}
	return errors.Is(err, provisioner.ErrResourceNotFound)
}

// failCreate handles a Provision that failed in Create (err, with partial: what it returned, or nil)
// the same way for every resource. A create that did not make what is at the ID (created is false,
// provisionNew's report) has nothing to undo and leaves nothing in state; rill_runtime reports a
// named runtime in that case itself, as its ID may hold another's runtime. Otherwise what it made is
// undone; when that fails too, keep puts the resource into resp.State (with its ID, what is not
// known null), its private state records where the work lives (keepFailedCreate), and Terraform
// taints it.
func failCreate(ctx context.Context, c *call, kind resourceKind, r *provisioner.Resource, partial *provisioner.Resource, err error, created bool,
	resp *resource.CreateResponse, keep func() diag.Diagnostics) {
	var undoErr error
	if created {
		undoErr = undoFailedCreate(c, r.Type, r.ID, partial)
	}
	if undoErr != nil {
		resp.Diagnostics.Append(keepFailedCreate(ctx, resp.Private, c.p.Type(), partial)...)
		resp.Diagnostics.Append(keep()...)
	}
	addCreateFailed(&resp.Diagnostics, kind, c.name, r.ID, err, undoErr)
}

// undoFailedCreate deprovisions what a Provision that failed in Create may have made at id (Provision
// may have done part of its work), with a context of its own: the operation's may have ended, the
// failure being its timeout or an interrupt. A nil error means nothing is left.
//
// partial is what the failed Provision returned with its error, or nil: a provisioner may record in
// its State where what it made lives (see Provisioner.Provision), which Deprovision then uses.
func undoFailedCreate(c *call, rt provisioner.ResourceType, id string, partial *provisioner.Resource) error {
	ctx, cancel := cleanupContext(c.ctx)
	defer cancel()
	err := c.p.Deprovision(ctx, &provisioner.Resource{ID: id, Type: rt, State: stateOf(partial)})
	if err != nil {
		tflog.Error(c.ctx, "undoing a failed create failed; the resource is kept in state, tainted", map[string]any{"error": err.Error()})
	}
	return err
}

// addCreateFailed reports a Provision that failed in Create, and what became of its undo. When the
// undo failed (undoErr), the caller has kept the resource in state: Terraform taints a resource that
// Create returns with an error, so the next apply destroys it (Deprovision needs the ID alone) and
// creates it again, and nothing is left behind that no state knows of. That destroy meets whatever
// made the undo fail (a refused delete, an unreachable server) unless it is fixed first: the
// detail says so.
func addCreateFailed(diags *diag.Diagnostics, kind resourceKind, provisionerName, id string, err, undoErr error) {
	detail := fmt.Sprintf("Provisioner %q: %v", provisionerName, err)
	if undoErr != nil {
		detail += fmt.Sprintf("\n\nUndoing what it may have made failed too, so %s %s is kept in state as tainted. Fix what the "+
			"undo's error names, then the next apply destroys it and creates it again (or `terraform destroy` removes it). "+
			"The undo's error: %v", kind.typeName, id, undoErr)
	}
	diags.AddError("Provisioning the "+kind.noun+" failed", detail)
}

// syncSet is a set of strings that the concurrent RPCs of one Terraform command share (IDs, provisioner
// names); its zero value is empty and ready.
type syncSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *syncSet) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	s.m[v] = true
}

func (s *syncSet) has(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[v]
}

// addProvisionerWarnings shows each condition a provisioner reported without failing (its state's
// warnings) as a warning naming the provisioner and the resource (what: "runtime <id>",
// "rill_clickhouse <id>").
func addProvisionerWarnings(diags *diag.Diagnostics, provisionerName, what string, warnings []string) {
	for _, w := range warnings {
		diags.AddWarning("Provisioner warning", fmt.Sprintf("Provisioner %q, %s: %s", provisionerName, what, w))
	}
}
