package resources

import (
	"context"
	"math"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var (
	_ datasource.DataSource              = (*ProvisionersDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*ProvisionersDataSource)(nil)
)

// ProvisionersDataSource is `rill_provisioners`: the provider's provisioner set, and for pools with a
// fixed capacity (static) the slots and use of each host, so a pipeline can see how full a pool is
// before it applies.
type ProvisionersDataSource struct {
	client *Client
}

// NewProvisionersDataSource is the data source factory.
func NewProvisionersDataSource() datasource.DataSource { return &ProvisionersDataSource{} }

type provisionersModel struct {
	Check        types.Bool         `tfsdk:"check"`
	Default      types.String       `tfsdk:"default"`
	Provisioners []provisionerModel `tfsdk:"provisioners"`
	Timeouts     timeouts.Value     `tfsdk:"timeouts"`
}

type provisionerModel struct {
	Name      types.String `tfsdk:"name"`
	Type      types.String `tfsdk:"type"`
	IsDefault types.Bool   `tfsdk:"is_default"`
	Supports  []string     `tfsdk:"supports"`
	Slots     types.Int64  `tfsdk:"slots"`
	UsedSlots types.Int64  `tfsdk:"used_slots"`
	FreeSlots types.Int64  `tfsdk:"free_slots"`
	Hosts     []hostModel  `tfsdk:"hosts"`
	// CheckError is why Check failed; null when it passed or was not asked.
	CheckError types.String `tfsdk:"check_error"`
}

type hostModel struct {
	Host      types.String `tfsdk:"host"`
	Slots     types.Int64  `tfsdk:"slots"`
	UsedSlots types.Int64  `tfsdk:"used_slots"`
	FreeSlots types.Int64  `tfsdk:"free_slots"`
	Runtimes  types.Int64  `tfsdk:"runtimes"`
	InSpec    types.Bool   `tfsdk:"in_spec"`
}

// Metadata implements datasource.DataSource.
func (d *ProvisionersDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_provisioners"
}

// Schema implements datasource.DataSource.
func (d *ProvisionersDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	hostAttrs := map[string]schema.Attribute{
		"host":       schema.StringAttribute{Computed: true, MarkdownDescription: "Runtime host URL."},
		"slots":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Slots the host offers."},
		"used_slots": schema.Int64Attribute{Computed: true, MarkdownDescription: "Slots allocated in the ledger."},
		"free_slots": schema.Int64Attribute{Computed: true, MarkdownDescription: "Slots still free (never negative)."},
		"runtimes":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Runtimes allocated on the host."},
		"in_spec": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the host is in the pool's spec. `false` for a host " +
			"removed from the spec on which this pool still holds runtimes (`slots` 0): destroy or replace them to free it."},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The provider's provisioner set and, for static pools, the capacity and use of every host, " +
			"read from the ledger. Use it to check how full a pool is before an apply. A ledger that does not exist (the default " +
			"SQLite file on a machine that never applied) reads as empty (no slot in use), with a warning naming it; it is not created. " +
			"With `check = true` it also says whether each provisioner works (`check_error`).",
		Attributes: map[string]schema.Attribute{
			"check": schema.BoolAttribute{Optional: true, MarkdownDescription: "Ask every provisioner whether it works, as Rill's admin service " +
				"does periodically (the provisioner contract's `Check`): a `static` pool reaches its ledger and reads it (a ledger that does not " +
				"exist reads as empty, and is not created), a `kubernetes` provisioner reaches its API server and lists the Deployments of its " +
				"namespace, a `clickhouse-static` one pings its server with the admin credentials. Each answer is in the provisioner's " +
				"`check_error`: a failed check does not fail the read, so that a `check` block or a precondition can report it. The " +
				"provisioners are asked at once, within the read's timeout (`timeouts.read`, default `" + shortDuration(defaultReadTimeout) + "`: a server " +
				"that accepts connections and never answers holds the read that long, so a health check may want a shorter one). Checks write " +
				"nothing. Default `false`: nothing is contacted " +
				"but the static pools' ledgers."},
			"default": schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the default provisioner (empty when none)."},
			"provisioners": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The provisioners, sorted by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":       schema.StringAttribute{Computed: true, MarkdownDescription: "Name in the set."},
					"type":       schema.StringAttribute{Computed: true, MarkdownDescription: "Provisioner type (`static`, `kubernetes`, `clickhouse-static`)."},
					"is_default": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it is the default provisioner."},
					"supports":   schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Resource types it provisions."},
					"slots":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Total slots of a fixed-capacity pool; null otherwise."},
					"used_slots": schema.Int64Attribute{Computed: true, MarkdownDescription: "Slots in use in a fixed-capacity pool; null otherwise."},
					"free_slots": schema.Int64Attribute{Computed: true, MarkdownDescription: "Free slots of a fixed-capacity pool; null otherwise."},
					"check_error": schema.StringAttribute{Computed: true, MarkdownDescription: "Why the provisioner's check failed " +
						"(with `check = true`); null when it passed, or when `check` is not set."},
					"hosts": schema.ListNestedAttribute{
						Computed:            true,
						MarkdownDescription: "Capacity and use per host, in spec order, then hosts removed from the spec that still hold this pool's runtimes (static pools only; empty otherwise).",
						NestedObject:        schema.NestedAttributeObject{Attributes: hostAttrs},
					},
				}},
			},
		},
		Blocks: map[string]schema.Block{"timeouts": dataSourceTimeoutsBlock(ctx)},
	}
}

// Configure implements datasource.DataSourceWithConfigure.
func (d *ProvisionersDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// Read implements datasource.DataSource.
func (d *ProvisionersDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !configured(d.client, &resp.Diagnostics) {
		return
	}
	r := startDataSourceRead(ctx, "rill_provisioners", req, &resp.Diagnostics)
	if r == nil {
		return
	}
	defer r.cancel()
	var check types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("check"), &check)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The checks run beside the capacity reads, not before them: a check that waits out the read
	// timeout (a server that accepts and never answers) must not leave the ledger's reads no time,
	// failing the read that check_error exists not to fail, and blaming a static pool.
	var checks chan map[string]string
	if check.ValueBool() {
		checks = make(chan map[string]string, 1) // buffered: a read that fails returns without receiving
		go func() { checks <- checkAll(r, d.client) }()
	}
	out := provisionersModel{Check: check, Default: types.StringValue(d.client.Default), Provisioners: []provisionerModel{}, Timeouts: r.timeouts}
	for _, name := range d.client.Names() {
		p := d.client.Set[name]
		m := provisionerModel{
			CheckError: types.StringNull(),
			Name:       types.StringValue(name),
			Type:       types.StringValue(p.Type()),
			IsDefault:  types.BoolValue(name == d.client.Default),
			Supports:   []string{},
			Slots:      types.Int64Null(),
			UsedSlots:  types.Int64Null(),
			FreeSlots:  types.Int64Null(),
			Hosts:      []hostModel{},
		}
		for _, rt := range []provisioner.ResourceType{provisioner.ResourceTypeRuntime, provisioner.ResourceTypeClickHouse} {
			if p.Supports(rt) {
				m.Supports = append(m.Supports, string(rt))
			}
		}
		if cr, ok := p.(provisioner.CapacityReporter); ok {
			hosts, err := cr.Capacity(r.ctx)
			if err != nil {
				resp.Diagnostics.AddError("Reading pool capacity failed", r.failedDetail(name, err))
				return
			}
			// Totals saturate instead of wrapping around: no real pool comes near, but a sum must
			// never print a negative number (two hosts of 2^63-1 slots once made it -2).
			var total, used, free int64
			for _, h := range hosts {
				f := h.FreeSlots()
				total = addSaturating(total, int64(h.Slots))
				used = addSaturating(used, int64(h.UsedSlots))
				free = addSaturating(free, f)
				m.Hosts = append(m.Hosts, hostModel{
					Host: types.StringValue(h.Host), Slots: types.Int64Value(int64(h.Slots)),
					UsedSlots: types.Int64Value(int64(h.UsedSlots)), FreeSlots: types.Int64Value(f), Runtimes: types.Int64Value(int64(h.Runtimes)),
					InSpec: types.BoolValue(!h.Removed),
				})
			}
			if used == 0 {
				r.warnIfStoreMissing(p, name, "reports no slot in use", &resp.Diagnostics)
			}
			m.Slots, m.UsedSlots, m.FreeSlots = types.Int64Value(total), types.Int64Value(used), types.Int64Value(free)
			tflog.Debug(ctx, "pool capacity", map[string]any{"provisioner": name, "slots": total, "used_slots": used})
		}
		out.Provisioners = append(out.Provisioners, m)
	}
	if checks != nil {
		failed := <-checks
		for i, m := range out.Provisioners {
			if msg, ok := failed[m.Name.ValueString()]; ok {
				out.Provisioners[i].CheckError = types.StringValue(msg)
				tflog.Warn(ctx, "provisioner check failed", map[string]any{"provisioner": m.Name.ValueString(), "error": msg})
			}
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

// checkAll asks every provisioner of the set its Check at once (one that does not answer costs the
// read its timeout once, not once per provisioner), and returns the failures by name, as check_error
// says them. The read timeout's advice is added to a failure only when the timeout had ended the read
// by the time that check returned: a check refused at once is not blamed on another's wait.
func checkAll(r *dataSourceRead, client *Client) map[string]string {
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed = map[string]string{}
	)
	for name, p := range client.Set {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Check(r.ctx); err != nil {
				msg := err.Error() + r.timedOut(name)
				mu.Lock()
				failed[name] = msg
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// addSaturating adds two non-negative int64s, stopping at math.MaxInt64.
func addSaturating(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
