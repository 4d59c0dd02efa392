package resources

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var (
	_ resource.Resource                   = (*RuntimeResource)(nil)
	_ resource.ResourceWithConfigure      = (*RuntimeResource)(nil)
	_ resource.ResourceWithImportState    = (*RuntimeResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*RuntimeResource)(nil)
	_ resource.ResourceWithValidateConfig = (*RuntimeResource)(nil)
	_ resource.ResourceWithUpgradeState   = (*RuntimeResource)(nil)
)

// RuntimeResource is `rill_runtime`: a Rill runtime from a provisioner. Create = Provision + AwaitReady,
// Read = CheckResource, Update = Provision (+ AwaitReady), Delete = Deprovision.
type RuntimeResource struct {
	resourceBase
}

// NewRuntimeResource is the resource factory.
func NewRuntimeResource() resource.Resource { return &RuntimeResource{} }

// Metadata implements resource.Resource.
func (r *RuntimeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_runtime"
}

// Schema implements resource.Resource: the current version of the schema (runtime_schema.go).
func (r *RuntimeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = runtimeSchemaV0(ctx)
}

// ValidateConfig checks what needs no provisioner: annotation keys reserved for other attributes.
func (r *RuntimeResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var annotations types.Map
	var environment types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("annotations"), &annotations)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("environment"), &environment)...)
	if resp.Diagnostics.HasError() || annotations.IsNull() || annotations.IsUnknown() {
		return
	}
	// An environment unknown here (another resource's attribute) may turn out null: it is checked
	// again once known, in the apply's validation.
	if _, clash := annotations.Elements()[provisioner.AnnotationEnvironment]; clash && !environment.IsNull() && !environment.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("annotations").AtMapKey(provisioner.AnnotationEnvironment), "Conflicting environment",
			"The \"environment\" annotation is set from the `environment` attribute; set one of them, not both.")
	}
}

// ModifyPlan resolves the provisioner at plan time (so the plan names it and a bad name fails the plan,
// not the apply), forces replacement when it changes, and computes the sizes that follow from slots.
// It runs for every resource of every plan: it reads the plan once, only the attributes it needs from
// config and state, and writes the plan back once.
func (r *RuntimeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.client == nil {
		return // destroy, or provider not configured yet
	}
	if r.client.Unknown {
		replaceOnAnotherProvisioner(ctx, req, resp)
		leaveProvisionedConfigToTheApply(ctx, r.client, req, resp)
		return
	}
	var plan runtimeModel
	var configName types.String
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.Plan.Raw, &plan)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("provisioner_name"), &configName)...)
	var stateName *string
	var stateSlots types.Number
	var stateStorage, stateDiskGB types.Int64
	var stateHost, stateAudience, stateRuntimeName types.String
	if !req.State.Raw.IsNull() {
		var name types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("provisioner_name"), &name)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("host"), &stateHost)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("audience"), &stateAudience)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &stateRuntimeName)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("slots"), &stateSlots)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("override_disk_gb"), &stateDiskGB)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("storage_bytes"), &stateStorage)...)
		n := name.ValueString()
		stateName = &n
	}
	if resp.Diagnostics.HasError() || unknownProvisioner(configName, stateName != nil, resp) {
		return
	}
	resolved, p, replace := planProvisioner(r.client, provisioner.ResourceTypeRuntime, configName, stateName, resp)
	if resp.Diagnostics.HasError() {
		return
	}
	if stateName != nil && !replace {
		// A plan with -refresh=false has had no Read to refuse a runtime whose entry changed type; its
		// apply would hand the old type's state to the new one (Provision, Deprovision).
		var id types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
		if err := checkProvisionerType(ctx, req.Private, provisioner.ResourceTypeRuntime, id.ValueString(), resolved, p); err != nil {
			addProvisionerTypeChanged(&resp.Diagnostics, err)
			return
		}
	}
	plan.Provisioner = types.StringValue(resolved)
	if (stateName == nil || replace) && !plan.Name.IsNull() && !plan.Name.IsUnknown() {
		plan.ID = types.StringValue(provisioner.NamedResourceID(resolved, plan.Name.ValueString()))
	}
	// A new name (or one not known yet) replaces the runtime (RequiresReplace on name, which this
	// method is not told of), as a new provisioner does. Terraform then plans the new instance in a
	// second call with no prior state, and shows that call's errors but not its warnings: a replacement
	// is checked here as the create it is, or its warnings would be lost.
	renamed := stateName != nil && !plan.Name.Equal(stateRuntimeName)
	creating := stateName == nil || replace || renamed
	if creating {
		// A kubeconfig that does not load, or a cluster that does not answer, warns once here (a static
		// pool has no such check: its capacity check reads the ledger); the checks after it would meet
		// the same failure.
		if checkCreateAtPlan(ctx, &r.client.capacity, p, resolved, provisioner.ResourceTypeRuntime, runtimeKind, &resp.Diagnostics) &&
			!plan.Slots.IsUnknown() && !plan.Slots.IsNull() {
			// A named runtime that is allocated already is adopted: it needs no room. A runtime renamed
			// on its provisioner frees its own slots first (unless create_before_destroy), so the pool's
			// room as it is now is no measure of it.
			named := !plan.Name.IsNull() && !plan.Name.IsUnknown()
			adopting := named && warnIfAdopting(ctx, &r.client.capacity, &r.client.named, p, resolved, plan.Name.ValueString(), &resp.Diagnostics)
			if !adopting && (!renamed || replace) {
				warnIfNoRoom(ctx, &r.client.capacity, p, resolved, slotsOf(plan.Slots), &resp.Diagnostics)
			}
		}
	}
	if stateName != nil && !replace && !renamed && !plan.Slots.IsUnknown() && !plan.Slots.IsNull() && slotsOf(plan.Slots) != slotsOf(stateSlots) {
		warnIfCannotResize(ctx, &r.client.capacity, p, resolved, stateHost.ValueString(), slotsOf(stateSlots), slotsOf(plan.Slots), &resp.Diagnostics)
	}

	// Whatever drift the last refresh found, the apply repairs: plan it away (a change only when there
	// was drift, which makes the update visible).
	plan.Drift = types.ListValueMust(types.StringType, nil)

	if !plan.Slots.IsUnknown() && !plan.Slots.IsNull() && !plan.DiskGB.IsUnknown() {
		args := provisioner.RuntimeArgs{Slots: slotsOf(plan.Slots), OverrideDiskGB: plan.DiskGB.ValueInt64()}
		cpu, mem, _ := provisioner.NewRuntimeSizes(args.Slots)
		storage := args.StorageBytes()
		plan.CPU, plan.MemoryGB = types.Int64Value(int64(cpu)), types.Int64Value(int64(mem))
		// A provisioner may keep a volume larger than the slots (or override_disk_gb) ask for
		// (Kubernetes never shrinks one): below the size in state, the plan keeps that size while the
		// slots and the override stay, and leaves it to the apply when either changes.
		plan.StorageBytes = types.Int64Value(storage)
		if creating && !plan.Name.IsNull() {
			// A named runtime's create adopts what is at its ID (a killed create's leftover, a runtime
			// `terraform state rm` forgot), volume and all: its size is the apply's to report. Planned
			// as the slots' size, a larger kept volume failed the apply as an inconsistent result and
			// tainted the runtime, whose next apply then destroyed it and its volume.
			plan.StorageBytes = types.Int64Unknown()
		} else if stateName != nil && !replace && !stateStorage.IsNull() && !stateStorage.IsUnknown() && stateStorage.ValueInt64() > storage {
			plan.StorageBytes = types.Int64Unknown()
			if stateSlots.Equal(plan.Slots) && stateDiskGB.Equal(plan.DiskGB) {
				plan.StorageBytes = stateStorage
			}
		}
	}
	// An update hands the provisioner the state in private state: decoded once for both checks below.
	var provisionerState map[string]any
	stateLoaded := !creating
	if !creating {
		var diags diag.Diagnostics
		provisionerState, diags = loadProvisionerState(ctx, req.Private)
		stateLoaded = !diags.HasError() // else Read reported it
	}
	if stateLoaded {
		r.planProvisionedConfig(ctx, resolved, p, &plan, stateHost, stateAudience, provisionerState)
	}
	resp.Diagnostics.Append(runtimeCodec.set(ctx, &resp.Plan.Raw, &plan)...)
	if !resp.Diagnostics.HasError() && (creating || stateLoaded) {
		r.checkProvisionAtPlan(ctx, resolved, p, &plan, creating, provisionerState, req, resp)
	}
}

// planProvisionedConfig plans the host and audience that the Provision of an update reports, when the
// runtime's provisioner is a provisioner.ConfigPlanner (kubernetes: the runtime's URL under the spec's
// host pattern, which may have changed since the state was refreshed: a plan with -refresh=false).
// Planned as the state's (UseStateForUnknown), such an update failed in Terraform ("Provider produced
// inconsistent result after apply" for host and audience) and tainted the runtime, whose next apply
// replaced it. A new pattern alone is then a planned change too, which the update applies (the
// Ingresses for the new host). An entry the provisioner cannot promise is left to the apply; a
// provisioner that is no ConfigPlanner keeps them on an update (the static pool), as the plan does.
// It reads nothing outside the process, so it runs in the apply's plans too, which must plan the same.
func (r *RuntimeResource) planProvisionedConfig(ctx context.Context, name string, p provisioner.Provisioner, plan *runtimeModel, host, audience types.String, state map[string]any) {
	cp, ok := p.(provisioner.ConfigPlanner)
	if !ok {
		return
	}
	pr := &provisioner.Resource{ID: plan.ID.ValueString(), Type: provisioner.ResourceTypeRuntime, State: state}
	if !host.IsNull() && !host.IsUnknown() { // as resource() gives it to Provision
		pr.Config = (&provisioner.RuntimeConfig{Host: host.ValueString(), Audience: audience.ValueString()}).AsMap()
	}
	planned, err := cp.PlannedConfig(pr)
	if err != nil {
		tflog.Warn(ctx, "the provisioner could not plan the runtime's host and audience; they are left to the apply", map[string]any{"provisioner": name, "error": err.Error()})
	}
	plannedString := func(key string) types.String {
		if v, ok := planned[key].(string); ok && err == nil {
			return types.StringValue(v)
		}
		return types.StringUnknown()
	}
	plan.Host, plan.Audience = plannedString("host"), plannedString("audience")
}

// leaveProvisionedConfigToTheApply is planProvisionedConfig while the provider's configuration is not
// known (ledger_dsn, rill_version or default_provisioner from another resource's attribute, or the
// set itself; a plan with -refresh=false, as the refresh of an unconfigured provider fails): no
// provisioner can be asked, so the update of a runtime whose provisioner may plan its host and
// audience (a ConfigPlanner of the known set, or any of an unknown one) leaves both unknown, for the
// apply's plan, with the provider configured, to say. Kept as the state's (UseStateForUnknown), a
// kubernetes runtime's update after its host pattern changed in the same run failed in Terraform
// ("Provider produced inconsistent final plan": the apply's plan may make an unknown value known,
// never change a known one). A plan of no change, a replacement, and the update of another
// provisioner of a known set (the static pool) keep them.
func leaveProvisionedConfigToTheApply(ctx context.Context, client *Client, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || resp.Diagnostics.HasError() || len(resp.RequiresReplace) > 0 || resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if client.ConfigPlanners != nil {
		// Another name than the state's is a replacement (above): the runtime stays with its own.
		var name types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("provisioner_name"), &name)...)
		if resp.Diagnostics.HasError() || !client.ConfigPlanners[name.ValueString()] {
			return
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("host"), types.StringUnknown())...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("audience"), types.StringUnknown())...)
}

// checkProvisionAtPlan asks a provisioner.ProvisionChecker whether the Provision that this plan leads
// to would fail on the runtime's own data, once all of it is known: a create (creating: also a
// replacement, which creates the runtime anew), or an update (a plan that differs from the state). An
// error fails the plan, as it would fail the apply before its first write; the warnings it would
// report are the plan's. state is an update's provisioner state (from private state). Like the other
// plan-time checks it is off once the command has applied a change (an apply walk, whose plans the
// plan walk checked).
func (r *RuntimeResource) checkProvisionAtPlan(ctx context.Context, name string, p provisioner.Provisioner, plan *runtimeModel, creating bool, state map[string]any, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.client.capacity.inApply.Load() {
		return
	}
	pc, ok := p.(provisioner.ProvisionChecker)
	if !ok || !runtimeDataKnown(plan) || !creating && resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	opts, diags := r.options(ctx, plan)
	if diags.HasError() {
		return
	}
	pr := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime}
	what := "the new runtime"
	switch {
	case !creating:
		pr.ID, pr.State = plan.ID.ValueString(), state
		what = "runtime " + pr.ID
	case !plan.Name.IsNull():
		pr.ID = provisioner.NamedResourceID(name, plan.Name.ValueString())
		what = fmt.Sprintf("the new runtime named %q", plan.Name.ValueString())
	}
	warnings, err := pc.CheckProvision(pr, opts)
	if addForeignState(&resp.Diagnostics, name, err) {
		return
	}
	if err != nil {
		tflog.Warn(ctx, "the runtime's plan-time provision check failed", map[string]any{"provisioner": name, "error": err.Error()})
		resp.Diagnostics.AddError("Runtime cannot be provisioned with these arguments",
			fmt.Sprintf("Provisioner %q, %s: %v\n\nProvisioning it would fail with this error before it changed anything, so nothing is "+
				"applied to it. Change the runtime's arguments (name, annotations, slots, environment, version, override_disk_gb, "+
				"hibernated) or the provisioner's templates.", name, what, err))
		return
	}
	addProvisionerWarnings(&resp.Diagnostics, name, what, warnings)
}

// runtimeDataKnown reports whether every attribute a provisioner receives in the runtime's arguments
// and options is known (a value another resource's apply decides is not, until then).
func runtimeDataKnown(m *runtimeModel) bool {
	for _, v := range []attr.Value{m.Name, m.Slots, m.Version, m.Environment, m.DiskGB, m.Hibernated} {
		if v.IsUnknown() {
			return false
		}
	}
	if m.Annotations.IsUnknown() {
		return false
	}
	for _, v := range m.Annotations.Elements() {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// Create provisions the runtime and waits until it is ready.
func (r *RuntimeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.applying()
	var plan runtimeModel
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.Plan.Raw, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, plan.Timeouts, "create")
	c := startCall(ctx, r.client, provisioner.ResourceTypeRuntime, plan.Provisioner.ValueString(), "", timeout, nil, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	// A named runtime's ID follows from its provisioner and name, so that a create interrupted before
	// the state was saved is found (and adopted by Provision) by the next apply.
	id := uuid.NewString()
	if !plan.Name.IsNull() {
		id = provisioner.NamedResourceID(c.name, plan.Name.ValueString())
	}
	c.ctx = tflog.SetField(c.ctx, "runtime_id", id)
	opts, diags := r.options(c.ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(c.ctx, "provisioning runtime", map[string]any{"slots": slotsOf(plan.Slots)})
	pr := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}
	res, created, err := r.provisionNamed(c, pr, opts, plan.Name)
	var conflict *provisioner.IDConflictError
	if errors.As(err, &conflict) {
		// What holds the ID or name is not this runtime's: leave it alone, and say how to take it over.
		resp.Diagnostics.AddError("Runtime ID or name already in use", conflictDetail(c.name, conflict))
		return
	}
	if err != nil && !created && !plan.Name.IsNull() {
		resp.Diagnostics.AddError("Provisioning the runtime failed", fmt.Sprintf("Provisioner %q: %v\n\nRuntime %s (name %q) was not created by this apply (it failed before it claimed the ID, or the ID was held already: by a runtime that existed before, or that another apply created at the same time), so it was not deprovisioned: what is at the ID stays, for the configuration that manages it (whose next plan shows as drift what this create applied before it failed) or for the next apply to adopt.", c.name, err, id, plan.Name.ValueString()))
		return
	}
	if err != nil {
		// A create that failed before it made anything (an unreachable ledger or cluster, say) has
		// nothing to undo. One whose undo failed is kept so that a later apply or destroy cleans it up.
		failCreate(ctx, c, runtimeKind, pr, res, err, created, resp, func() diag.Diagnostics {
			plan.ID = types.StringValue(id)
			plan.Provisioner = types.StringValue(c.name)
			plan.Host, plan.Audience = types.StringNull(), types.StringNull() // never known: nothing was provisioned for sure
			return runtimeCodec.set(ctx, &resp.State.Raw, &plan)
		})
		return
	}
	resp.Diagnostics.Append(r.applyResult(c, &plan, res, resp.Private)...)
	plan.Drift = types.ListValueMust(types.StringType, nil) // Provision applied the desired objects
	resp.Diagnostics.Append(runtimeCodec.set(ctx, &resp.State.Raw, &plan)...)
	if resp.Diagnostics.HasError() || plan.Hibernated.ValueBool() {
		return
	}
	tflog.Info(c.ctx, "waiting for the runtime to be ready", map[string]any{"host": plan.Host.ValueString()})
	if err := c.p.AwaitReady(c.ctx, res); err != nil {
		if interrupted(ctx, &resp.Diagnostics, runtimeKind, id) {
			resp.Diagnostics.Append(markReadiness(ctx, resp.Private, false)...)
			return // kept in state, not tainted
		}
		// The state is already saved: Terraform marks the resource tainted and replaces it next time.
		resp.Diagnostics.AddError("Runtime did not become ready", fmt.Sprintf("Runtime %s from provisioner %q: %v", id, c.name, err))
		return
	}
	tflog.Info(c.ctx, "runtime ready", map[string]any{"host": plan.Host.ValueString()})
}

// provisionNamed is provisionNew, and for a named runtime it also holds the ID against the Delete of
// another instance of it in this apply and records that this apply provisioned it (namedInstances).
func (r *RuntimeResource) provisionNamed(c *call, pr *provisioner.Resource, opts *provisioner.ResourceOptions, name types.String) (*provisioner.Resource, bool, error) {
	if name.IsNull() {
		return provisionNew(c.ctx, c.p, pr, opts)
	}
	unlock, err := r.client.named.hold(c.ctx, pr.ID)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	res, created, err := provisionNew(c.ctx, c.p, pr, opts)
	if err == nil {
		r.client.named.provisioned.add(pr.ID)
	}
	return res, created, err
}

// Read reports the runtime as the provisioner sees it and changes nothing. A runtime that no longer
// exists is removed from state, so Terraform plans to create it again; any other failure is an error
// and the state is kept.
func (r *RuntimeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state runtimeModel
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.State.Raw, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, state.Timeouts, "read")
	c := startCall(ctx, r.client, provisioner.ResourceTypeRuntime, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	opts, diags := r.options(c.ctx, &state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	res, err := c.p.CheckResource(c.ctx, r.resource(&state, c.privState), opts)
	if errors.Is(err, provisioner.ErrResourceNotFound) && importMarked(ctx, resp.Private) {
		owner, unanswered := r.heldElsewhere(c.ctx, c.name, state.ID.ValueString(), opts)
		if owner != "" {
			addAnotherProvisionersRuntime(&resp.Diagnostics, state.ID.ValueString(), owner, c.name,
				fmt.Sprintf(", which does not see it (%v)", err))
			return
		}
		if len(unanswered) > 0 {
			err = fmt.Errorf("%w. The set's other runtime provisioners that could not say whether they hold it (asked for %s at most): %s; "+
				"if it is one of theirs, import it through that one (\"<name>/%s\") once it answers", err, elsewhereTimeout,
				strings.Join(unanswered, "; "), state.ID.ValueString())
		}
	}
	if !readFound(ctx, c, runtimeKind, state.ID.ValueString(), err, resp) {
		return
	}
	if !state.Name.IsNull() {
		r.client.named.inState.add(state.ID.ValueString()) // this state's own runtime (warnIfAdopting)
	}
	importing, diags := takeImportMark(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(diags...)
	if importing {
		resp.Diagnostics.Append(adoptImported(ctx, &state, c.name, res)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if state.Annotations.IsNull() { // an import without annotations, or a state written before their default
		state.Annotations = noAnnotations
	}
	resp.Diagnostics.Append(r.applyResult(c, &state, res, resp.Private)...)
	if readinessUnconfirmed(ctx, resp.Private) && !state.Hibernated.ValueBool() {
		tflog.Info(c.ctx, "the last apply ended before the runtime was ready; planning an update that waits for it")
		state.Drift = types.ListValueMust(types.StringType, append(state.Drift.Elements(), types.StringValue(readinessUnconfirmedDrift)))
	}
	resp.Diagnostics.Append(runtimeCodec.set(ctx, &resp.State.Raw, &state)...)
}

// Update provisions the runtime again with the new args (the provisioner resizes or rolls it), then
// waits until it is ready.
func (r *RuntimeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.applying()
	var plan, state runtimeModel
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.Plan.Raw, &plan)...)
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.State.Raw, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if onlyTimeoutsChange(ctx, plan, state) {
		// Nothing to provision: the new timeouts are the state's. It provisioned again and waited for
		// readiness up to the update timeout (10 minutes for a Kubernetes runtime that was not ready).
		tflog.Debug(ctx, "only the timeouts changed; no provisioner call")
		resp.Diagnostics.Append(runtimeCodec.set(ctx, &resp.State.Raw, &plan)...)
		return
	}
	timeout := resourceTimeout(ctx, plan.Timeouts, "update")
	c := startCall(ctx, r.client, provisioner.ResourceTypeRuntime, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	opts, diags := r.options(c.ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = state.ID
	tflog.Info(c.ctx, "updating runtime", map[string]any{"slots": slotsOf(plan.Slots), "previous_slots": slotsOf(state.Slots)})

	res, err := c.p.Provision(c.ctx, r.resource(&state, c.privState), opts)
	r.client.capacity.forget(c.name) // a resize may have freed slots
	if addForeignState(&resp.Diagnostics, c.name, err) {
		return
	}
	if err != nil {
		// A Provision that fails after it changed something returns where it did (see
		// provisioner.Provisioner.Provision); one that returns nothing changed nothing.
		outcome := "unchanged"
		if res != nil {
			// What was applied has not been waited for, and the state keeps the old settings, which a
			// refresh may find matching the live objects (an empty plan): the mark keeps the update.
			outcome = "partly updated: some of its objects were applied before the error; the next plan shows an update that applies them again and waits for the runtime"
			resp.Diagnostics.Append(markReadiness(ctx, resp.Private, false)...)
		}
		resp.Diagnostics.AddError("Updating the runtime failed", fmt.Sprintf("Provisioner %q, runtime %s (%s): %v", c.name, state.ID.ValueString(), outcome, err))
		return
	}
	resp.Diagnostics.Append(r.applyResult(c, &plan, res, resp.Private)...)
	plan.Drift = types.ListValueMust(types.StringType, nil) // Provision applied the desired objects
	resp.Diagnostics.Append(runtimeCodec.set(ctx, &resp.State.Raw, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.Hibernated.ValueBool() {
		// A hibernated runtime serves nothing, so there is no readiness to confirm; waking it waits.
		resp.Diagnostics.Append(markReadiness(ctx, resp.Private, true)...)
		return
	}
	err = c.p.AwaitReady(c.ctx, res)
	// An update is never tainted: kept without its readiness seen, the runtime is marked so that the
	// next plan shows the update that waits for it again.
	resp.Diagnostics.Append(markReadiness(ctx, resp.Private, err == nil)...)
	if err != nil {
		if interrupted(ctx, &resp.Diagnostics, runtimeKind, state.ID.ValueString()) {
			return
		}
		resp.Diagnostics.AddError("Runtime did not become ready after the update", fmt.Sprintf("Runtime %s from provisioner %q: %v. "+
			"The update is saved; the next plan shows an update that waits for the runtime again.", state.ID.ValueString(), c.name, err))
	}
}

// onlyTimeoutsChange reports whether plan differs from state in its timeouts block alone (found by a
// walkthrough: Terraform plans an update for it).
func onlyTimeoutsChange(ctx context.Context, plan, state runtimeModel) bool {
	if plan.Timeouts.Equal(state.Timeouts) {
		return false
	}
	state.Timeouts = plan.Timeouts
	p, pd := runtimeCodec.value(ctx, &plan)
	s, sd := runtimeCodec.value(ctx, &state)
	return !pd.HasError() && !sd.HasError() && p.Equal(s)
}

// Delete deprovisions the runtime; one that is already gone is deleted.
func (r *RuntimeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.applying()
	var state runtimeModel
	resp.Diagnostics.Append(runtimeCodec.get(ctx, req.State.Raw, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, state.Timeouts, "delete")
	c := startCall(ctx, r.client, provisioner.ResourceTypeRuntime, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	if !state.Name.IsNull() {
		unlock, err := r.client.named.hold(c.ctx, state.ID.ValueString())
		if err != nil {
			resp.Diagnostics.AddError("Deprovisioning the runtime failed", fmt.Sprintf("Provisioner %q, runtime %s: %v", c.name, state.ID.ValueString(), err))
			return
		}
		defer unlock()
		if r.client.named.provisioned.has(state.ID.ValueString()) {
			resp.Diagnostics.AddWarning("Runtime kept for the resource that replaced it", keptForReplacement(c.name, state.ID.ValueString(), state.Name.ValueString()))
			return
		}
	}
	tflog.Info(c.ctx, "deprovisioning runtime")
	err := c.p.Deprovision(c.ctx, r.resource(&state, c.privState))
	r.client.capacity.forget(c.name) // slots freed: the next plan-time check must see them
	if addForeignState(&resp.Diagnostics, c.name, err) {
		return
	}
	if errors.Is(err, provisioner.ErrTakenOver) {
		// An earlier instance of a named runtime (a create_before_destroy replacement interrupted
		// before its destroy, run by the next apply): the runtime is the later create's.
		resp.Diagnostics.AddWarning("Runtime kept for the resource that replaced it", fmt.Sprintf("Provisioner %q: %v. "+
			"This instance leaves the state; the runtime keeps its host and slots. If no state manages it any more "+
			"(`terraform state rm` where it was taken over, or the apply that took it over or re-created it was killed before it saved its state: "+
			"a remote backend saves an apply's state every 20 seconds, and a state put back from a backup is the one from before), "+
			"import it here (`rill_allocations` lists its `import_id`) and destroy it again.", c.name, err))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Deprovisioning the runtime failed", fmt.Sprintf("Provisioner %q, runtime %s: %v", c.name, state.ID.ValueString(), err))
	}
}

// ImportState imports a runtime by "<provisioner>/<id>"; Read then fills in the rest from the
// provisioner.
func (r *RuntimeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !importByID(ctx, r.client, provisioner.ResourceTypeRuntime, req, resp, "static-pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11") {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("hibernated"), false)...)
	resp.Diagnostics.Append(setImportMark(ctx, resp.Private)...)
	// Timeouts is an object; leave it null (the framework's default).
}

// options builds the ResourceOptions a provisioner receives from the resource's attributes.
func (r *RuntimeResource) options(ctx context.Context, m *runtimeModel) (*provisioner.ResourceOptions, diag.Diagnostics) {
	var diags diag.Diagnostics
	annotations := map[string]string{}
	if !m.Annotations.IsNull() && !m.Annotations.IsUnknown() {
		diags.Append(m.Annotations.ElementsAs(ctx, &annotations, false)...)
	}
	if !m.Environment.IsNull() {
		annotations[provisioner.AnnotationEnvironment] = m.Environment.ValueString()
	}
	args := &provisioner.RuntimeArgs{
		Slots: slotsOf(m.Slots), Version: m.Version.ValueString(), Hibernated: m.Hibernated.ValueBool(),
		Environment: m.Environment.ValueString(), OverrideDiskGB: m.DiskGB.ValueInt64(),
	}
	return &provisioner.ResourceOptions{Args: args.AsMap(), Annotations: annotations, RillVersion: r.client.RillVersion, Name: m.Name.ValueString()}, diags
}

// applyResult copies what c's provisioner returned into the model and private state (with the
// provisioner's type), and surfaces the provisioner's warnings.
func (r *RuntimeResource) applyResult(c *call, m *runtimeModel, res *provisioner.Resource, private privateState) diag.Diagnostics {
	ctx, name := c.ctx, c.name
	var diags diag.Diagnostics
	cfg, err := provisioner.NewRuntimeConfig(res.Config)
	if err != nil {
		addInvalidConfig(&diags, "runtime", name, err)
		return diags
	}
	m.ID = types.StringValue(res.ID)
	m.Provisioner = types.StringValue(name)
	m.Host = types.StringValue(cfg.Host)
	m.Audience = types.StringValue(cfg.Audience)
	m.CPU = types.Int64Value(int64(cfg.CPU))
	m.MemoryGB = types.Int64Value(int64(cfg.MemoryGB))
	m.StorageBytes = types.Int64Value(cfg.StorageBytes)
	if m.Hibernated.IsNull() || m.Hibernated.IsUnknown() {
		m.Hibernated = types.BoolValue(false)
	}
	// What the provisioner observed wins over what was asked for, so drift shows up in the next plan.
	observed := provisioner.NewRuntimeObservation(res.State)
	if observed.Slots > 0 {
		m.Slots = types.NumberValue(new(big.Float).SetInt64(int64(observed.Slots)))
	}
	if observed.Version != "" {
		m.Version = types.StringValue(observed.Version)
	}
	if observed.Hibernated != nil {
		m.Hibernated = types.BoolValue(*observed.Hibernated)
	}
	drift := make([]attr.Value, 0, len(observed.Drift))
	for _, d := range observed.Drift {
		drift = append(drift, types.StringValue(d))
	}
	m.Drift = types.ListValueMust(types.StringType, drift)
	if len(drift) > 0 {
		tflog.Info(ctx, "runtime drifted from its desired objects; planning an update", map[string]any{"drift": observed.Drift})
	}
	addProvisionerWarnings(&diags, name, "runtime "+res.ID, observed.Warnings)
	diags.Append(saveProvisionerState(ctx, private, c.p.Type(), res.State)...)
	return diags
}

// resource is what the provisioner reported last, from the model: the RuntimeConfig (none before the
// first apply, when the host is not known) and the provisioner's own state; as rill_clickhouse's.
func (r *RuntimeResource) resource(m *runtimeModel, privState map[string]any) *provisioner.Resource {
	res := &provisioner.Resource{ID: m.ID.ValueString(), Type: provisioner.ResourceTypeRuntime, State: privState}
	if !m.Host.IsNull() && !m.Host.IsUnknown() {
		cfg := &provisioner.RuntimeConfig{
			Host: m.Host.ValueString(), Audience: m.Audience.ValueString(),
			CPU: int(m.CPU.ValueInt64()), MemoryGB: int(m.MemoryGB.ValueInt64()), StorageBytes: m.StorageBytes.ValueInt64(),
		}
		res.Config = cfg.AsMap()
	}
	return res
}
