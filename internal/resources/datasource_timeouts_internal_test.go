package resources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Both data sources document their read timeout and its default, the resources' read default.
func TestDataSourceTimeoutsDocumentTheirDefault(t *testing.T) {
	for name, ds := range map[string]datasource.DataSource{"rill_provisioners": NewProvisionersDataSource(), "rill_allocations": NewAllocationsDataSource()} {
		var resp datasource.SchemaResponse
		ds.Schema(context.Background(), datasource.SchemaRequest{}, &resp)
		b, ok := resp.Schema.Blocks["timeouts"].(schema.SingleNestedBlock)
		if !ok {
			t.Fatalf("%s: timeouts is a %T", name, resp.Schema.Blocks["timeouts"])
		}
		if !strings.Contains(b.MarkdownDescription, "read `5m`") {
			t.Errorf("%s: timeouts block description %q lacks the default", name, b.MarkdownDescription)
		}
		a, ok := b.Attributes["read"].(schema.StringAttribute)
		if !ok || !strings.Contains(a.MarkdownDescription, "default `5m`") {
			t.Errorf("%s: timeouts.read description %q lacks the default", name, a.MarkdownDescription)
		}
		// A zero timeout would end every read before it began; what is no duration gets the provider's
		// message, not the timeouts package's (which offered "-1.5h" as an example).
		for _, value := range []string{"0s", "abc"} {
			var refused diag.Diagnostics
			for _, v := range a.Validators {
				vr := &validator.StringResponse{}
				v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("timeouts").AtName("read"), ConfigValue: types.StringValue(value)}, vr)
				refused.Append(vr.Diagnostics...)
			}
			if len(refused) != 1 || !strings.Contains(refused[0].Detail(), `timeouts.read must be a positive Go duration, such as "30s" or "10m", got "`+value+`"`) {
				t.Errorf("%s: timeouts.read = %q: %v, want one error from the provider", name, value, refused)
			}
		}
	}
}

// A data source's read of a ledger that another session holds locked (a stuck apply on another
// runner) ends at its read timeout, with an error that says what it waited for, for how long, and
// which setting bounds it: a plan does not hang.
func TestDataSourcesStopAtTheirReadTimeout(t *testing.T) {
	dsn := pgtest.Shared(t)
	ctx := context.Background()
	client := &Client{Set: map[string]provisioner.Provisioner{"pool": onePoolOn(t, dsn)}, Default: "pool"}
	pgtest.LockTables(t, dsn, "allocations")

	for name, ds := range map[string]datasource.DataSource{"rill_provisioners": NewProvisionersDataSource(), "rill_allocations": NewAllocationsDataSource()} {
		t.Run(name, func(t *testing.T) {
			ds.(datasource.DataSourceWithConfigure).Configure(ctx, datasource.ConfigureRequest{ProviderData: client}, &datasource.ConfigureResponse{})
			diags := readWithTimeout(t, ds, "1s")
			if !diags.HasError() {
				t.Fatalf("the read of a locked ledger succeeded: %v", diags)
			}
			detail := diags.Errors()[0].Detail()
			t.Log(detail)
			for _, want := range []string{
				name + ` waited 1s, its read timeout, for provisioner "pool" (its ledger, cluster or server) to answer`,
				"timeouts { read",
			} {
				if !strings.Contains(detail, want) {
					t.Errorf("the error %q does not say %q", detail, want)
				}
			}
			// The ledger's own part, whose wait is measured (to 0.1 s: 1.1s on a loaded machine).
			if ledger := regexp.MustCompile(`waited 1(\.\d)?s for the ledger to answer, until the operation's deadline`); !ledger.MatchString(detail) {
				t.Errorf("the error %q does not match %q", detail, ledger)
			}
		})
	}
}

// readWithTimeout runs ds's Read with `timeouts { read = timeout }` and returns its diagnostics.
func readWithTimeout(t *testing.T, ds datasource.DataSource, timeout string) diag.Diagnostics {
	t.Helper()
	return readDataSource(t, ds, timeout, nil).Diagnostics
}

// readDataSource runs ds's Read with `timeouts { read = timeout }` and the attributes set (the others
// null) and returns its response. A Read that has not returned within a minute fails the test: it did
// not honour its timeout.
func readDataSource(t *testing.T, ds datasource.DataSource, timeout string, set map[string]tftypes.Value) *datasource.ReadResponse {
	t.Helper()
	ctx := context.Background()
	var sresp datasource.SchemaResponse
	ds.Schema(ctx, datasource.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		attrs[name] = v
	}
	tt := typ.AttributeTypes["timeouts"]
	attrs["timeouts"] = tftypes.NewValue(tt, map[string]tftypes.Value{"read": tftypes.NewValue(tftypes.String, timeout)})
	req := datasource.ReadRequest{Config: tfsdk.Config{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, attrs)}}
	resp := &datasource.ReadResponse{State: tfsdk.State{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, nil)}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ds.Read(ctx, req, resp)
	}()
	select {
	case <-done:
		return resp
	case <-time.After(time.Minute):
		t.Fatalf("Read has not returned a minute after its %s read timeout", timeout)
		return nil
	}
}

// Both data sources warn, once per ledger, that a ledger that does not exist reads as empty, naming it
// and ledger_dsn: on a runner whose default ledger is not the pool's, an empty list read as "nothing
// allocated", and a recovery that compares it with its states found no orphan with nothing saying why.
// An empty ledger that exists gets no warning.
func TestDataSourcesWarnThatAMissingLedgerReadsAsEmpty(t *testing.T) {
	ctx := context.Background()
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}]}},
	         "other": {"type": "static", "spec": {"runtimes": [{"host": "http://h2.test:9091", "slots": 1}]}}}`
	missingDSN := "sqlite://" + filepath.Join(t.TempDir(), "new-runner", "ledger.db")
	missingDB, err := database.OpenReadOnly(ctx, missingDSN, nil)
	if err != nil {
		t.Fatal(err)
	}
	for ledger, db := range map[string]database.DB{"missing": missingDB, "empty": ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))} {
		ps, err := provisioner.NewSet(set, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		client := &Client{Set: ps, Default: "pool"}
		for name, ds := range map[string]datasource.DataSource{"rill_provisioners": NewProvisionersDataSource(), "rill_allocations": NewAllocationsDataSource()} {
			ds.(datasource.DataSourceWithConfigure).Configure(ctx, datasource.ConfigureRequest{ProviderData: client}, &datasource.ConfigureResponse{})
			diags := readWithTimeout(t, ds, "1m")
			if diags.HasError() {
				t.Fatalf("%s on the %s ledger: %v", name, ledger, diags)
			}
			warnings := diags.Warnings()
			if ledger == "empty" {
				if len(warnings) != 0 {
					t.Errorf("%s on an empty ledger that exists warns: %v", name, warnings)
				}
				continue
			}
			if len(warnings) != 1 || warnings[0].Summary() != "Ledger does not exist" {
				t.Fatalf("%s on a missing ledger: want one Ledger does not exist warning (two pools, one ledger), got %v", name, warnings)
			}
			for _, want := range []string{missingDSN, "does not exist", name, "reads as empty", "ledger_dsn"} {
				if !strings.Contains(warnings[0].Detail(), want) {
					t.Errorf("%s: the warning %q does not say %q", name, warnings[0].Detail(), want)
				}
			}
		}
	}
	if _, err := os.Stat(strings.TrimPrefix(filepath.Dir(missingDSN), "sqlite://")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading the missing ledger created its directory: %v", err)
	}
}
