// Package gctune sets the garbage collector of a provider process: main.go and the profiling build
// (scripts/bench/profprov) call Apply, so that what the benchmarks measure is what users run.
//
// A provider process lives for one Terraform command and allocates mostly short-lived RPC garbage;
// what is live at any time is the requests in flight: 2 to 5 MB during a refresh of 200 or 1,000
// runtimes (GODEBUG=gctrace=1), once internal/pluginserver stopped the framework from keeping every
// request (before, the live heap grew by about 11.5 KB per RPC, to 70 MB at 1,000 runtimes).
// Measured in BENCHMARKS.md ("Memory" and "GOGC=300"):
//   - a GOGC above Go's default 100 takes CPU off (about a third with the old leak; 10-15% of the
//     provider's CPU at 200 runtimes since, "Requests the framework kept"), but lets the heap grow to
//     1+GOGC/100 times what is live;
//   - with a live heap this small, GOGC=300 costs the refresh 1% more CPU than 400 at 200 runtimes
//     and 6% at 1,000 (the applies: within their noise), for 2.7-4.8 MB less peak RSS at 200
//     runtimes and 1.4-3.9 MB at 1,000; GOGC=200 costs the refresh 10% at 200 and 30% at 1,000;
//   - a soft memory limit the live heap comes near makes the collector run almost continuously (with
//     the old leak: 18 s of CPU instead of 4.7 s at 1,000 runtimes with a fixed 48 MiB limit);
//   - with the small live heap, a 32 MiB limit keeps the provider's peak RSS under 60 MB at 200
//     runtimes (the binary's own pages being about 32 MB of it, "GOGC=300") for about 10% more of the
//     provider's CPU than 48 MiB, still well below GOGC=100's.
//
// So Apply sets GOGC=300 with a 32 MiB limit, and after every collection raises the limit to twice
// the live heap plus the runtime's own overhead when that is more: the heap never grows past 32 MiB
// while less is live, and never collects more often than Go's default would when more is.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

const (
	// GCPercent is used when the user sets no GOGC.
	GCPercent = 300

	// MemoryLimit is the soft limit on the Go runtime's memory used when the user sets no GOMEMLIMIT,
	// as long as twice the live heap plus limitOverhead is below it.
	MemoryLimit = 32 << 20

	// limitOverhead is what the limit allows beyond twice the live heap: goroutine stacks, the
	// runtime's own structures and the heap's fragmentation (about 10 MB in a provider process).
	limitOverhead = 16 << 20
)

// Apply sets GCPercent and the adaptive memory limit, each unless the user set its environment
// variable (GOGC, GOMEMLIMIT), which the Go runtime has applied already.
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
		if !tuning.Swap(true) {
			armAfterGC()
		}
	}
}

// limitFor is the memory limit for a live heap of live bytes.
func limitFor(live uint64) int64 {
	return max(MemoryLimit, 2*int64(live)+limitOverhead)
}

// sentinel is garbage whose finalizer runs after the collection that found it unreachable: the
// usual way to run code after every GC cycle.
type sentinel struct{ _ [16]byte } // not zero-sized: zero-sized allocations share one address

// tuning is whether the limit follows the live heap (tests switch it off again).
var tuning atomic.Bool

func armAfterGC() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if !tuning.Load() {
			return
		}
		retune()
		armAfterGC()
	})
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// retune sets the memory limit for the live heap the last collection marked. Only the finalizer
// goroutine calls it, one call at a time.
func retune() {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetMemoryLimit(limitFor(liveSample[0].Value.Uint64()))
}
