package resources

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
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

type clickhouseModel struct {
	ID          types.String   `tfsdk:"id"`
	Provisioner types.String   `tfsdk:"provisioner_name"`
	Annotations types.Map      `tfsdk:"annotations"`
	DSN         types.String   `tfsdk:"dsn"`
	WriteDSN    types.String   `tfsdk:"write_dsn"`
	Database    types.String   `tfsdk:"database"`
	User        types.String   `tfsdk:"user"`
	Cluster     types.String   `tfsdk:"cluster"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

// Metadata implements resource.Resource.
func (r *ClickHouseResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_clickhouse"
}

// Schema implements resource.Resource.
func (r *ClickHouseResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Version: 0,
		MarkdownDescription: "A ClickHouse database and a user limited to it, on a shared ClickHouse server, from a " +
			"`clickhouse-static` provisioner. Clients get a DSN with the user's own password. Import adopts an existing " +
			"database and user; since ClickHouse keeps only a hash of the password, the first apply after an import sets a new one.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "Resource ID (a UUID chosen at creation)."},
			"provisioner_name": schema.StringAttribute{
				Optional: true, Computed: true, PlanModifiers: stable,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				MarkdownDescription: "Name of a `clickhouse-static` provisioner in the provider's set; defaults to the default provisioner. Changing it re-creates the database.",
			},
			"annotations": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.LengthAtLeast(1))},
				MarkdownDescription: "Project annotations; `organization_name` and `project_name` name the database at creation " +
					"(sanitized to `[a-z0-9_]`, at most 63 characters). Changing them later keeps the database.",
			},
			"dsn":       schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: stable, MarkdownDescription: "DSN of the database with the resource's own user and password."},
			"write_dsn": schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: stable, MarkdownDescription: "DSN for writes, when the provisioner has a `write_dsn`; empty otherwise."},
			"database":  schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "Database name."},
			"user":      schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "User name."},
			"cluster":   schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "ClickHouse cluster the objects were created `ON CLUSTER`; empty when none."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

// ModifyPlan resolves the provisioner at plan time and forces replacement when it changes.
func (r *ClickHouseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.client == nil || r.client.Unknown {
		return
	}
	var config clickhouseModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	var state *clickhouseModel
	if !req.State.Raw.IsNull() {
		state = &clickhouseModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() || config.Provisioner.IsUnknown() {
		return
	}
	var stateName *string
	if state != nil {
		n := state.Provisioner.ValueString()
		stateName = &n
	}
	resolved, replace := planProvisioner(r.client, provisioner.ResourceTypeClickHouse, config.Provisioner, stateName, resp)
	if resolved != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("provisioner_name"), resolved)...)
	}
	if state != nil && state.DSN.IsNull() && !replace {
		// Imported: the password is unknown, so the apply sets a new one; say so in the plan.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dsn"), types.StringUnknown())...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("write_dsn"), types.StringUnknown())...)
		resp.Diagnostics.AddWarning("The ClickHouse user gets a new password",
			fmt.Sprintf("rill_clickhouse %s was imported: ClickHouse keeps only a hash of user %s's password, so this apply sets a new one "+
				"and the dsn changes. Clients that use the old password stop working until they take the new dsn.",
				state.ID.ValueString(), state.User.ValueString()))
	}
}

// Create implements resource.Resource.
func (r *ClickHouseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clickhouseModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := uuid.NewString()
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, plan.Provisioner.ValueString(), id, timeout, diags, nil, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.cancel()
	opts := r.options(c.ctx, &plan, &resp.Diagnostics)
	tflog.Info(c.ctx, "provisioning a ClickHouse database")
	res, err := c.p.Provision(c.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, opts)
	if err != nil {
		if cleanupErr := c.p.Deprovision(c.ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}); cleanupErr != nil {
			resp.Diagnostics.AddWarning("Cleanup after a failed provision failed", fmt.Sprintf("ClickHouse resource %s may have left a database or user behind: %v", id, cleanupErr))
		}
		resp.Diagnostics.AddError("Provisioning the ClickHouse database failed", fmt.Sprintf("Provisioner %q: %v", c.name, err))
		return
	}
	r.applyResult(c.ctx, &plan, c.name, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.p.AwaitReady(c.ctx, res); err != nil {
		resp.Diagnostics.AddError("ClickHouse database did not become ready", fmt.Sprintf("Resource %s from provisioner %q: %v", id, c.name, err))
	}
}

// Read implements resource.Resource: CheckResource, never creating anything.
func (r *ClickHouseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state clickhouseModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Read(ctx, defaultReadTimeout)
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, diags, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.cancel()
	opts := r.options(c.ctx, &state, &resp.Diagnostics)
	res, err := c.p.CheckResource(c.ctx, r.resource(&state, c.privState), opts)
	if !readFound(ctx, c, clickhouseKind, state.ID.ValueString(), err, resp) {
		return
	}
	r.applyResult(c.ctx, &state, c.name, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update implements resource.Resource: Provision again (a no-op while the DSN works).
func (r *ClickHouseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state clickhouseModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultUpdateTimeout)
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, diags, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.cancel()
	opts := r.options(c.ctx, &plan, &resp.Diagnostics)
	res, err := c.p.Provision(c.ctx, r.resource(&state, c.privState), opts)
	if err != nil {
		resp.Diagnostics.AddError("Updating the ClickHouse database failed", fmt.Sprintf("Provisioner %q, resource %s (unchanged): %v", c.name, state.ID.ValueString(), err))
		return
	}
	r.applyResult(c.ctx, &plan, c.name, res, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete implements resource.Resource: drop the database and the user; already gone is success.
func (r *ClickHouseResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clickhouseModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	c := startCall(ctx, r.client, provisioner.ResourceTypeClickHouse, state.Provisioner.ValueString(), state.ID.ValueString(), timeout, diags, req.Private, &resp.Diagnostics)
	if c == nil {
		return
	}
	defer c.cancel()
	if err := c.p.Deprovision(c.ctx, r.resource(&state, c.privState)); err != nil {
		resp.Diagnostics.AddError("Deprovisioning the ClickHouse database failed", fmt.Sprintf("Provisioner %q, resource %s: %v", c.name, state.ID.ValueString(), err))
	}
}

// ImportState adopts an existing database and user by "<provisioner>/<id>". ClickHouse keeps only a
// hash of the user's password, so it cannot be read back: Read finds the user and database by name
// and leaves dsn and write_dsn null, and the next plan shows an update that sets a new password (see
// ModifyPlan).
func (r *ClickHouseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp, "clickhouse/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11")
}

func (r *ClickHouseResource) options(ctx context.Context, m *clickhouseModel, diags *diag.Diagnostics) *provisioner.ResourceOptions {
	annotations := map[string]string{}
	if !m.Annotations.IsNull() && !m.Annotations.IsUnknown() {
		diags.Append(m.Annotations.ElementsAs(ctx, &annotations, false)...)
	}
	return &provisioner.ResourceOptions{Args: map[string]any{}, Annotations: annotations, RillVersion: r.client.RillVersion}
}

func (r *ClickHouseResource) resource(m *clickhouseModel, privState map[string]any) *provisioner.Resource {
	cfg := map[string]any{}
	if !m.DSN.IsNull() && !m.DSN.IsUnknown() {
		cfg["dsn"] = m.DSN.ValueString()
	}
	if !m.WriteDSN.IsNull() && !m.WriteDSN.IsUnknown() && m.WriteDSN.ValueString() != "" {
		cfg["write_dsn"] = m.WriteDSN.ValueString()
	}
	return &provisioner.Resource{ID: m.ID.ValueString(), Type: provisioner.ResourceTypeClickHouse, State: privState, Config: cfg}
}

func (r *ClickHouseResource) applyResult(ctx context.Context, m *clickhouseModel, name string, res *provisioner.Resource, private privateState, diags *diag.Diagnostics) {
	cfg, err := provisioner.NewClickhouseConfig(res.Config)
	if err != nil {
		diags.AddError("Provisioner returned an invalid ClickHouse config", fmt.Sprintf("Provisioner %q: %v; this is a bug in the provisioner", name, err))
		return
	}
	writeDSN, _ := res.Config["write_dsn"].(string)
	str := func(k string) types.String { s, _ := res.State[k].(string); return types.StringValue(s) }
	m.ID = types.StringValue(res.ID)
	m.Provisioner = types.StringValue(name)
	if cfg.DSN == "" {
		// Found without credentials (an import): null until an apply sets a new password.
		m.DSN, m.WriteDSN = types.StringNull(), types.StringNull()
	} else {
		m.DSN = types.StringValue(cfg.DSN)
		m.WriteDSN = types.StringValue(writeDSN)
	}
	m.Database, m.User, m.Cluster = str("database"), str("user"), str("cluster")
	diags.Append(saveProvisionerState(ctx, private, res.State)...)
}
