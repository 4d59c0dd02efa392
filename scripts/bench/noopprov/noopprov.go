// Command noopprov is a calibration provider for scripts/bench.sh --calibrate: "rill-provisioner/noop",
// built with the same terraform-plugin-framework (same go.mod) as the real provider, with two resources
// whose CRUD methods do nothing but copy the plan into the state:
//
//   - `noop_item`, two attributes: timing COUNT of them against COUNT `terraform_data` shows what any
//     out-of-process framework provider costs (process starts, gRPC, msgpack, the framework's per-RPC
//     work and its trace logging) before the provider does anything of its own;
//   - `noop_runtime`, with rill_runtime's own schema (the real Schema method: the same attributes,
//     validators, plan modifiers, defaults and timeouts block): what the framework and Terraform
//     cost for that schema, so that rill_runtime against it is what the provider's own work costs;
//   - `noop_bare`, rill_runtime's attributes and timeouts block without their validators, plan
//     modifiers and defaults: the least any provider with those attributes can cost, so that
//     noop_runtime against it is what the validators, plan modifiers and defaults cost, and
//     noop_item against it what the number of attributes costs;
//   - `noop_contract`, noop_bare reduced to the attributes that carry Rill's provisioner contract
//     (contractAttributes), without the timeouts block: the least any provider that exposes a
//     runtime's arguments and config can cost, whatever it adds besides.
//
// Built by the bench as
//
//	CGO_ENABLED=0 go build -trimpath -o /tmp/prov/terraform-provider-noop ./scripts/bench/noopprov
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider.
package main

import (
	"context"
	"fmt"
	"log"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/resources"
)

type noopProvider struct{}

func (noopProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noop"
}
func (noopProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (noopProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &item{} },
		func() resource.Resource { return &sameSchema{} },
		func() resource.Resource { return &bareSchema{} },
		func() resource.Resource { return &contractSchema{} },
	}
}

var _ provider.Provider = noopProvider{}

type item struct{}

type itemModel struct {
	ID    types.String `tfsdk:"id"`
	Slots types.Int64  `tfsdk:"slots"`
}

var seq atomic.Int64

func (*item) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_item"
}

func (*item) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id":    schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"slots": schema.Int64Attribute{Required: true},
	}}
}

func (*item) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.ID = types.StringValue(fmt.Sprintf("noop-%d", seq.Add(1)))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (*item) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (*item) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m itemModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (*item) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// sameSchema is `noop_runtime`: rill_runtime's schema, and no work. Its state is the plan with every
// value still unknown (the computed attributes rill_runtime fills in) set to what a runtime of the
// bench's pool holds (runtimeLike), so that Terraform stores, sends and rewrites the same attribute
// values for it as for rill_runtime: those bytes are the schema's, whatever provider fills them in.
// What rill_runtime keeps besides (its private state) is not here: that is the provider's own cost.
type sameSchema struct{}

func (*sameSchema) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_runtime"
}

func (*sameSchema) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	resources.NewRuntimeResource().Schema(ctx, req, resp)
}

func (*sameSchema) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = known(req.Plan.Raw, seq.Add(1))
}

func (*sameSchema) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (*sameSchema) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = known(req.Plan.Raw, 0)
}

func (*sameSchema) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// bareSchema is `noop_bare`: sameSchema with the validators, plan modifiers and defaults taken out
// of every attribute. The timeouts block keeps the duration checks on its attributes, which every
// resource with a timeouts block has; the bench's configurations set no timeouts. Without
// hibernated's default, the plan leaves it unknown on create, and the state false (runtimeLike).
type bareSchema struct{ sameSchema }

func (*bareSchema) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_bare"
}

func (b *bareSchema) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	b.sameSchema.Schema(ctx, req, resp)
	for name, attr := range resp.Schema.Attributes {
		resp.Schema.Attributes[name] = withoutRules(attr)
	}
}

// contractAttributes are the attributes of rill_runtime that carry Rill's provisioner contract
// (internal/provisioner): the resource's ID and provisioner, RuntimeArgs (slots, version), the
// project's annotations (ResourceOptions) and RuntimeConfig (host, audience, cpu, memory_gb,
// storage_bytes). The others (name, environment, override_disk_gb, hibernated, drift, timeouts) are
// this provider's additions.
var contractAttributes = []string{"id", "provisioner_name", "slots", "version", "annotations", "host", "audience", "cpu", "memory_gb", "storage_bytes"}

// contractSchema is `noop_contract`: noop_bare with only contractAttributes and no timeouts block.
type contractSchema struct{ bareSchema }

func (*contractSchema) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_contract"
}

func (c *contractSchema) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	c.bareSchema.Schema(ctx, req, resp)
	for name := range resp.Schema.Attributes {
		if !slices.Contains(contractAttributes, name) {
			delete(resp.Schema.Attributes, name)
		}
	}
	if len(resp.Schema.Attributes) != len(contractAttributes) {
		resp.Diagnostics.AddError("noop_contract", fmt.Sprintf("rill_runtime lacks one of %v", contractAttributes))
	}
	resp.Schema.Blocks = nil
}

// withoutRules returns a copy of attr with its Validators, PlanModifiers and Default fields zeroed:
// every attribute type of the framework has them as fields, of a different type per attribute type.
func withoutRules(attr schema.Attribute) schema.Attribute {
	v := reflect.New(reflect.TypeOf(attr)).Elem()
	v.Set(reflect.ValueOf(attr))
	for _, field := range []string{"Validators", "PlanModifiers", "Default"} {
		if f := v.FieldByName(field); f.IsValid() {
			f.SetZero()
		}
	}
	return v.Interface().(schema.Attribute)
}

// known returns v with each unknown top-level attribute replaced by what the n-th runtime of the
// bench's pool holds (runtimeLike; n is 0 in an update, whose plan knows them from the state), and
// any other unknown value by null.
func known(v tftypes.Value, n int64) tftypes.Value {
	like := runtimeLike(n)
	out, _ := tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		if steps := p.Steps(); len(steps) == 1 {
			if name, ok := steps[0].(tftypes.AttributeName); ok {
				if x, ok := like[string(name)]; ok {
					return x, nil
				}
				if name == "drift" {
					return tftypes.NewValue(v.Type(), []tftypes.Value{}), nil
				}
			}
		}
		return tftypes.NewValue(v.Type(), nil), nil
	})
	return out
}

// runtimeLike: the computed attributes of the n-th one-slot rill_runtime on the bench's pool
// (scripts/bench.sh's write_runtime_config: provisioner "pool", hosts runtime-<i>.bench.invalid), in
// the same formats and sizes: a UUID, the host and audience URLs, and the sizes of one slot.
func runtimeLike(n int64) map[string]tftypes.Value {
	host := n % 10
	return map[string]tftypes.Value{
		"id":               tftypes.NewValue(tftypes.String, fmt.Sprintf("%08x-0000-4000-8000-000000000000", n)),
		"host":             tftypes.NewValue(tftypes.String, fmt.Sprintf("http://runtime-%d.bench.invalid:9091", host)),
		"audience":         tftypes.NewValue(tftypes.String, fmt.Sprintf("http://runtime-%d.bench.invalid:8081", host)),
		"provisioner_name": tftypes.NewValue(tftypes.String, "pool"),
		"cpu":              tftypes.NewValue(tftypes.Number, 1),
		"memory_gb":        tftypes.NewValue(tftypes.Number, 4),
		"storage_bytes":    tftypes.NewValue(tftypes.Number, 42949672960),
		"hibernated":       tftypes.NewValue(tftypes.Bool, false),
	}
}

func main() {
	err := providerserver.Serve(context.Background(), func() provider.Provider { return noopProvider{} },
		providerserver.ServeOpts{Address: "registry.terraform.io/rill-provisioner/noop"})
	if err != nil {
		log.Fatal(err)
	}
}
