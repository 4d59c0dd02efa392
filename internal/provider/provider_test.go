package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/resources"
)

// config builds a provider block; attributes not given are null, tftypes.UnknownValue marks one unknown.
func config(t *testing.T, attrs map[string]any) tfsdk.Config {
	t.Helper()
	var s fwprovider.SchemaResponse
	New("test")().Schema(context.Background(), fwprovider.SchemaRequest{}, &s)
	vals := map[string]tftypes.Value{}
	for name := range s.Schema.Attributes {
		v, ok := attrs[name]
		switch {
		case !ok:
			vals[name] = tftypes.NewValue(tftypes.String, nil)
		default:
			vals[name] = tftypes.NewValue(tftypes.String, v)
		}
	}
	return tfsdk.Config{Schema: s.Schema, Raw: tftypes.NewValue(s.Schema.Type().TerraformType(context.Background()), vals)}
}

func validate(t *testing.T, attrs map[string]any) diag.Diagnostics {
	t.Helper()
	var resp fwprovider.ValidateConfigResponse
	(&RillProvider{}).ValidateConfig(context.Background(), fwprovider.ValidateConfigRequest{Config: config(t, attrs)}, &resp)
	return resp.Diagnostics
}

func configure(t *testing.T, attrs map[string]any) (*resources.Client, diag.Diagnostics) {
	t.Helper()
	t.Cleanup(CloseAll)
	var resp fwprovider.ConfigureResponse
	(&RillProvider{}).Configure(context.Background(), fwprovider.ConfigureRequest{Config: config(t, attrs)}, &resp)
	client, _ := resp.ResourceData.(*resources.Client)
	if resp.DataSourceData != resp.ResourceData {
		t.Errorf("resources and data sources got different provider data")
	}
	return client, resp.Diagnostics
}

// onlyError returns the one error diagnostic, which must be on attribute at.
func onlyError(t *testing.T, diags diag.Diagnostics, at string) diag.Diagnostic {
	t.Helper()
	if diags.ErrorsCount() != 1 {
		t.Fatalf("want one error on %s, got %v", at, diags)
	}
	d := diags.Errors()[0]
	if !isAbout(d, at) {
		t.Fatalf("error %q is not about %s", d.Summary(), at)
	}
	return d
}

// isAbout reports whether d is about the provider attribute attr: on its path; or, for a sensitive
// attribute (whose diagnostics carry no path, see addSecretAttributeError), naming it in its detail.
func isAbout(d diag.Diagnostic, attr string) bool {
	withPath, ok := d.(diag.DiagnosticWithPath)
	if attr == "provisioner_set_json" || attr == "ledger_dsn" {
		return !ok && strings.Contains(d.Detail(), attr)
	}
	return ok && withPath.Path().Equal(path.Root(attr))
}

const password = "Pr0v1der-S3cret"

// A DSN pasted into the wrong place of the set is echoed by the error that names the place: the
// diagnostic (which tflog's masking never sees) keeps the place and masks the password, at plan time
// (ValidateConfig) and at apply time (Configure). Both name the provisioner in the summary, as the
// troubleshooting guide's heading does (the plan's once said only "Invalid provisioner set").
func TestSetErrorsMaskAPasswordTheyEcho(t *testing.T) {
	set := `{"ch": {"type": "clickhouse://admin:` + password + `@ch.test:9000/default", "spec": {}}}`
	for name, diags := range map[string]func() diag.Diagnostics{
		"ValidateConfig": func() diag.Diagnostics { return validate(t, map[string]any{"provisioner_set_json": set}) },
		"Configure": func() diag.Diagnostics {
			_, d := configure(t, map[string]any{"provisioner_set_json": set, "ledger_dsn": "sqlite://" + filepath.Join(t.TempDir(), "l.db")})
			return d
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := onlyError(t, diags(), "provisioner_set_json")
			if strings.Contains(d.Detail(), password) || strings.Contains(d.Summary(), password) {
				t.Fatalf("the diagnostic shows the password: %s: %s", d.Summary(), d.Detail())
			}
			if d.Summary() != `Invalid provisioner "ch" in the provisioner set` {
				t.Fatalf("summary %q should name the provisioner", d.Summary())
			}
			if !strings.Contains(d.Detail(), `unknown provisioner type "clickhouse://admin:***@ch.test:9000/default"`) {
				t.Fatalf("the diagnostic should still say what is wrong and where: %s", d.Detail())
			}
		})
	}
}

func TestLedgerDSNErrorsNameTheAttributeWithoutTheDSN(t *testing.T) {
	dsn := "mysql://rill:" + password + "@db.test/ledger"
	for name, diags := range map[string]func() diag.Diagnostics{
		"ValidateConfig": func() diag.Diagnostics { return validate(t, map[string]any{"ledger_dsn": dsn}) },
		"Configure": func() diag.Diagnostics {
			_, d := configure(t, map[string]any{"ledger_dsn": dsn, "provisioner_set_json": `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h", "slots": 1}]}}}`})
			return d
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := onlyError(t, diags(), "ledger_dsn")
			if strings.Contains(d.Detail(), password) || !strings.Contains(d.Detail(), "postgres://") {
				t.Fatalf("want the accepted forms without the password, got: %s", d.Detail())
			}
		})
	}
}

// The default provisioner: the configured one, the only one, or none; a name not in the set is an
// error on default_provisioner at plan time and at apply time.
func TestDefaultProvisioner(t *testing.T) {
	one := `{"a": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1}]}}}`
	two := `{"a": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1}]}},
	         "b": {"type": "static", "spec": {"runtimes": [{"host": "http://b", "slots": 1}]}}}`
	ledger := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	for _, c := range []struct {
		name, set, def, want string
	}{
		{"the only one", one, "", "a"},
		{"configured", two, "b", "b"},
		{"none of two", two, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			attrs := map[string]any{"provisioner_set_json": c.set, "ledger_dsn": ledger}
			if c.def != "" {
				attrs["default_provisioner"] = c.def
			}
			client, diags := configure(t, attrs)
			if diags.HasError() || client == nil {
				t.Fatalf("configure: %v", diags)
			}
			if client.Default != c.want || strings.Join(client.Names(), ",") != strings.Join(slices.Sorted(maps.Keys(client.Set)), ",") {
				t.Fatalf("default %q (want %q), names %v", client.Default, c.want, client.Names())
			}
		})
	}
	attrs := map[string]any{"provisioner_set_json": two, "ledger_dsn": ledger, "default_provisioner": "c"}
	for name, diags := range map[string]diag.Diagnostics{"ValidateConfig": validate(t, attrs), "Configure": func() diag.Diagnostics { _, d := configure(t, attrs); return d }()} {
		d := onlyError(t, diags, "default_provisioner")
		if !strings.Contains(d.Detail(), `"c"`) || !strings.Contains(d.Detail(), "a, b") {
			t.Errorf("%s: the error should name the unknown default and the known ones: %s", name, d.Detail())
		}
	}
}

// The provider block may leave everything to Rill's environment variables, the default provisioner
// among several included. (Through the CLI: TestExamplesApplyAndPlanNoChangeAfter, whose provider
// blocks are empty.)
func TestConfigureReadsTheEnvironment(t *testing.T) {
	t.Setenv(envnames.ProvisionerSet, `{"env-a": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1}]}},
		"env-b": {"type": "static", "spec": {"runtimes": [{"host": "http://b", "slots": 1}]}}}`)
	t.Setenv(envnames.DefaultProvisioner, "env-b")
	t.Setenv(envnames.LedgerDSN, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	t.Setenv(envnames.RillVersion, "v0.99.1")
	client, diags := configure(t, nil)
	if diags.HasError() || client == nil || client.Default != "env-b" || client.RillVersion != "v0.99.1" || client.Types["env-b"] != "static" {
		t.Fatalf("configure from the environment: %+v %v", client, diags)
	}
	t.Setenv(envnames.ProvisionerSet, "")
	_, diags = configure(t, nil)
	onlyError(t, diags, "provisioner_set_json")
}

// A value taken from its environment variable that is wrong says so: Terraform points the diagnostic at
// the provider block, which in the GitOps guide sets none of them. The same value set in the block
// does not mention the variable.
func TestConfigureNamesTheEnvironmentVariableAValueCameFrom(t *testing.T) {
	set := `{"env": {"type": "static", "spec": {"runtimes": [{"host": "http://e", "slots": 1}]}}}`
	ledger := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	for _, c := range []struct {
		env, value, attr string
	}{
		{envnames.ProvisionerSet, `{"env": {"type": "static", "spec": {"runtimes": [{"host": "http://e", "slots": -1}]}}}`, "provisioner_set_json"},
		{envnames.LedgerDSN, "mysql://rill@db.test/ledger", "ledger_dsn"},
		{envnames.DefaultProvisioner, "nope", "default_provisioner"},
	} {
		t.Run(c.env, func(t *testing.T) {
			attrs := map[string]any{"provisioner_set_json": set, "ledger_dsn": ledger}
			delete(attrs, c.attr)
			t.Setenv(c.env, c.value)
			_, diags := configure(t, attrs)
			if d := onlyError(t, diags, c.attr); !strings.Contains(d.Detail(), "the environment variable "+c.env) {
				t.Errorf("from %s: the error does not name the variable: %s", c.env, d.Detail())
			}
			t.Setenv(c.env, "")
			attrs[c.attr] = c.value
			_, diags = configure(t, attrs)
			if d := onlyError(t, diags, c.attr); strings.Contains(d.Detail(), "environment variable") {
				t.Errorf("set in the block: the error names a variable: %s", d.Detail())
			}
		})
	}
}

// A provider block that depends on values computed during apply builds nothing yet.
func TestConfigureWithUnknownValuesBuildsNothing(t *testing.T) {
	client, diags := configure(t, map[string]any{"provisioner_set_json": tftypes.UnknownValue})
	if diags.HasError() || client == nil || !client.Unknown || client.Set != nil {
		t.Fatalf("unknown configuration: %+v %v", client, diags)
	}
}

// Configure opens no ledger, and a provisioner's reads (what a plan does) create none: the set is built
// on the lazy ledger (TestLazyLedgerReadsCreateNothingUntilTheFirstWrite shows the first write creates it).
func TestLedgerIsOpenedOnFirstUse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ledger.db")
	client, diags := configure(t, map[string]any{
		"provisioner_set_json": `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h", "slots": 1}]}}}`,
		"ledger_dsn":           "sqlite://" + file,
	})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("Configure created the ledger (stat: %v)", err)
	}
	hosts, err := client.Set["p"].(provisioner.CapacityReporter).Capacity(context.Background())
	if err != nil || len(hosts) != 1 {
		t.Fatalf("capacity: %v %v", hosts, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a read created the ledger (stat: %v)", err)
	}
}

// fakeForgetfulProvisioner is a fake provisioner that counts ForgetReads calls; only Close and Type are otherwise called.
type fakeForgetfulProvisioner struct {
	provisioner.Provisioner
	forgets int
}

func (f *fakeForgetfulProvisioner) Type() string { return "fake-forgetful" }
func (f *fakeForgetfulProvisioner) Close() error { return nil }
func (f *fakeForgetfulProvisioner) ForgetReads() { f.forgets++ }

// Every Configure (every Terraform command) makes the set's provisioners forget cached reads, also when
// the set itself is reused from an earlier command of the same process.
func TestConfigureMakesProvisionersForgetCachedReads(t *testing.T) {
	provisioner.Initializers["fake-forgetful"] = func([]byte, database.DB, *zap.Logger) (provisioner.Provisioner, error) {
		return &fakeForgetfulProvisioner{}, nil
	}
	t.Cleanup(func() { delete(provisioner.Initializers, "fake-forgetful") })
	attrs := map[string]any{
		"provisioner_set_json": `{"f": {"type": "fake-forgetful", "spec": {}}}`,
		"ledger_dsn":           "sqlite://" + filepath.Join(t.TempDir(), "ledger.db"),
	}
	first, diags := configure(t, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	second, diags := configure(t, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	f := second.Set["f"].(*fakeForgetfulProvisioner)
	if first.Set["f"] != second.Set["f"] || f.forgets != 2 {
		t.Fatalf("same provisioner: %v; ForgetReads calls: %d, want 2", first.Set["f"] == second.Set["f"], f.forgets)
	}
}

// An empty set is an error on provisioner_set_json, written in the block or taken from the environment
// variable (which the error then names): Rill's admin service does not start with one either.
func TestAnEmptySetIsAnError(t *testing.T) {
	ledger := "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
	for _, set := range []string{`{}`, "{ // nothing yet\n}"} {
		d := onlyError(t, validate(t, map[string]any{"provisioner_set_json": set}), "provisioner_set_json")
		if !strings.Contains(d.Detail(), "the provisioner set is empty") {
			t.Errorf("ValidateConfig of %q: %s: %s", set, d.Summary(), d.Detail())
		}
		_, diags := configure(t, map[string]any{"provisioner_set_json": set, "ledger_dsn": ledger})
		if d := onlyError(t, diags, "provisioner_set_json"); !strings.Contains(d.Detail(), "the provisioner set is empty") || strings.Contains(d.Detail(), "environment variable") {
			t.Errorf("Configure of %q: %s: %s", set, d.Summary(), d.Detail())
		}
		t.Setenv(envnames.ProvisionerSet, set)
		_, diags = configure(t, map[string]any{"ledger_dsn": ledger})
		if d := onlyError(t, diags, "provisioner_set_json"); !strings.Contains(d.Detail(), "the provisioner set is empty") || !strings.Contains(d.Detail(), "the environment variable "+envnames.ProvisionerSet) {
			t.Errorf("Configure of %q from the environment: %s: %s", set, d.Summary(), d.Detail())
		}
	}
}

// Every error of the set is a diagnostic of its own about provisioner_set_json, naming its provisioner
// and field, in the run that finds the first: at plan time (ValidateConfig stops the plan, so it
// reports the spec errors too) and at apply time (Configure).
func TestEverySetErrorIsADiagnostic(t *testing.T) {
	set := `{"p": {"type": "static", "spec": {"placement": "x", "runtimes": [{"host": "http://a", "slots": -1}]}}, "q": {"type": "nope"}}`
	want := `provisioner "p": spec.placement|provisioner "p": spec.runtimes[0].slots|provisioner "q": type`
	for name, diags := range map[string]func() diag.Diagnostics{
		"ValidateConfig": func() diag.Diagnostics { return validate(t, map[string]any{"provisioner_set_json": set}) },
		"Configure": func() diag.Diagnostics {
			_, d := configure(t, map[string]any{"provisioner_set_json": set, "ledger_dsn": "sqlite://" + filepath.Join(t.TempDir(), "l.db")})
			return d
		},
	} {
		var got []string
		for _, d := range diags() {
			if !isAbout(d, "provisioner_set_json") {
				t.Errorf("%s: %q is not about provisioner_set_json", name, d.Summary())
			}
			field, _, _ := strings.Cut(strings.TrimPrefix(d.Detail(), "provisioner_set_json: "), ": must")
			field, _, _ = strings.Cut(field, ": unknown")
			got = append(got, field)
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// The set's warnings are shown with its errors, so that a key given twice is seen while the errors
// are fixed: at plan time when an entry is in error (ValidateConfig stops the plan), and at apply
// time, when a spec only is in error too (ValidateConfig builds nothing then).
func TestSetWarningsAreShownWithItsErrors(t *testing.T) {
	// A warning of the set (slots given twice) and one of p's spec (slot, a field Rill ignores too):
	// both come with the errors.
	const p = `"p": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1, "slots": -1, "slot": 2}]}}`
	ledger := "sqlite://" + filepath.Join(t.TempDir(), "l.db")
	for name, tc := range map[string]struct {
		diags      func() diag.Diagnostics
		wantErrors int
	}{
		"ValidateConfig, an entry in error": {func() diag.Diagnostics {
			return validate(t, map[string]any{"provisioner_set_json": `{` + p + `, "q": {"type": "nope"}}`})
		}, 2},
		"Configure, an entry in error": {func() diag.Diagnostics {
			_, d := configure(t, map[string]any{"provisioner_set_json": `{` + p + `, "q": {"type": "nope"}}`, "ledger_dsn": ledger})
			return d
		}, 2},
		"Configure, a spec in error": {func() diag.Diagnostics {
			_, d := configure(t, map[string]any{"provisioner_set_json": `{` + p + `}`, "ledger_dsn": ledger})
			return d
		}, 1},
	} {
		diags := tc.diags()
		if diags.ErrorsCount() != tc.wantErrors {
			t.Errorf("%s: want %d errors, got %v", name, tc.wantErrors, diags)
		}
		w := diags.Warnings()
		if len(w) != 2 || w[0].Summary() != `Provisioner "p": spec.runtimes[0].slot` || !strings.Contains(w[0].Detail(), provisioner.IgnoredFieldMessage) ||
			w[1].Summary() != `Provisioner "p": spec.runtimes[0].slots` || !strings.Contains(w[1].Detail(), provisioner.DuplicateKeyMessage) {
			t.Errorf("%s: want the unknown field's and the duplicate key's warnings, got %v", name, w)
			continue
		}
		for _, d := range w {
			if !isAbout(d, "provisioner_set_json") {
				t.Errorf("%s: the warning %q is not about provisioner_set_json", name, d.Summary())
			}
		}
	}
}

// A provider block whose ledger_dsn, rill_version or default_provisioner is known only at apply (a
// ledger_dsn built from a database resource of the same configuration) still has a set that is known
// checked at plan, from the block or from the environment: rill_runtime's plan checks nothing while
// the client is unknown, so the set's errors showed only when the apply configured the provider. The
// set is built on a ledger that is never opened (the default ledger's file is not created), and the
// client stays unknown.
func TestConfigureChecksAKnownSetWhileAnotherAttributeIsUnknown(t *testing.T) {
	const bad = `{"pool":{"type":"static","spec":{"runtimes":[{"host":"localhost:9091","slots":"50"}]}}}`
	const warned = `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h", "slots": 1, "slot": 2}]}}}`
	dataHome := t.TempDir()
	t.Setenv(database.DefaultSQLitePathEnv, dataHome)
	for _, unknown := range []string{"ledger_dsn", "rill_version", "default_provisioner"} {
		for _, fromEnv := range []bool{false, true} {
			name := unknown + " unknown, the set in the block"
			if fromEnv {
				name = unknown + " unknown, the set from " + envnames.ProvisionerSet
			}
			t.Run(name, func(t *testing.T) {
				withSet := func(set string) map[string]any {
					attrs := map[string]any{unknown: tftypes.UnknownValue}
					if fromEnv {
						t.Setenv(envnames.ProvisionerSet, set)
					} else {
						attrs["provisioner_set_json"] = set
					}
					return attrs
				}
				client, diags := configure(t, withSet(bad))
				var got []string
				for _, d := range diags.Errors() {
					if !isAbout(d, "provisioner_set_json") || strings.Contains(d.Detail(), "environment variable "+envnames.ProvisionerSet) != fromEnv {
						t.Errorf("%q is not about provisioner_set_json, or names the variable wrongly: %s", d.Summary(), d.Detail())
					}
					got = append(got, strings.TrimPrefix(setErrorField(d), `provisioner "pool": `))
				}
				if want := "spec.runtimes[0].host|spec.runtimes[0].slots"; strings.Join(slices.Sorted(slices.Values(got)), "|") != want || client != nil {
					t.Errorf("got errors %q and client %+v; want errors on %s and no client", got, client, want)
				}

				client, diags = configure(t, withSet(warned))
				if diags.HasError() || len(diags.Warnings()) != 1 || diags.Warnings()[0].Summary() != `Provisioner "pool": spec.runtimes[0].slot` {
					t.Errorf("want the set's warning alone, got %v", diags)
				}
				if client == nil || !client.Unknown || client.Set != nil {
					t.Errorf("want the unknown client, got %+v", client)
				}
			})
		}
	}
	// What Configure checks of a known set it checks with an unknown ledger too.
	attrs := map[string]any{"ledger_dsn": tftypes.UnknownValue, "provisioner_set_json": warned, "default_provisioner": "nope"}
	_, diags := configure(t, attrs)
	onlyError(t, diags, "default_provisioner")
	_, diags = configure(t, map[string]any{"ledger_dsn": tftypes.UnknownValue, "provisioner_set_json": `{}`})
	onlyError(t, diags, "provisioner_set_json")

	if entries, err := os.ReadDir(dataHome); err != nil || len(entries) != 0 {
		t.Fatalf("the plan created %v in the default ledger's data home (%v)", entries, err)
	}
}

// While ledger_dsn (or rill_version, default_provisioner) is unknown at plan, the unknown client says
// which entries of the known set plan a runtime's host themselves (provisioner.ConfigPlanner: the
// kubernetes provisioner), so that rill_runtime leaves those entries' host to the apply and keeps a
// static pool's; a set not known at all says none (nil: any entry may).
func TestConfigureNamesTheConfigPlannersOfAKnownSetWhileTheLedgerIsUnknown(t *testing.T) {
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h", "slots": 1}]}},` +
		` "k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": "` + filepath.Join(t.TempDir(), "absent") + `"}}}`
	client, diags := configure(t, map[string]any{"ledger_dsn": tftypes.UnknownValue, "provisioner_set_json": set})
	if diags.HasError() || client == nil || !client.Unknown {
		t.Fatalf("want the unknown client, got %+v, %v", client, diags)
	}
	if want := map[string]bool{"k8s": true}; !maps.Equal(client.ConfigPlanners, want) {
		t.Errorf("ConfigPlanners %v, want %v", client.ConfigPlanners, want)
	}
	client, diags = configure(t, map[string]any{"provisioner_set_json": tftypes.UnknownValue})
	if diags.HasError() || client == nil || !client.Unknown || client.ConfigPlanners != nil {
		t.Errorf("an unknown set: want the unknown client without ConfigPlanners, got %+v, %v", client, diags)
	}
}

// Only a static pool keeps anything in the ledger, so the default ledger's location is looked up when
// the ledger is first opened: a set of kubernetes or clickhouse-static provisioners configures on a
// machine where there is none (a container run as a user ID without a home), and a static pool's use
// fails saying to set ledger_dsn. Before, every such set failed to configure, with an error about
// provisioner_set_json.
func TestTheDefaultLedgerIsLocatedOnlyWhenAPoolUsesIt(t *testing.T) {
	const noHome = "default ledger path: neither $XDG_DATA_HOME nor $HOME is set to an absolute path, and the current user has no home directory"
	located := 0
	locate := defaultLedgerDSN
	defaultLedgerDSN = func() (string, error) { located++; return "", errors.New(noHome) }
	t.Cleanup(func() { defaultLedgerDSN = locate })

	for _, set := range []string{
		`{"k8s": {"type": "kubernetes", "spec": {"host": "https://*.rt.test"}}}`,
		`{"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin@ch.test:9000"}}}`,
	} {
		client, diags := configure(t, map[string]any{"provisioner_set_json": set})
		if diags.HasError() || client == nil || len(client.Set) != 1 {
			t.Errorf("%s: %v", set, diags)
		}
	}
	client, diags := configure(t, map[string]any{"provisioner_set_json": `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h", "slots": 1}]}}}`})
	if diags.HasError() || client == nil || located != 0 {
		t.Fatalf("configure of a static pool: %v (the default ledger located %d times)", diags, located)
	}
	_, err := client.Set["pool"].(provisioner.CapacityReporter).Capacity(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ledger_dsn") || !strings.Contains(err.Error(), envnames.LedgerDSN) ||
		!strings.Contains(err.Error(), noHome) || strings.Contains(err.Error(), "provisioner_set_json") {
		t.Fatalf("the pool's read: %v; want an error that names ledger_dsn and %s and says why there is no default", err, envnames.LedgerDSN)
	}
	// The machine's, not the configuration's: the plan's capacity warning says to set what it names.
	if !errors.Is(err, provisioner.ErrFromEnvironment) {
		t.Errorf("the pool's read: %v is not marked provisioner.ErrFromEnvironment", err)
	}
}

// `terraform validate` reports a set's errors when one entry is in error (ValidateConfig builds the
// others, see setErrorsOfAPlanThatStops), but not those of what only the apply's environment may hold:
// a variable named by dsn_env, a template file, the home directory a "~" stands for. Their errors
// still come from Configure, which builds the set where it runs.
func TestValidateDoesNotDependOnTheEnvironment(t *testing.T) {
	t.Setenv("HOME", "")
	const (
		ch   = `"ch": {"type": "clickhouse-static", "spec": {"dsn_env": "CH_ADMIN_DSN_ONLY_SET_AT_APPLY", "write_dsn_env": "CH_WRITE_DSN_BAD_HERE"}}`
		k8s  = `"k8s": {"type": "kubernetes", "spec": {"host": "https://*.rt.test", "kubeconfig_path": "~/.kube/config", "template_paths": {"pvc": "/only/on/the/apply/runner/pvc.yaml"}}}`
		pool = `"pool": {"type": "%s", "spec": {"runtimes": [{"host": "http://h", "slots": 1}]}}`
	)
	t.Setenv("CH_WRITE_DSN_BAD_HERE", "mysql://h")
	set := `{` + ch + `, ` + k8s + `, ` + fmt.Sprintf(pool, "statc") + `}`
	d := onlyError(t, validate(t, map[string]any{"provisioner_set_json": set}), "provisioner_set_json")
	if !strings.Contains(d.Detail(), `provisioner "pool": type: unknown provisioner type "statc"`) {
		t.Errorf("want the typo's error, got %s", d.Detail())
	}
	// An error of the spec's own text is still reported with the typo's.
	withClusterError := strings.Replace(set, `"dsn_env"`, `"cluster": " ", "dsn_env"`, 1)
	if diags := validate(t, map[string]any{"provisioner_set_json": withClusterError}); diags.ErrorsCount() != 2 ||
		!strings.Contains(diags.Errors()[0].Detail(), `provisioner "ch": spec.cluster`) {
		t.Errorf("want ch's cluster error and the typo's, got %v", diags)
	}

	_, diags := configure(t, map[string]any{"provisioner_set_json": `{` + ch + `, ` + k8s + `, ` + fmt.Sprintf(pool, "static") + `}`, "ledger_dsn": tftypes.UnknownValue})
	var got []string
	for _, d := range diags.Errors() {
		got = append(got, setErrorField(d))
	}
	if want := `provisioner "ch": spec.dsn_env|provisioner "ch": spec.write_dsn_env|provisioner "k8s": spec.kubeconfig_path|provisioner "k8s": spec.template_paths.pvc`; strings.Join(got, "|") != want {
		t.Errorf("Configure: got errors %q, want %q", got, want)
	}
}

// setErrorField is the provisioner and field a set's error diagnostic names: `provisioner "p": spec.x`.
func setErrorField(d diag.Diagnostic) string {
	parts := strings.SplitN(strings.TrimPrefix(d.Detail(), "provisioner_set_json: "), ": ", 3)
	return strings.Join(parts[:min(2, len(parts))], ": ")
}
