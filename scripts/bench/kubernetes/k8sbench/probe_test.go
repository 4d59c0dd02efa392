package main

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The API server's latency of the probe's requests comes from their audit events (ResponseComplete
// only, the probe's user agent only), pooled per window label; the probe's own output gives the
// client's, without failed requests.
func TestLatencyStatsPoolTheProbesRequestsPerWindowLabel(t *testing.T) {
	audit := strings.Join([]string{
		`{"stage":"ResponseComplete","userAgent":"k8sbench-probe","requestReceivedTimestamp":"2026-11-30T10:00:00.000000Z","stageTimestamp":"2026-11-30T10:00:00.001000Z"}`,
		`{"stage":"ResponseStarted","userAgent":"k8sbench-probe","requestReceivedTimestamp":"2026-11-30T10:00:00.500000Z","stageTimestamp":"2026-11-30T10:00:00.900000Z"}`,
		`{"stage":"ResponseComplete","userAgent":"terraform-provider-rill","requestReceivedTimestamp":"2026-11-30T10:00:00.600000Z","stageTimestamp":"2026-11-30T10:00:00.900000Z"}`,
		`{"stage":"ResponseComplete","userAgent":"k8sbench-probe","requestReceivedTimestamp":"2026-11-30T10:00:01.000000Z","stageTimestamp":"2026-11-30T10:00:01.002000Z"}`,
		`{"stage":"ResponseComplete","userAgent":"k8sbench-probe","requestReceivedTimestamp":"2026-11-30T10:00:02.000000Z","stageTimestamp":"2026-11-30T10:00:02.004000Z"}`,
		`{"stage":"ResponseComplete","userAgent":"k8sbench-probe","requestReceivedTimestamp":"2026-11-30T10:00:03.000000Z","stageTimestamp":"2026-11-30T10:00:03.008000Z"}`,
		`not json`,
	}, "\n")
	samples, err := serverLatencies(strings.NewReader(audit), probeUserAgent)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, "2026-11-30T10:00:"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	var windows []window
	for _, s := range []string{
		"idle:" + itoa(at("00.000")) + ":" + itoa(at("01.000")), // 1 and 2 ms
		"busy:" + itoa(at("02.000")) + ":" + itoa(at("02.500")), // 4 ms
		"busy:" + itoa(at("02.900")) + ":" + itoa(at("03.000")), // 8 ms, pooled with the one before
	} {
		w, err := parseWindow(s)
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	got := latencyStats(samples, windows)
	want := []string{"idle n=2 p50_ms=1.00 p95_ms=2.00", "busy n=2 p50_ms=4.00 p95_ms=8.00"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("server: %q, want %q", got, want)
	}

	probe := itoa(at("00.000")) + " 1500 200\n" + itoa(at("00.500")) + " 900000 0\n" + itoa(at("01.000")) + " 2500 200\n"
	client, err := clientLatencies(strings.NewReader(probe))
	if err != nil {
		t.Fatal(err)
	}
	if got := latencyStats(client, windows[:1]); !reflect.DeepEqual(got, []string{"idle n=2 p50_ms=1.50 p95_ms=2.50"}) {
		t.Fatalf("client: %q", got)
	}
	for _, bad := range []string{"idle:1", ":1:2", "idle:2:1", "idle:x:2"} {
		if _, err := parseWindow(bad); err == nil {
			t.Errorf("window %q accepted", bad)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
