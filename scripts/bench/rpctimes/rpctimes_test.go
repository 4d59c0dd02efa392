package main

import (
	"strings"
	"testing"
)

// The timings are per RPC type, from each request's "Received request" to its "Served request" line,
// matched by tf_req_id whatever lies between; a request that was not received in the log, and lines
// without a request ID, RPC or timestamp, count nowhere; every line with an @module counts for it.
func TestRunTimesEachRPCFromReceivedToServed(t *testing.T) {
	const log = `2026-11-29T18:04:31.000Z [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=a tf_rpc=ReadResource
2026-11-29T18:04:31.010Z [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=b tf_rpc=ReadResource
2026-11-29T18:04:31.020Z [DEBUG] provider.terraform-provider-rill: reading: @module=rill tf_req_id=a
2026-11-29T18:04:31.030Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=b tf_rpc=ReadResource
2026-11-29T18:04:31.040Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=a tf_rpc=ReadResource
2026-11-29T18:04:32.000Z [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=c tf_rpc=ReadResource
2026-11-29T18:04:32.100Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=c tf_rpc=ReadResource
2026-11-29T18:04:33.000Z [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=d tf_rpc=PlanResourceChange
2026-11-29T18:04:33.005Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=d tf_rpc=PlanResourceChange
2026-11-29T18:04:33.006Z [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=e tf_rpc=PlanResourceChange
2026-11-29T18:04:33.016Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=e tf_rpc=PlanResourceChange
2026-11-29T18:04:34.000Z [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=z tf_rpc=ApplyResourceChange
not a timestamp [TRACE] provider.terraform-provider-rill: Received request: tf_req_id=y tf_rpc=ApplyResourceChange
`
	wantTimes(t, log, `rpc                         calls     sum_ms    p50_ms    max_ms    span_ms
PlanResourceChange              2         15       7.5        10         16
ReadResource                    3        160      40.0       100       1100

provider log lines by @module: rill=1 sdk.proto=11
`)
}

// Terraform logs through hclog, whose timestamps are in the local time zone, with its offset
// ("2006-01-02T15:04:05.000Z0700": "Z" only in UTC). A trace taken on a machine outside UTC is timed
// as one in UTC is (the awk this replaced read the clock at fixed columns).
func TestRunReadsTimestampsOutsideUTC(t *testing.T) {
	const log = `2026-11-29T19:04:31.000+0100 [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=a tf_rpc=ReadResource
2026-11-29T19:04:31.040+0100 [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=a tf_rpc=ReadResource
2026-11-29T13:04:32.000-0500 [TRACE] provider.terraform-provider-rill: Received request: @module=sdk.proto tf_req_id=b tf_rpc=PlanResourceChange
2026-11-29T13:04:32.005-0500 [TRACE] provider.terraform-provider-rill: Served request: @module=sdk.proto tf_req_id=b tf_rpc=PlanResourceChange
`
	wantTimes(t, log, `rpc                         calls     sum_ms    p50_ms    max_ms    span_ms
PlanResourceChange              1          5       5.0         5          5
ReadResource                    1         40      40.0        40         40

provider log lines by @module: sdk.proto=4
`)
}

// wantTimes runs the tool on a log and compares its whole output.
func wantTimes(t *testing.T, log, want string) {
	t.Helper()
	var out strings.Builder
	if err := run(strings.NewReader(log), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
