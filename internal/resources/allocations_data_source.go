package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var (
	_ datasource.DataSource              = (*AllocationsDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*AllocationsDataSource)(nil)
)

// AllocationsDataSource is `rill_allocations`: what the provisioners hold (the static pool's ledger
// allocations, the Kubernetes runtimes), with what an import needs. An apply that was interrupted before Terraform
// saved its state leaves unnamed runtimes that no state knows; this lists them, so that
// `import { for_each = ... }` can take them back (docs/guides/recovering-orphaned-runtimes.md).
type AllocationsDataSource struct {
	client *Client
}

// NewAllocationsDataSource is the data source factory.
func NewAllocationsDataSource() datasource.DataSource { return &AllocationsDataSource{} }

type allocationsModel struct {
	Provisioner types.String      `tfsdk:"provisioner_name"`
	Allocations []allocationModel `tfsdk:"allocations"`
	Timeouts    timeouts.Value    `tfsdk:"timeouts"`
}

type allocationModel struct {
	ID          types.String `tfsdk:"id"`
	ImportID    types.String `tfsdk:"import_id"`
	Type        types.String `tfsdk:"type"`
	Name        types.String `tfsdk:"name"`
	Provisioner types.String `tfsdk:"provisioner_name"`
	Host        types.String `tfsdk:"host"`
	Slots       types.Int64  `tfsdk:"slots"`
	Environment types.String `tfsdk:"environment"`
	Annotations types.Map    `tfsdk:"annotations"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// Metadata implements datasource.DataSource.
func (d *AllocationsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_allocations"
}

// Schema implements datasource.DataSource.
func (d *AllocationsDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What the provisioners hold, with what an import needs: for a static pool, every allocation its " +
			"ledger records for it; for Kubernetes, every runtime (Deployment) this provider applied in the spec's namespace for " +
			"that provisioner, with the environment and annotations its objects record (empty for objects applied by versions of the " +
			"provider that did not record them). Compare it with the state to find " +
			"runtimes that an interrupted apply left behind " +
			"(see the guide *Recovering orphaned runtimes*), then take them back with `import { for_each = ... }`. A static pool's ledger " +
			"that does not exist (the default SQLite file on a machine that never applied) lists nothing, with a warning naming it; it is not created.",
		Attributes: map[string]schema.Attribute{
			"provisioner_name": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "List this provisioner only. Default: every provisioner of the set that can list what it holds (static, kubernetes).",
				// "" is no provisioner's name: it was read as "every provisioner", so an empty variable listed
				// other pools' allocations too, which a recovery by import { for_each } would take over.
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"allocations": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The allocations, by provisioner name, then host, then ID.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":               schema.StringAttribute{Computed: true, MarkdownDescription: "Resource ID (the runtime's `id`)."},
					"import_id":        schema.StringAttribute{Computed: true, MarkdownDescription: "The ID to import it by: `<provisioner_name>/<id>`."},
					"type":             schema.StringAttribute{Computed: true, MarkdownDescription: "Resource type (`runtime`)."},
					"name":             schema.StringAttribute{Computed: true, MarkdownDescription: "The runtime's `name`; empty when it has none."},
					"provisioner_name": schema.StringAttribute{Computed: true, MarkdownDescription: "The provisioner that holds it."},
					"host":             schema.StringAttribute{Computed: true, MarkdownDescription: "Host it is allocated on."},
					"slots":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Slots it holds."},
					"environment":      schema.StringAttribute{Computed: true, MarkdownDescription: "Its `environment`; empty when none was recorded."},
					"annotations": schema.MapAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "Its `annotations` (empty when none were recorded: allocations made before the ledger recorded them)."},
					"created_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When it was allocated in this ledger (RFC 3339, UTC): for a runtime `migrate-rill-static` copied from Rill's admin service, when the command ran, not when Rill placed it; for a named runtime, when a create last adopted it (a re-apply after an interrupted one, a `create_before_destroy` replacement, another workspace declaring the name)."},
				}},
			},
		},
		Blocks: map[string]schema.Block{"timeouts": dataSourceTimeoutsBlock(ctx)},
	}
}

// Configure implements datasource.DataSourceWithConfigure.
func (d *AllocationsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// Read implements datasource.DataSource.
func (d *AllocationsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !configured(d.client, &resp.Diagnostics) {
		return
	}
	var cfg allocationsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	names := d.client.Names()
	if only := cfg.Provisioner.ValueString(); only != "" {
		p, ok := d.client.Set[only]
		if !ok {
			_, _, err := d.client.Resolve(only, provisioner.ResourceTypeRuntime)
			resp.Diagnostics.AddAttributeError(path.Root("provisioner_name"), "Invalid provisioner", err.Error())
			return
		}
		if _, ok := p.(provisioner.Inventory); !ok {
			resp.Diagnostics.AddAttributeError(path.Root("provisioner_name"), "Provisioner cannot list what it holds",
				fmt.Sprintf("Provisioner %q (type %s) keeps no inventory this data source can read; static and kubernetes do.", only, p.Type()))
			return
		}
		names = []string{only}
	}
	r := startDataSourceRead(ctx, "rill_allocations", req, &resp.Diagnostics)
	if r == nil {
		return
	}
	defer r.cancel()
	out := allocationsModel{Provisioner: cfg.Provisioner, Allocations: []allocationModel{}, Timeouts: r.timeouts}
	for _, name := range names {
		inv, ok := d.client.Set[name].(provisioner.Inventory)
		if !ok {
			continue
		}
		items, err := inv.Allocated(r.ctx)
		if err != nil {
			resp.Diagnostics.AddError("Listing allocations failed", r.failedDetail(name, err))
			return
		}
		if len(items) == 0 {
			r.warnIfStoreMissing(d.client.Set[name], name, "lists nothing", &resp.Diagnostics)
		}
		for _, a := range items {
			ann, diags := types.MapValueFrom(ctx, types.StringType, nonNil(a.Annotations))
			resp.Diagnostics.Append(diags...)
			out.Allocations = append(out.Allocations, allocationModel{
				ID: types.StringValue(a.ID), ImportID: types.StringValue(importID(name, a.ID)), Type: types.StringValue(string(a.Type)),
				Name: types.StringValue(a.Name), Provisioner: types.StringValue(name), Host: types.StringValue(a.Host),
				Slots: types.Int64Value(int64(a.Slots)), Environment: types.StringValue(a.Environment), Annotations: ann,
				CreatedAt: types.StringValue(a.CreatedAt.UTC().Format(time.RFC3339)),
			})
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
