package resources

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// rill_runtime's schema, one function and one model per version, as terraform-provider-random keeps
// them. Version 0 is current: Schema returns runtimeSchemaV0 and the resource reads it into
// runtimeModel. Adding an optional or computed attribute needs no new version (a state written
// before it decodes with the attribute null). Removing, renaming or retyping one does: a state
// written by an earlier release could no longer be decoded. Then (CONTRIBUTING.md, "How to change a
// resource's schema version"):
//  1. copy runtimeSchemaV0 to runtimeSchemaV1 and runtimeModel to runtimeModelV0 (the frozen old shape),
//     change the copy, set its Version to 1 and make Schema return it;
//  2. add to UpgradeState an entry for 0 with PriorSchema: runtimeSchemaV0(ctx) and a StateUpgrader that
//     reads runtimeModelV0 and writes runtimeModel;
//  3. run `go test ./internal/resources -run TestSchemaSnapshots -update-schema-snapshots` to record v1.
// TestSchemaSnapshots keeps every recorded version frozen and refuses a removal or a type change
// within the current one.

// UpgradeState implements resource.ResourceWithUpgradeState: an upgrader from every earlier schema
// version (none yet: 0 is the first).
func (r *RuntimeResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{}
}

// runtimeModel is the Terraform value of rill_runtime in the current schema version (0).
type runtimeModel struct {
	ID           types.String   `tfsdk:"id"`
	Provisioner  types.String   `tfsdk:"provisioner_name"`
	Name         types.String   `tfsdk:"name"`
	Slots        types.Number   `tfsdk:"slots"`
	Version      types.String   `tfsdk:"version"`
	Environment  types.String   `tfsdk:"environment"`
	DiskGB       types.Int64    `tfsdk:"override_disk_gb"`
	Annotations  types.Map      `tfsdk:"annotations"`
	Hibernated   types.Bool     `tfsdk:"hibernated"`
	Host         types.String   `tfsdk:"host"`
	Audience     types.String   `tfsdk:"audience"`
	CPU          types.Int64    `tfsdk:"cpu"`
	MemoryGB     types.Int64    `tfsdk:"memory_gb"`
	StorageBytes types.Int64    `tfsdk:"storage_bytes"`
	Drift        types.List     `tfsdk:"drift"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

// noAnnotations is the value of `annotations` when none are set.
var noAnnotations = types.MapValueMust(types.StringType, map[string]attr.Value{})

// runtimeCodec reads and writes runtimeModel in the current schema, for the resource's Plan and State.
var runtimeCodec = newModelCodec[runtimeModel](context.Background(), runtimeSchemaV0(context.Background()))

// runtimeSchemaV0 is version 0 of rill_runtime's schema, the current one.
func runtimeSchemaV0(ctx context.Context) schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A Rill runtime, provisioned by one of the provider's provisioners: slots on a host of a static pool, " +
			"or a dedicated Deployment on Kubernetes. " + fmt.Sprintf("Each slot grants %d CPU, %d GB of memory and %d GiB of storage.",
			provisioner.CPUPerSlot, provisioner.MemoryGBPerSlot, provisioner.StorageBytesPerSlot>>30),
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The resource ID the provisioner knows the runtime by: a random UUID chosen at creation, or for a " +
					"named runtime the UUIDv5 of `<provisioner_name>/<name>` in the namespace UUIDv5(URL, " +
					"`" + provisioner.NameNamespaceURL + "`), known at plan time.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"provisioner_name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Name of the provisioner in the provider's set. Defaults to the provider's default provisioner " +
					"at creation (when it is a `clickhouse-static` one, to the set's one runtime provisioner, as for a set without a default). Changing it re-creates the runtime, as does a value known only at apply (another resource's attribute). A change of `default_provisioner` leaves existing runtimes where " +
					"they are, but a replacement is a creation: one without `provisioner_name` that is replaced (`-replace`, a taint, a new " +
					"`name`) moves to the new default; set `provisioner_name` to keep it. Renaming the provisioner in the set is no " +
					"change of it: the runtimes it made fail to refresh until the old name is back (see the troubleshooting guide, " +
					"\"Invalid provisioner\"). (Called `provisioner_name` because Terraform reserves `provisioner` in resources.)",
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A name for the runtime, unique per provisioner: letters, digits, `.`, `_` and `-`, starting and " +
					"ending with a letter or digit, at most " + strconv.Itoa(provisioner.NameMaxLength) + " characters. With a name the runtime's `id` is derived from the " +
					"provisioner and the name (a UUIDv5), so an apply that was interrupted (terraform or the provider killed) " +
					"leaves nothing behind: the next apply finds the runtime at that ID and adopts it. Two configurations " +
					"that give the same name to runtimes of one provisioner manage the same runtime; of two applies that create it at " +
					"the same time, one creates it and the other adopts it, and a create that fails undoes the runtime only when " +
					"it created it itself. For the same reason, `create_before_destroy` on a named runtime (with `-replace`, " +
					"`replace_triggered_by` or a taint) keeps the runtime: the new instance adopts it and the destroy of the old one " +
					"leaves it (with a warning). A new resource address for the name needs a `moved` block: without one, Terraform " +
					"usually destroys the old address first, which frees the runtime before the new one allocates it again. A replacement " +
					"without `create_before_destroy` frees the runtime and allocates it again, possibly on another host. Without a name, see the " +
					"guide on recovering orphaned runtimes. Changing it re-creates the runtime.",
				Validators:    []validator.String{nameValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"slots": schema.NumberAttribute{
				Required: true,
				MarkdownDescription: "Number of slots: a whole number from 1 to " + strconv.Itoa(provisioner.MaxSlots) + " (the most whose storage, " +
					strconv.FormatInt(provisioner.StorageBytesPerSlot>>30, 10) + " GiB per slot, fits in 64 bits). Changing it resizes the runtime in place when its host or cluster has room.",
				// A number, not an int64: Terraform hands 1.5 or 2^63 to the provider, and only a
				// number attribute lets a validator name the attribute instead of failing the read.
				Validators: []validator.Number{slotsValidator{}},
			},
			"version": schema.StringAttribute{
				Optional: true,
				// What each provisioner does with it: kubernetes, provisioner.ResolveVersion in render.go; static,
				// recordOf (the ledger keeps it for an import). Not Computed, so a null stays null in state.
				MarkdownDescription: "Rill version of the runtime. On Kubernetes it is the image tag; unset or `" + provisioner.LatestVersion + "`, the tag " +
					"is the provider's `rill_version`, else `" + provisioner.LatestVersion + "`, and the runtime follows it: state keeps the " +
					"attribute as configured, and a change of `rill_version` plans an update that rolls the new tag out. On a static pool nothing is " +
					"deployed (hosts run the version they were deployed with): the value is only recorded in the ledger as given, for an import " +
					"to restore; unset records none and does not follow `rill_version`, so changing `rill_version` plans nothing for it.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"environment": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Environment of the project the runtime serves (e.g. `prod`, `dev`); unset means `" + provisioner.DefaultEnvironment + "`, as in Rill. " +
					"Passed to the provisioner as the runtime's `environment` argument (Kubernetes templates see it as `.Environment`, not in `.Annotations`, as in Rill) and as the `environment` annotation.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"override_disk_gb": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Disk size in GB (2^30 bytes) that replaces the " + strconv.FormatInt(provisioner.StorageBytesPerSlot>>30, 10) + " GiB per slot, as Rill's `override_disk_gb`. " +
					"A Kubernetes volume grows to it but never shrinks; a static pool only reports it. At most " +
					strconv.FormatInt(provisioner.MaxOverrideDiskGB, 10) + " (the most whose bytes fit in 64 bits).",
				Validators: []validator.Int64{int64validator.Between(1, provisioner.MaxOverrideDiskGB)},
			},
			// Computed with an empty default, so that none and `{}` (a module's default) are one value:
			// an import, which cannot tell them apart, then plans no change for either.
			"annotations": schema.MapAttribute{
				Optional:    true,
				Computed:    true,
				Default:     mapdefault.StaticValue(noAnnotations),
				ElementType: types.StringType,
				MarkdownDescription: "Annotations of the owning project (e.g. `organization_name`, `project_name`), passed to the provisioner. " +
					"Defaults to none (`{}`).",
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.LengthAtLeast(1))},
			},
			"hibernated": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Hibernate the runtime, keeping its data: Kubernetes scales the Deployment to zero and keeps the " +
					"volume and Service; a static pool keeps the slots reserved and records the flag in the ledger (the host, which " +
					"is not the provider's, keeps running). Defaults to `false`.",
			},
			"host": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "URL clients reach the runtime at. On Kubernetes it is the spec's `host` with the runtime's provision ID for `*`: " +
					"after the spec's `host` changes, the next plan (also with `-refresh=false`) shows the new URL, and `audience` with it, as an " +
					"in-place update that serves it.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"audience": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "JWT audience of the runtime.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cpu": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: fmt.Sprintf("CPU cores granted (%d per slot).", provisioner.CPUPerSlot),
			},
			"memory_gb": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: fmt.Sprintf("Memory granted, in GB (%d per slot).", provisioner.MemoryGBPerSlot),
			},
			"storage_bytes": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: fmt.Sprintf("Storage granted, in bytes (%d GiB per slot). ", provisioner.StorageBytesPerSlot>>30) + "A Kubernetes volume never shrinks: after a " +
					"resize down it keeps its larger size, and this shows the size it really has; so does the create of a named " +
					"runtime, which adopts what is at its name (its plan leaves this to the apply).",
			},
			"drift": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "How the live runtime differed from what the provisioner would apply, as found by the last " +
					"refresh (for example templates changed on disk, an image edited by hand, or a Kubernetes Deployment deleted by " +
					"hand while its volume remains), or that the last apply ended before the runtime was ready (interrupted, or an " +
					"update's wait that failed). A non-empty list is planned as an in-place update that repairs it under the " +
					"same ID and waits for the runtime to be ready; after apply it is empty.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx),
		},
	}
}
