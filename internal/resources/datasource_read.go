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
)

// dataSourceRead is a data source's Read in progress: its context, bounded by the read timeout.
type dataSourceRead struct {
	ctx      context.Context
	cancel   context.CancelFunc
	typeName string // "rill_provisioners"
	timeout  time.Duration
	timeouts timeouts.Value // as configured, for the state
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
	detail := fmt.Sprintf("Provisioner %q: %v", name, err)
	if errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		detail += fmt.Sprintf("\n\n%s waited %s, its read timeout, for provisioner %q (its ledger or cluster) to answer, and gave up. "+
			"Check that the ledger or cluster is reachable and not held by another operation (a stuck apply holding a lock), "+
			"or raise the timeout with `timeouts { read = \"...\" }` (default `%s`).",
			r.typeName, shortDuration(r.timeout), name, shortDuration(defaultReadTimeout))
	}
	return detail
}
