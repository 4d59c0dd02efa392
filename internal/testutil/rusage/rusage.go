// Package rusage reads the CPU time this process has used, for benchmarks that report CPU per
// operation beside the wall time testing.B measures (the machine's other load inflates wall time,
// not CPU time).
package rusage

import (
	"testing"
	"time"
)

// ProcessCPU is the CPU time (user + system) this process has used so far; tb fails when it cannot
// be read.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	cpu, err := processCPU()
	if err != nil {
		tb.Fatalf("reading this process's CPU time: %v", err)
	}
	return cpu
}
