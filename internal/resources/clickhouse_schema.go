package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// rill_clickhouse's schema, one function and one model per version; the rules for a new version are
// those of rill_runtime (runtime_schema.go).

// UpgradeState implements resource.ResourceWithUpgradeState: an upgrader from every earlier schema
// version (none yet: 0 is the first).
func (r *ClickHouseResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{}
}

// clickhouseModel is the Terraform value of rill_clickhouse in the current schema version (0).
type clickhouseModel struct {
	ID                      types.String   `tfsdk:"id"`
	Provisioner             types.String   `tfsdk:"provisioner_name"`
	Annotations             types.Map      `tfsdk:"annotations"`
	PasswordWO              types.String   `tfsdk:"password_wo"`
	PasswordWOVersion       types.Int64    `tfsdk:"password_wo_version"`
	DSN                     types.String   `tfsdk:"dsn"`
	WriteDSN                types.String   `tfsdk:"write_dsn"`
	DSNWithoutPassword      types.String   `tfsdk:"dsn_without_password"`
	WriteDSNWithoutPassword types.String   `tfsdk:"write_dsn_without_password"`
	Database                types.String   `tfsdk:"database"`
	User                    types.String   `tfsdk:"user"`
	Cluster                 types.String   `tfsdk:"cluster"`
	Timeouts                timeouts.Value `tfsdk:"timeouts"`
}

// writeOnly reports whether the resource's password comes from password_wo (its version is set):
// then dsn and write_dsn stay null and the state holds no secret.
func (m *clickhouseModel) writeOnly() bool { return !m.PasswordWOVersion.IsNull() }

// clickhouseSchemaV0 is version 0 of rill_clickhouse's schema, the current one.
func clickhouseSchemaV0(ctx context.Context) schema.Schema {
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A ClickHouse database and a user limited to it, on a shared ClickHouse server, from a " +
			"`clickhouse-static` provisioner. By default the provider generates the user's password and `dsn` carries it, " +
			"so it is in the state; with `password_wo` (Terraform 1.11 or newer, OpenTofu 1.11 or newer) you choose the " +
			"password, it is never stored, `dsn` and `write_dsn` stay null, and clients combine `dsn_without_password` " +
			"with the password they already have (the function `provider::rill::dsn_with_password` does it). Import " +
			"adopts an existing database and user; since ClickHouse keeps only a hash of the password, the first apply " +
			"after an import sets a new one.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "Resource ID (a UUID chosen at creation)."},
			"provisioner_name": schema.StringAttribute{
				Optional: true, Computed: true, PlanModifiers: stable,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
				MarkdownDescription: "Name of a `clickhouse-static` provisioner in the provider's set; defaults to the default provisioner when it is a `clickhouse-static` one, " +
					"else to the set's one `clickhouse-static` provisioner, as Rill's admin service chooses (its default provisioner is for runtimes). Changing it re-creates the database (its data is dropped), as does a value known only at apply (another resource's attribute: the plan says `# forces replacement`), as with any attribute that forces replacement; give it a known value to keep the database.",
			},
			"annotations": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.LengthAtLeast(1))},
				MarkdownDescription: "Project annotations; `organization_name` and `project_name` name the database at creation " +
					"(sanitized to `[a-z0-9_]`, at most 63 characters). Changing them later keeps the database. The database's " +
					"comment keeps those it was created with, and an import restores them from it (ClickHouse 21.11 or newer: older " +
					"servers keep no comment, and an import there leaves `annotations` null).",
			},
			"password_wo": schema.StringAttribute{
				Optional: true, Sensitive: true, WriteOnly: true,
				Validators: []validator.String{
					stringvalidator.LengthAtLeast(1),
					stringvalidator.AlsoRequires(path.MatchRoot("password_wo_version")),
				},
				MarkdownDescription: "The user's password, write-only: Terraform passes it to the provider during apply and never " +
					"stores it in state or plan (Terraform 1.11 or newer; it may come from an `ephemeral` variable or resource). " +
					"Requires `password_wo_version`. Without it the provider generates a password and keeps it in `dsn` " +
					"(the behaviour before write-only attributes, kept for compatibility).",
			},
			"password_wo_version": schema.Int64Attribute{
				Optional:   true,
				Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("password_wo"))},
				MarkdownDescription: "Any number, stored in state: change it to apply a new `password_wo` (Terraform cannot see a " +
					"write-only value change). The apply adds the new password, checks that it logs in, then removes the old " +
					"one (on ClickHouse 24.9 or newer; older servers replace it at once).",
			},
			"dsn": schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: stable,
				MarkdownDescription: "DSN of the database with the resource's own user and generated password; null with `password_wo`."},
			"write_dsn": schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: stable,
				MarkdownDescription: "DSN for writes, when the provisioner has a `write_dsn` (empty otherwise); null with `password_wo`."},
			"dsn_without_password": schema.StringAttribute{Computed: true, PlanModifiers: stable,
				MarkdownDescription: "`dsn` without the password (user, host, database and options): not a secret. The DSNs are " +
					"built from the provisioner's `dsn` (and `write_dsn`) with the resource's user and password. While the address " +
					"they name answers, they stay there, whatever the spec names now (another server, say, for new resources). After " +
					"the server moves (a new address in the spec, the old one no longer answering), the next refresh logs in at the " +
					"new address with the same password and the DSNs follow it (the plan shows them changed outside Terraform); a " +
					"login refused there is an error, never a deletion. With `password_wo` the refresh has no password to log in " +
					"with, so `dsn_without_password` takes the new address when an apply sets the password (a new " +
					"`password_wo_version`)."},
			"write_dsn_without_password": schema.StringAttribute{Computed: true, PlanModifiers: stable,
				MarkdownDescription: "`write_dsn` without the password; empty when the provisioner has no `write_dsn`."},
			"database": schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "Database name."},
			"user":     schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "User name."},
			"cluster":  schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "ClickHouse cluster the objects were created `ON CLUSTER`; empty when none."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx),
		},
	}
}
