// Command rpctimes prints the per-RPC timings of a provider from a Terraform TF_LOG=trace log, for
// scripts/bench.sh --profile. For each RPC type (tf_rpc) it prints the number of calls, the sum, the
// median and the maximum of the time between the provider's "Received request" and "Served request"
// lines of one request (tf_req_id; ms resolution, from the log's timestamps), and the span from the
// first call's start to the last call's end. It also counts the provider's log lines by @module, the
// volume Terraform has to parse from the plugin's stderr.
//
//	go run ./scripts/bench/rpctimes trace.log
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider.
package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rpctimes TRACE_LOG")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "rpctimes: %v\n", err)
		os.Exit(1)
	}
	defer func() { _ = f.Close() }()
	if err := run(f, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "rpctimes: %v\n", err)
		os.Exit(1)
	}
}

var (
	moduleField = regexp.MustCompile(`@module=([A-Za-z0-9_.]+)`)
	requestID   = regexp.MustCompile(`tf_req_id=([^ ]+)`)
	rpcName     = regexp.MustCompile(`tf_rpc=([A-Za-z]+)`)
)

// rpcStats are the calls of one RPC type.
type rpcStats struct {
	durations   []int64 // ms, in the order the calls ended
	first, last int64   // the first call's start and the last call's end, ms since midnight
}

// run reads a trace log from in and writes the table and the module counts to out.
func run(in io.Reader, out io.Writer) error {
	modules := map[string]int{}
	started := map[string]int64{} // request ID -> its "Received request" time
	rpcs := map[string]*rpcStats{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024) // a trace line can hold a whole plan
	for sc.Scan() {
		line := sc.Text()
		if m := moduleField.FindStringSubmatch(line); m != nil {
			modules[m[1]]++
		}
		received := strings.Contains(line, "Received request:")
		if !received && !strings.Contains(line, "Served request:") {
			continue
		}
		id, rpc := requestID.FindStringSubmatch(line), rpcName.FindStringSubmatch(line)
		ts, _, _ := strings.Cut(line, " ")
		t, ok := msSinceMidnight(ts)
		if id == nil || rpc == nil || !ok {
			continue
		}
		if received {
			started[id[1]] = t
			continue
		}
		start, ok := started[id[1]]
		if !ok {
			continue
		}
		delete(started, id[1])
		s := rpcs[rpc[1]]
		if s == nil {
			s = &rpcStats{first: start, last: t}
			rpcs[rpc[1]] = s
		}
		s.durations = append(s.durations, t-start)
		s.first, s.last = min(s.first, start), max(s.last, t)
	}
	if err := sc.Err(); err != nil {
		return err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %6s %10s %9s %9s %10s\n", "rpc", "calls", "sum_ms", "p50_ms", "max_ms", "span_ms")
	for _, name := range slices.Sorted(maps.Keys(rpcs)) {
		s := rpcs[name]
		d := slices.Sorted(slices.Values(s.durations))
		var sum int64
		for _, v := range d {
			sum += v
		}
		fmt.Fprintf(&b, "%-26s %6d %10d %9.1f %9d %10d\n", name, len(d), sum, median(d), d[len(d)-1], s.last-s.first)
	}
	b.WriteString("\nprovider log lines by @module:")
	for _, m := range slices.Sorted(maps.Keys(modules)) {
		fmt.Fprintf(&b, " %s=%d", m, modules[m])
	}
	b.WriteString("\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// msSinceMidnight reads a log timestamp such as 2026-11-29T18:04:31.386Z as milliseconds since its
// midnight (a run does not cross midnight in practice). Terraform logs through hclog, in the local
// time zone: the clock ends with "Z" in UTC only, elsewhere with the offset (+0100, -0500), which is
// the same for every line of a run.
func msSinceMidnight(ts string) (int64, bool) {
	_, clock, ok := strings.Cut(ts, "T")
	if i := strings.IndexAny(clock, "Z+-"); i >= 0 {
		clock = clock[:i]
	}
	h, rest, ok1 := strings.Cut(clock, ":")
	m, s, ok2 := strings.Cut(rest, ":")
	hours, err1 := strconv.ParseInt(h, 10, 64)
	minutes, err2 := strconv.ParseInt(m, 10, 64)
	seconds, err3 := strconv.ParseFloat(s, 64)
	if !ok || !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil {
		return 0, false
	}
	return (hours*60+minutes)*60*1000 + int64(seconds*1000+0.5), true
}

// median of sorted, which is not empty.
func median(sorted []int64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return float64(sorted[n/2])
	}
	return float64(sorted[n/2-1]+sorted[n/2]) / 2
}
