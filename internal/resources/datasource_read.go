package resources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// dataSourceRead is a data source's Read in progress: its context, bounded by the read timeout.
type dataSourceRead struct {
	ctx      context.Context
	cancel   context.CancelFunc
	typeName string // "rill_provisioners"
	timeout  time.Duration
	timeouts timeouts.Value  // as configured, for the state
	warned   map[string]bool // warnIfStoreMissing's messages so far
}

// startDataSourceRead bounds a data source's Read by its `timeouts.read` (default defaultReadTimeout).
// It returns nil (with diagnostics) when the block cannot be read; else the caller must defer
// r.cancel().
func startDataSourceRead(ctx context.Context, typeName string, req datasource.ReadRequest, diags *diag.Diagnostics) *dataSourceRead {
	var t timeouts.Value
	diags.Append(req.Config.GetAttribute(ctx, path.Root("timeouts"), &t)...)
	if diags.HasError() {
		return nil
	}
	timeout, d := t.Read(ctx, defaultReadTimeout)
	diags.Append(d...)
	if diags.HasError() {
		return nil
	}
	bounded, cancel := context.WithTimeout(ctx, timeout)
	return &dataSourceRead{ctx: bounded, cancel: cancel, typeName: typeName, timeout: timeout, timeouts: t}
}

// failedDetail is the detail of a failed call to provisioner name. When the read timeout ended the
// call, it says what the read waited for, how long, and which setting bounds it. (The summary stays a
// literal at each AddError, where the troubleshooting guide's test finds it.)
func (r *dataSourceRead) failedDetail(name string, err error) string {
	return fmt.Sprintf("Provisioner %q: %v", name, err) + r.timedOut(name)
}

// timedOut is failedDetail's account of the read timeout, when it ended the call; else "".
func (r *dataSourceRead) timedOut(name string) string {
	if !errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return ""
	}
	return fmt.Sprintf("\n\n%s waited %s, its read timeout, for provisioner %q (its ledger, cluster or server) to answer, and gave up. "+
		"Check that the ledger, cluster or server is reachable and not held by another operation (a stuck apply holding a lock), "+
		"or raise the timeout with `timeouts { read = \"...\" }` (default `%s`).",
		r.typeName, shortDuration(r.timeout), name, shortDuration(defaultReadTimeout))
}

// warnIfStoreMissing warns when provisioner name's empty answer (what is empty: "lists nothing") comes
// from a store that does not exist (a static pool's ledger): the default SQLite ledger is per machine and
// user, so on a runner that never applied it reads as an empty pool, and a recovery that compares the
// list with its states found no orphan with nothing saying why. One warning per store.
func (r *dataSourceRead) warnIfStoreMissing(p provisioner.Provisioner, name, what string, diags *diag.Diagnostics) {
	sc, ok := p.(provisioner.StoreChecker)
	if !ok {
		return
	}
	missing, err := sc.MissingStore(r.ctx)
	if err != nil || missing == "" || r.warned[missing] {
		return // an error here is the read's to report, which succeeded
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[missing] = true
	diags.AddWarning("Ledger does not exist",
		fmt.Sprintf("Provisioner %q: %s. %s %s for it: a ledger that does not exist reads as empty (and is not created). "+
			"If the pool's allocations are recorded elsewhere (the default SQLite ledger is per machine and user: another "+
			"runner's, or a shared PostgreSQL ledger), set ledger_dsn (or "+envnames.LedgerDSN+") to that ledger.", name, missing, r.typeName, what))
}
