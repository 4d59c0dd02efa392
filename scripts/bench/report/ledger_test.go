package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// ledger.md is what scripts/bench.sh's awk printed (before this command replaced it) for ledger.txt,
// a real run's output (scripts/bench.sh --no-apply --ledger-count 2). ledger-skipped.txt is it without
// PostgreSQL, skipped the way pgtest skips; there the awk printed no reason (it looked for a message
// pgtest no longer prints), ledger-skipped.md gives pgtest's.
func TestLedgerMatchesTheShellItReplaced(t *testing.T) {
	for _, tc := range []struct {
		in     string
		count  int
		golden string
	}{
		{"ledger.txt", 2, "ledger.md"},
		{"ledger-skipped.txt", 3, "ledger-skipped.md"},
	} {
		matchesGolden(t, &ledger{file: filepath.Join("testdata", tc.in), count: tc.count}, tc.golden)
	}
}

// A case is matched whatever the -GOMAXPROCS suffix, not by prefix: writers=8 is not writers=8,handles=8.
func TestAllocsPerSecond(t *testing.T) {
	lines := strings.Split(`BenchmarkAllocate/sqlite/writers=8-2   300   2325455 ns/op   430.0 allocs/s
BenchmarkAllocate/sqlite/writers=8-16   300   2325455 ns/op   440.5 allocs/s   3 cpu-µs/op
BenchmarkAllocate/sqlite/writers=8,handles=8-2   300   1 ns/op   999 allocs/s
BenchmarkAllocate/sqlite/writers=8   300   1 ns/op   7 allocs/s
--- SKIP: BenchmarkAllocate/sqlite/writers=8`, "\n")
	got := allocsPerSecond(lines, "BenchmarkAllocate/sqlite/writers=8")
	if len(got) != 3 || got[0] != 430 || got[1] != 440.5 || got[2] != 7 {
		t.Errorf("got %v, want [430 440.5 7]", got)
	}
	for in, want := range map[string]string{"a/b-2": "a/b", "a/b-16": "a/b", "a/b": "a/b", "a/w=1-x": "a/w=1-x", "a-": "a-"} {
		if got := trimProcs(in); got != want {
			t.Errorf("trimProcs(%q) = %q, want %q", in, got, want)
		}
	}
}
