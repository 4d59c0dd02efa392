package main

import "math"

// Issue 11's targets: their one home (scripts/bench.sh prints them through this command).
const (
	// targetVsData: rill_runtime's median apply wall time at most this many times terraform_data's.
	targetVsData = 1.3
	// targetVsSchemaNoop: rill_runtime (SDK trace logging off) against a do-nothing provider with its
	// schema (noop_runtime).
	targetVsSchemaNoop = 1.25
	// targetVsPlainNoop: rill_runtime (SDK trace logging off) against the plain do-nothing provider
	// (noop_item).
	targetVsPlainNoop = 1.5
)

// rssTargetMB: the provider's peak RSS target (MB) by count of runtimes; counts without one are absent.
var rssTargetMB = map[int]float64{200: 60, 1000: 120}

// meets reports whether figure v is within target; a missing figure meets nothing.
func meets(v, target float64) bool { return !math.IsNaN(v) && v <= target }

// verdict is meets as the prose says it.
func verdict(ok bool) string {
	if ok {
		return "meets"
	}
	return "misses"
}

// mark is meets as a table cell's suffix.
func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}
