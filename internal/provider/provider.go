// Package provider is the `rill` Terraform provider: its configuration block, and the provisioner set it
// builds from it for the resources and data sources in internal/resources.
package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/functions"
	"github.com/rill-provisioner/terraform-provider-rill/internal/logging"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/resources"

	// Provisioner implementations register themselves by type.
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse"
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/static"
)

var (
	_ provider.Provider                   = (*RillProvider)(nil)
	_ provider.ProviderWithValidateConfig = (*RillProvider)(nil)
	_ provider.ProviderWithFunctions      = (*RillProvider)(nil)
)

// The default SQLite ledger's location as the ledger_dsn description and its error name it; the
// pieces are the database package's, which finds the file (database.DefaultSQLitePath).
const (
	defaultLedgerFile = database.DefaultDataDirName + "/" + database.DefaultSQLiteFileName
	defaultLedgerPath = "$" + database.DefaultSQLitePathEnv + "/" + defaultLedgerFile
)

// Source is the provider's source address, as a configuration's required_providers and a CLI
// configuration's dev_overrides name it; Address is the full address the plugin serves under.
const (
	Source  = "rill-provisioner/rill"
	Address = "registry.terraform.io/" + Source
)

// RillProvider is the provider implementation.
type RillProvider struct {
	version string
}

// Model is the provider block.
type Model struct {
	ProvisionerSetJSON types.String `tfsdk:"provisioner_set_json"`
	DefaultProvisioner types.String `tfsdk:"default_provisioner"`
	LedgerDSN          types.String `tfsdk:"ledger_dsn"`
	RillVersion        types.String `tfsdk:"rill_version"`
}

// New returns a provider factory.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &RillProvider{version: version} }
}

// Metadata implements provider.Provider.
func (p *RillProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "rill"
	resp.Version = p.version
}

// Schema implements provider.Provider.
func (p *RillProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Provisions Rill runtimes (and ClickHouse databases) through pluggable provisioners: a static pool " +
			"of runtime hosts, Kubernetes, or a shared ClickHouse. The provisioners are configured as a named set in JSON, " +
			"the same format Rill's admin service reads from `" + envnames.ProvisionerSet + "`.",
		Attributes: map[string]schema.Attribute{
			"provisioner_set_json": schema.StringAttribute{
				Optional:  true,
				Sensitive: true, // specs can hold DSNs and credentials
				MarkdownDescription: "The provisioner set: a JSON object of provisioner names to `{\"type\": ..., \"spec\": {...}}`. " +
					"`//` and `/* */` comments and trailing commas are accepted. Defaults to the `" + envnames.ProvisionerSet + "` environment variable.",
			},
			"default_provisioner": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Name of the provisioner used by resources that do not name one and that it can provision. Defaults to `" + envnames.DefaultProvisioner +
					"`, and to the only provisioner when the set has exactly one. A resource it cannot provision (a `rill_clickhouse` when it is a " +
					"runtime provisioner, as Rill's `" + envnames.DefaultProvisioner + "` is) uses the set's one provisioner that can, as Rill's admin service does.",
			},
			"ledger_dsn": schema.StringAttribute{
				Optional:  true,
				Sensitive: true, // a PostgreSQL DSN can carry a password
				MarkdownDescription: "Where provisioners keep their bookkeeping (the static pool's slot allocations): `sqlite:///absolute/path/ledger.db`, " +
					"`sqlite://relative/path.db`, or `postgres://user:password@host:5432/db` when several pipelines share one pool. Defaults to `" +
					envnames.LedgerDSN + "`, then to an SQLite file at `" + defaultLedgerPath + "` " +
					"(`~/.local/share/" + defaultLedgerFile + "`). The ledger is opened, and the default located, on first use, not during " +
					"configuration: a set without a `static` provisioner uses no ledger.",
			},
			"rill_version": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Rill version handed to provisioners. The Kubernetes provisioner runs it as the image tag of a runtime whose `version` is unset or `latest`, and a change of it plans an update of those runtimes; a static pool does not use it. Defaults to `" + envnames.RillVersion + "`.",
			},
		},
	}
}

// ValidateConfig checks at plan time what can be checked without building anything.
func (p *RillProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var cfg Model
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var specs map[string]provisioner.ProvisionerSpec
	if s := cfg.ProvisionerSetJSON; !s.IsNull() && !s.IsUnknown() {
		if strings.TrimSpace(s.ValueString()) == "" {
			addSecretAttributeError(&resp.Diagnostics, "provisioner_set_json", "Missing provisioner set",
				"provisioner_set_json is set but empty: give a JSON object of provisioner names to {\"type\": ..., \"spec\": {...}}, or leave the attribute out to use "+envnames.ProvisionerSet+".")
			return
		}
		var err error
		if specs, err = provisioner.ParseSet(s.ValueString()); err != nil {
			warnings, err := setErrorsOfAPlanThatStops(s.ValueString(), err)
			addSetWarnings(&resp.Diagnostics, warnings, "")
			addSetError(&resp.Diagnostics, err, "")
			return
		}
		if len(specs) == 0 {
			addSetError(&resp.Diagnostics, provisioner.ErrEmptySet, "")
			return
		}
	}
	// An attribute set to "" (a variable whose default is "" rather than null) is not left out: it
	// says how to leave it out, instead of the errors for a name or DSN that is wrong (the DSN's
	// told of a Go function, DefaultDSN()).
	if d := cfg.DefaultProvisioner; !d.IsNull() && !d.IsUnknown() && d.ValueString() == "" {
		resp.Diagnostics.AddAttributeError(path.Root("default_provisioner"), "Unknown default provisioner",
			"default_provisioner is set but empty: name a provisioner of the set, or leave the attribute out (null) to use "+
				envnames.DefaultProvisioner+", else the only provisioner when the set has exactly one.")
	} else if d := cfg.DefaultProvisioner; specs != nil && !d.IsNull() && !d.IsUnknown() {
		if _, ok := specs[d.ValueString()]; !ok {
			resp.Diagnostics.AddAttributeError(path.Root("default_provisioner"), "Unknown default provisioner",
				fmt.Sprintf("default_provisioner %q is not in provisioner_set_json; known provisioners: %s", d.ValueString(), strings.Join(slices.Sorted(maps.Keys(specs)), ", ")))
		}
	}
	if l := cfg.LedgerDSN; !l.IsNull() && !l.IsUnknown() && l.ValueString() == "" {
		addSecretAttributeError(&resp.Diagnostics, "ledger_dsn", "Invalid ledger DSN",
			"ledger_dsn is set but empty: give a DSN (\"sqlite:///absolute/path/ledger.db\", \"postgres://...\"), or leave the attribute "+
				"out (null) to use "+envnames.LedgerDSN+", else the default SQLite ledger at "+defaultLedgerPath+".")
	} else if l := cfg.LedgerDSN; !l.IsNull() && !l.IsUnknown() {
		if err := database.ValidateDSN(l.ValueString()); err != nil {
			addSecretAttributeError(&resp.Diagnostics, "ledger_dsn", "Invalid ledger DSN", err.Error())
		}
	}
}

// addSetError reports err, from parsing or building the set, about provisioner_set_json: one diagnostic per
// error it joins (provisioner.SplitErrors), whose summary names the provisioner the error is about, at
// plan time (ValidateConfig) and at apply time (Configure) alike. The set may hold secrets (a DSN
// pasted into the wrong field), so the detail is masked.
func addSetError(diags *diag.Diagnostics, err error, from string) {
	for _, e := range provisioner.SplitErrors(err) {
		summary := "Invalid provisioner set"
		var se *provisioner.SetError
		if errors.As(e, &se) {
			summary = fmt.Sprintf("Invalid provisioner %q in the provisioner set", se.Provisioner)
		}
		addSecretAttributeError(diags, "provisioner_set_json", summary, logging.MaskString(e.Error())+from)
	}
}

// setErrorsOfAPlanThatStops returns every error of a set that ParseSet found in error (parseErr): its
// own, and those of building the entries that parsed, with the set's warnings. An error in
// ValidateConfig stops the plan before Configure would build the set, so without them a set with an
// unknown type in one entry and a wrong field in another took two plans to show both, and its
// warnings (a key given twice) showed only once the errors were fixed. When the set parses,
// ValidateConfig builds nothing. Either way `terraform validate` depends on none of what building
// reads from the environment (dsn_env's variable, a template file: provisioner.ErrFromEnvironment),
// which it may run without: those errors are dropped here, and Configure reports them.
func setErrorsOfAPlanThatStops(setJSON string, parseErr error) ([]provisioner.SetWarning, error) {
	_, _, warnings, err := checkSet(setJSON)
	var kept []error
	for _, e := range provisioner.SplitErrors(err) {
		if !errors.Is(e, provisioner.ErrFromEnvironment) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return warnings, parseErr // not reached: the set's errors are parseErr's and more
	}
	return warnings, errors.Join(kept...)
}

// checkSet builds setJSON on a ledger that is never opened, and closes what it built, for the names of
// the set's provisioners, those of them that are provisioner.ConfigPlanners (planners, for
// resources.Client.ConfigPlanners), its warnings and its errors: what a plan can know of a set without
// the ledger it will use. The initializers touch nothing (no network, no ledger).
func checkSet(setJSON string) (names []string, planners map[string]bool, warnings []provisioner.SetWarning, err error) {
	ledger := newLazyLedger("", zap.NewNop())
	defer func() { _ = ledger.Close() }()
	set, warnings, err := provisioner.NewSetWithWarnings(setJSON, ledger, zap.NewNop())
	planners = map[string]bool{}
	for name, p := range set {
		if _, ok := p.(provisioner.ConfigPlanner); ok {
			planners[name] = true
		}
		_ = p.Close()
	}
	return slices.Sorted(maps.Keys(set)), planners, warnings, err
}

// Configure builds the provisioner set (once per provider process for a given configuration) and hands
// it to resources and data sources.
func (p *RillProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg Model
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	unknown := &resources.Client{Unknown: true}
	if cfg.ProvisionerSetJSON.IsUnknown() {
		// A set that depends on resources not yet applied: resources learn it in a later run.
		tflog.Info(ctx, "provisioner set not known yet; provisioners will be built once it is")
		resp.ResourceData, resp.DataSourceData = unknown, unknown
		return
	}
	// Another value that depends on resources not yet applied (a ledger_dsn built from a database
	// resource): the set is built once all are known, but checked now, on a ledger that is never
	// opened, since rill_runtime's plan checks nothing while the client is unknown and the set's
	// errors showed only at apply.
	later := cfg.DefaultProvisioner.IsUnknown() || cfg.LedgerDSN.IsUnknown() || cfg.RillVersion.IsUnknown()
	// An unknown value reads as "" (and from no environment variable): not checked.
	setJSON := valueOrEnv(cfg.ProvisionerSetJSON, envnames.ProvisionerSet)
	defaultName := valueOrEnv(cfg.DefaultProvisioner, envnames.DefaultProvisioner)
	ledgerDSN := valueOrEnv(cfg.LedgerDSN, envnames.LedgerDSN)
	rillVersion := valueOrEnv(cfg.RillVersion, envnames.RillVersion)
	setFrom, defaultFrom, ledgerFrom := fromEnv(cfg.ProvisionerSetJSON, envnames.ProvisionerSet),
		fromEnv(cfg.DefaultProvisioner, envnames.DefaultProvisioner), fromEnv(cfg.LedgerDSN, envnames.LedgerDSN)

	if strings.TrimSpace(setJSON) == "" {
		addSecretAttributeError(&resp.Diagnostics, "provisioner_set_json", "Missing provisioner set",
			"Set provisioner_set_json in the provider block, or the "+envnames.ProvisionerSet+" environment variable, to a JSON object of provisioner names to {\"type\": ..., \"spec\": {...}}.")
		return
	}
	if ledgerDSN != "" {
		if err := database.CheckDSN(ledgerDSN); err != nil {
			addSecretAttributeError(&resp.Diagnostics, "ledger_dsn", "Invalid ledger DSN", err.Error()+ledgerFrom)
			return
		}
	}

	ctx = logging.WithMasking(ctx)
	var (
		built    *builtSet
		names    []string
		planners map[string]bool
		warnings []provisioner.SetWarning
		err      error
	)
	if later {
		names, planners, warnings, err = checkSet(setJSON)
	} else if built, warnings, err = sets.get(ctx, setJSON, ledgerDSN); err == nil {
		names = slices.Sorted(maps.Keys(built.set))
	}
	// Shown with the set's errors too: a key given twice is worth seeing while fixing them.
	addSetWarnings(&resp.Diagnostics, warnings, setFrom)
	if err != nil {
		addSetError(&resp.Diagnostics, err, setFrom)
		return
	}
	if len(names) == 0 {
		addSetError(&resp.Diagnostics, provisioner.ErrEmptySet, setFrom)
		return
	}
	var defaultProvisioner string
	switch {
	case defaultName != "":
		if !slices.Contains(names, defaultName) {
			resp.Diagnostics.AddAttributeError(path.Root("default_provisioner"), "Unknown default provisioner",
				fmt.Sprintf("default provisioner %q is not in the provisioner set; known provisioners: %s", defaultName, strings.Join(names, ", "))+defaultFrom)
			return
		}
		defaultProvisioner = defaultName
	case len(names) == 1:
		defaultProvisioner = names[0]
	}
	if later {
		tflog.Info(ctx, "provider configuration not fully known yet; provisioners will be built once it is")
		unknown.ConfigPlanners = planners
		resp.ResourceData, resp.DataSourceData = unknown, unknown
		return
	}
	// A new command: reads cached during the previous one may be out of date (an object deleted by
	// hand between two plans must read as gone).
	for _, prov := range built.set {
		if rc, ok := prov.(provisioner.ReadCacher); ok {
			rc.ForgetReads()
		}
	}
	client := &resources.Client{Set: built.set, Types: built.types, Default: defaultProvisioner, RillVersion: rillVersion}
	tflog.Debug(ctx, "provisioner set ready", map[string]any{"provisioners": names, "default": client.Default, "ledger": built.ledgerRedacted})
	resp.ResourceData, resp.DataSourceData = client, client
}

// Resources implements provider.Provider.
func (p *RillProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		resources.NewRuntimeResource,
		resources.NewClickHouseResource,
	}
}

// DataSources implements provider.Provider.
func (p *RillProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		resources.NewProvisionersDataSource,
		resources.NewAllocationsDataSource,
	}
}

// Functions implements provider.ProviderWithFunctions.
func (p *RillProvider) Functions(context.Context) []func() function.Function { return functions.List() }

// addSetWarnings reports the warnings of the set, about provisioner_set_json (addSecretAttributeError),
// each naming its provisioner and JSON field in the summary; the detail is masked, as addSetError's is.
func addSetWarnings(diags *diag.Diagnostics, warnings []provisioner.SetWarning, from string) {
	for _, w := range warnings {
		diags.AddWarning(fmt.Sprintf("Provisioner %q: %s", w.Provisioner, setWarningSummary(w)), secretAttributeDetail("provisioner_set_json", logging.MaskString(w.String())+from))
	}
}

// addSecretAttributeError reports an error about a sensitive attribute of the provider
// (provisioner_set_json, ledger_dsn) without an attribute path, naming the attribute in its detail:
// Terraform prints the source lines of the expression an attribute's diagnostic points at, and a
// set or DSN written as a literal holds its passwords. A set pasted into the provider block, as the
// migration guide's readers do with Rill's, showed its ClickHouse admin password 33 times in one
// plan's output, once per diagnostic (found by a walkthrough).
func addSecretAttributeError(diags *diag.Diagnostics, attr, summary, detail string) {
	diags.AddError(summary, secretAttributeDetail(attr, detail))
}

// secretAttributeDetail is detail, which names attr, or attr and detail.
func secretAttributeDetail(attr, detail string) string {
	if strings.Contains(detail, attr) {
		return detail
	}
	return attr + ": " + detail
}

// setWarningSummary names the JSON field of a warning in its summary, so that each reads on its own.
func setWarningSummary(w provisioner.SetWarning) string {
	if w.Field == "" {
		return "set warning"
	}
	return w.Field
}

// fromEnv is what Configure adds to a diagnostic about a value that came from its environment variable:
// Terraform points the diagnostic at the provider block, which does not hold the value, so the
// variable is where to look (found walking the GitOps guide with every value in the environment).
func fromEnv(v types.String, env string) string {
	if !v.IsNull() {
		return ""
	}
	return " (the value comes from the environment variable " + env + ": the provider block does not set it)"
}

func valueOrEnv(v types.String, env string) string {
	if !v.IsNull() {
		return v.ValueString()
	}
	return os.Getenv(env)
}
