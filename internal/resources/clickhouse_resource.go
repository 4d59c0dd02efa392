package resources

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var (
	_ resource.Resource                 = (*ClickHouseResource)(nil)
	_ resource.ResourceWithConfigure    = (*ClickHouseResource)(nil)
	_ resource.ResourceWithModifyPlan   = (*ClickHouseResource)(nil)
	_ resource.ResourceWithImportState  = (*ClickHouseResource)(nil)
	_ resource.ResourceWithUpgradeState = (*ClickHouseResource)(nil)
)

// ClickHouseResource is `rill_clickhouse`: a database and a user of its own on a shared ClickHouse,
// handed over as a DSN. Create = Provision + AwaitReady, Read = CheckResource, Update = Provision,
// Delete = Deprovision.
type ClickHouseResource struct {
	resourceBase
}

// NewClickHouseResource is the resource factory.
func NewClickHouseResource() resource.Resource { return &ClickHouseResource{} }

// Metadata implements resource.Resource.
func (r *ClickHouseResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_clickhouse"
}

// Schema implements resource.Resource: the current version of the schema (clickhouse_schema.go).
func (r *ClickHouseResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clickhouseSchemaV0(ctx)
}

// ModifyPlan resolves the provisioner at plan time and forces replacement when it changes; for a
// create it asks the provisioner whether its server can take one at all (checkCreateAtPlan). With
// password_wo it plans dsn and write_dsn null (the state keeps no secret); without it, a state without
// a password (an import, or a switch from password_wo) plans a new one, with a warning.
func (r *ClickHouseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var config clickhouseModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if config.writeOnly() {
		// The state keeps no secret: dsn and write_dsn are null, whatever they were.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dsn"), types.StringNull())...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("write_dsn"), types.StringNull())...)
	}
	if r.client == nil {
		return
	}
	if r.client.Unknown {
		replaceOnAnotherProvisioner(ctx, req, resp)
		return
	}
	var state *clickhouseModel
	if !req.State.Raw.IsNull() {
		state = &clickhouseModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() || unknownProvisioner(config.Provisioner, state != nil, resp) {
		return
	}
	var stateName *string
	if state != nil {
		n := state.Provisioner.ValueString()
		stateName = &n
	}
	resolved, p, replace := planProvisioner(r.client, provisioner.ResourceTypeClickHouse, config.Provisioner, stateName, resp)
	if p != nil {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("provisioner_name"), resolved)...)
		if state == nil || replace {
			// A create: a server that cannot take one fails the plan, not the apply.
			checkCreateAtPlan(ctx, &r.client.capacity, p, resolved, provisioner.ResourceTypeClickHouse, clickhouseKind, &resp.Diagnostics)
		}
	}
	if state != nil && !replace {
		// The user or the database alone is on the server: an import adopted the half that is left,
		// or the refresh found the other half missing (dropped by hand, or a destroy killed between
		// its two drops; CheckResource reports the missing name empty). The apply creates the
		// missing one under the same ID, so this plans an in-place update (also with password_wo,
		// where nothing else changes) and its name is not known until then.
		for attr, v := range map[string]types.String{"database": state.Database, "user": state.User} {
			if v.ValueString() == "" {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringUnknown())...)
			}
		}
	}
	if state != nil && state.DSN.IsNull() && !config.writeOnly() && !replace {
		// Imported, the password was write-only until now, or the refresh found that the generated
		// password no longer logs in while the user and database are still there (changed outside
		// Terraform: CheckResource then reports them without a dsn): nobody knows a working password,
		// so the apply generates a new one and keeps the database; say so in the plan.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dsn"), types.StringUnknown())...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("write_dsn"), types.StringUnknown())...)
		resp.Diagnostics.AddWarning("The ClickHouse user gets a new password", newPasswordReason(state))
	}
	if state != nil && !replace && (state.DSNWithoutPassword.IsNull() || !resp.Plan.Raw.Equal(req.State.Raw)) {
		// An update (what the plan above changes included: a new password, a missing half), or an
		// import not applied since (none: UseStateForUnknown would plan the state's null): its
		// Provision builds the DSNs from the provisioner's spec as it is now, whose dsn may have moved
		// to another host, port or options since they were made. Planned as the state's, such an
		// apply failed ("Provider produced inconsistent result after apply").
		for _, attr := range []string{"dsn_without_password", "write_dsn_without_password"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringUnknown())...)
		}
		if !config.writeOnly() {
			for _, attr := range []string{"dsn", "write_dsn"} {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringUnknown())...)
			}
		}
	}
}

// newPasswordReason is the detail of the plan's warning that a rill_clickhouse without password_wo
// gets a new password: why its state has no dsn (the ways to get there leave different traces in
// the state) and what the apply keeps.
func newPasswordReason(state *clickhouseModel) string {
	const clients = " Clients that use the old password stop working once the apply has checked the new one."
	id, user := state.ID.ValueString(), state.User.ValueString()
	var why string
	// A missing half first: an import of one also has no dsn_without_password, and "the user and its
	// database are kept, with their data" would promise a database the apply creates empty.
	switch {
	case user == "":
		return fmt.Sprintf("rill_clickhouse %s has no working password in its state: its user is missing on the server. "+
			"This apply creates the user again, under the same name, with a new generated password, and the dsn changes; "+
			"the database is kept, with its data.", id)
	case state.Database.ValueString() == "":
		return fmt.Sprintf("rill_clickhouse %s has no working password in its state: its database is missing on the server, "+
			"and without it the password of user %s cannot be checked. This apply creates the database again, empty, under "+
			"the same name, and sets a new generated password on the user: the dsn changes."+clients, id, user)
	case state.DSNWithoutPassword.IsNull():
		why = "it was imported"
	case !state.PasswordWOVersion.IsNull():
		why = "its password was write-only until now"
	default:
		why = "the password Terraform generated no longer logs in, while the user and database are still on the server: " +
			"it was changed outside Terraform"
	}
	return fmt.Sprintf("rill_clickhouse %s has no working password in its state (%s): "+
		"ClickHouse keeps only a hash of user %s's password, so this apply generates a new one and the dsn changes; "+
		"the user and its database are kept, with their data."+clients, id, why, user)
}

// Create implements resource.Resource.
func (r *ClickHouseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.applying() // the plan-time checks are off for the rest of the command
	var plan clickhouseModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := uuid.NewString()
	timeout := resourceTimeout(ctx, plan.Timeouts, "create")
	// No ID for startCall: with one, a provisioner missing from the set reads as a resource in state
	// whose provisioner left the set (invalidProvisioner), which a create is not.
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, plan.Provisioner.ValueString(), "", timeout, nil, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	c.ctx = tflog.SetField(c.ctx, "clickhouse_id", id)
	opts := r.options(c.ctx, &plan, writeOnlyPassword(ctx, req.Config, &resp.Diagnostics), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(c.ctx, "provisioning a ClickHouse database", map[string]any{"password": passwordSource(&plan)})
	pr := &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}
	res, created, err := provisionNew(c.ctx, c.p, pr, opts)
	if err != nil {
		// A create that failed before it sent a statement (an unreachable server, refused admin
		// credentials) made nothing. One whose undo failed is kept so that a later apply or destroy
		// drops what was made: Deprovision finds the user and database by the ID. Nothing else is
		// known for sure, and a state holds no unknown value.
		failCreate(ctx, c, clickhouseKind, pr, res, err, created, resp, func() diag.Diagnostics {
			plan.ID = types.StringValue(id)
			plan.Provisioner = types.StringValue(c.name)
			for _, v := range []*types.String{&plan.DSN, &plan.WriteDSN, &plan.DSNWithoutPassword, &plan.WriteDSNWithoutPassword, &plan.Database, &plan.User, &plan.Cluster} {
				if v.IsUnknown() {
					*v = types.StringNull()
				}
			}
			return resp.State.Set(ctx, &plan)
		})
		return
	}
	r.applyResult(c, &plan, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.p.AwaitReady(c.ctx, res); err != nil {
		if interrupted(ctx, &resp.Diagnostics, clickhouseKind, id) {
			return // kept in state, not tainted
		}
		// The state is already saved: Terraform marks the resource tainted and replaces it next time.
		resp.Diagnostics.AddError("ClickHouse database did not become ready", fmt.Sprintf("Resource %s from provisioner %q: %v\n\n"+
			"It is kept in state as tainted: the next apply destroys it and creates it again.", id, c.name, err))
	}
}

// Read implements resource.Resource: CheckResource, never creating anything.
func (r *ClickHouseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state clickhouseModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, state.Timeouts, "read")
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	opts := r.options(c.ctx, &state, "", &resp.Diagnostics)
	res, err := c.p.CheckResource(c.ctx, r.resource(&state, c.privState), opts)
	if !readFound(ctx, c, clickhouseKind, state.ID.ValueString(), err, resp) {
		return
	}
	importing, diags := takeImportMark(ctx, req.Private, resp.Private) // found: the import's Read is done with it
	resp.Diagnostics.Append(diags...)
	if o := provisioner.NewRuntimeObservation(res.State); importing && state.Annotations.IsNull() && len(o.Annotations) > 0 {
		// Those the database was created with (its comment): a configuration generated from the
		// import, or the one it came from, plans no change of them.
		v, d := types.MapValueFrom(ctx, types.StringType, o.Annotations)
		resp.Diagnostics.Append(d...)
		state.Annotations = v
	}
	// What differs from what Provision would make (a password changed by hand, a missing user or
	// database) is planned as an update; say what, since the plan's diff alone cannot name it.
	for _, d := range provisioner.NewRuntimeObservation(res.State).Drift {
		resp.Diagnostics.AddWarning("ClickHouse resource changed outside Terraform",
			fmt.Sprintf("%s %s (provisioner %q): %s. It stays in state under the same ID, and the next apply updates it in place.", clickhouseKind.typeName, state.ID.ValueString(), c.name, d))
	}
	// Conditions the provisioner reports without failing, such as what the apply after an import of a
	// resource made by Rill's admin service does to the password Rill's deployment uses.
	addProvisionerWarnings(&resp.Diagnostics, c.name, clickhouseKind.typeName+" "+state.ID.ValueString(), provisioner.NewRuntimeObservation(res.State).Warnings)
	r.applyResult(c, &state, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update implements resource.Resource: Provision again (a no-op while the DSN works).
func (r *ClickHouseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.applying() // the plan-time checks are off for the rest of the command
	var plan, state clickhouseModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, plan.Timeouts, "update")
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	opts := r.options(c.ctx, &plan, writeOnlyPassword(ctx, req.Config, &resp.Diagnostics), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	res, err := c.p.Provision(c.ctx, r.resource(&state, c.privState), opts)
	if err != nil {
		resp.Diagnostics.AddError("Updating the ClickHouse database failed", fmt.Sprintf("Provisioner %q, resource %s (unchanged): %v", c.name, state.ID.ValueString(), err))
		return
	}
	r.applyResult(c, &plan, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete implements resource.Resource: drop the database and the user; already gone is success.
func (r *ClickHouseResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.applying() // the plan-time checks are off for the rest of the command
	var state clickhouseModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := resourceTimeout(ctx, state.Timeouts, "delete")
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.end()
	if err := c.p.Deprovision(c.ctx, r.resource(&state, c.privState)); err != nil {
		resp.Diagnostics.AddError("Deprovisioning the ClickHouse database failed", fmt.Sprintf("Provisioner %q, resource %s: %v", c.name, state.ID.ValueString(), err))
	}
}

// ImportState adopts an existing database and user by "<provisioner>/<id>". ClickHouse keeps only a
// hash of the user's password, so it cannot be read back: Read finds the user and database by name
// and leaves dsn and write_dsn null, and the next plan shows an update that sets a new password (see
// ModifyPlan).
func (r *ClickHouseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if importByID(ctx, r.client, provisioner.ResourceTypeClickHouse, req, resp, "clickhouse/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11") {
		// So that the Read that follows says why nothing is at the ID (readFound), rather than
		// Terraform's bare "Cannot import non-existent remote object".
		resp.Diagnostics.Append(setImportMark(ctx, resp.Private)...)
	}
}

// options are the provisioner's options for m; password, when not empty, is the user's password
// (ClickhouseArgs), else the provisioner generates one.
func (r *ClickHouseResource) options(ctx context.Context, m *clickhouseModel, password string, diags *diag.Diagnostics) *provisioner.ResourceOptions {
	annotations := map[string]string{}
	if !m.Annotations.IsNull() && !m.Annotations.IsUnknown() {
		diags.Append(m.Annotations.ElementsAs(ctx, &annotations, false)...)
	}
	args := (&provisioner.ClickhouseArgs{Password: password}).AsMap()
	return &provisioner.ResourceOptions{Args: args, Annotations: annotations, RillVersion: r.client.RillVersion}
}

// writeOnlyPassword reads password_wo from the configuration, the only place Terraform hands a
// write-only value to the provider (the plan and state hold null); "" when it is not set.
func writeOnlyPassword(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) string {
	var pw types.String
	diags.Append(config.GetAttribute(ctx, path.Root("password_wo"), &pw)...)
	return pw.ValueString()
}

// passwordSource says, for logs, where the password comes from (never the password).
func passwordSource(m *clickhouseModel) string {
	if m.writeOnly() {
		return fmt.Sprintf("password_wo (version %d)", m.PasswordWOVersion.ValueInt64())
	}
	return "generated"
}

// resource is what the provisioner reported last, from the model: the ClickhouseConfig (without a dsn
// when none is known) and the provisioner's own state.
func (r *ClickHouseResource) resource(m *clickhouseModel, privState map[string]any) *provisioner.Resource {
	cfg := &provisioner.ClickhouseConfig{
		DSN: m.DSN.ValueString(), WriteDSN: m.WriteDSN.ValueString(),
		Cluster: m.Cluster.ValueString(), Database: m.Database.ValueString(), User: m.User.ValueString(),
	}
	return &provisioner.Resource{ID: m.ID.ValueString(), Type: provisioner.ResourceTypeClickHouse, State: privState, Config: cfg.AsMap()}
}

// applyResult copies what the provisioner reports into the model: everything from its config (the
// contract's ClickhouseConfig); its State goes, opaque, into private state, with c's provisioner's
// type.
func (r *ClickHouseResource) applyResult(c *call, m *clickhouseModel, res *provisioner.Resource, private privateState, diags *diag.Diagnostics) {
	name := c.name
	cfg, err := provisioner.NewClickhouseConfig(res.Config)
	if err != nil {
		addInvalidConfig(diags, "ClickHouse", name, err)
		return
	}
	m.ID = types.StringValue(res.ID)
	m.Provisioner = types.StringValue(name)
	m.PasswordWO = types.StringNull() // write-only: never in state
	switch {
	case cfg.DSN == "":
		// Found without credentials (an import, or a write-only password): no dsn; the one without a
		// password stays what the last apply set (null after an import).
		m.DSN, m.WriteDSN = types.StringNull(), types.StringNull()
	case m.writeOnly():
		m.DSN, m.WriteDSN = types.StringNull(), types.StringNull()
		m.DSNWithoutPassword, m.WriteDSNWithoutPassword = types.StringValue(cfg.DSNWithoutPassword()), types.StringValue(cfg.WriteDSNWithoutPassword())
	default:
		m.DSN, m.WriteDSN = types.StringValue(cfg.DSN), types.StringValue(cfg.WriteDSN)
		m.DSNWithoutPassword, m.WriteDSNWithoutPassword = types.StringValue(cfg.DSNWithoutPassword()), types.StringValue(cfg.WriteDSNWithoutPassword())
	}
	m.Database, m.User, m.Cluster = types.StringValue(cfg.Database), types.StringValue(cfg.User), types.StringValue(cfg.Cluster)
	diags.Append(saveProvisionerState(c.ctx, private, c.p.Type(), res.State)...)
}
