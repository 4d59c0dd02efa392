package resources

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// checkOnly is a provisioner of which rill_provisioners asks only the Check.
type checkOnly struct {
	provisioner.Provisioner
	check func(context.Context) error
}

func (c checkOnly) Type() string                         { return "fake" }
func (checkOnly) Supports(provisioner.ResourceType) bool { return false }
func (c checkOnly) Check(ctx context.Context) error      { return c.check(ctx) }

// A check that waits out the read timeout (a ClickHouse server that accepts and never answers) is
// that provisioner's check_error, with the timeout's advice: it neither fails the read, nor leaves a
// healthy static pool's ledger no time to be read (which failed the read, blaming the pool), nor
// lends its timeout to another check's failure, which came at once.
func TestProvisionersCheckThatWaitsOutTheReadTimeoutFailsOnlyItself(t *testing.T) {
	ctx := context.Background()
	client := &Client{Set: map[string]provisioner.Provisioner{
		"pool":    onePoolOn(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db")),
		"stuck":   checkOnly{check: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
		"refused": checkOnly{check: func(context.Context) error { return errors.New("connection refused") }},
	}, Default: "pool"}
	ds := NewProvisionersDataSource()
	ds.(datasource.DataSourceWithConfigure).Configure(ctx, datasource.ConfigureRequest{ProviderData: client}, &datasource.ConfigureResponse{})
	resp := readDataSource(t, ds, "1s", map[string]tftypes.Value{"check": tftypes.NewValue(tftypes.Bool, true)})
	if resp.Diagnostics.HasError() {
		t.Fatalf("a check that timed out failed the read: %v", resp.Diagnostics)
	}
	var out provisionersModel
	if d := resp.State.Get(ctx, &out); d.HasError() {
		t.Fatal(d)
	}
	got := map[string]provisionerModel{}
	for _, m := range out.Provisioners {
		got[m.Name.ValueString()] = m
	}
	const advice = "waited 1s, its read timeout"
	if e := got["stuck"].CheckError.ValueString(); !strings.Contains(e, advice) {
		t.Errorf("stuck: check_error %q lacks %q", e, advice)
	}
	if e := got["refused"].CheckError.ValueString(); !strings.Contains(e, "connection refused") || strings.Contains(e, advice) {
		t.Errorf("refused: check_error %q: want its own error, without the read timeout's advice", e)
	}
	if p := got["pool"]; !p.CheckError.IsNull() || p.Slots.ValueInt64() != 1 {
		t.Errorf("pool: check_error %v, slots %v: want no error and its 1 slot", p.CheckError, p.Slots)
	}
}
