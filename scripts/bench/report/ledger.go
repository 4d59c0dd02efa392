package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// ledger: the ledger benchmark's table (report ledger).
type ledger struct {
	file  string
	count int
}

// The rows and columns of the ledger table: BenchmarkAllocate's sub-benchmarks.
var (
	ledgerBackends = []string{"sqlite", "postgres"}
	ledgerCases    = []string{"writers=1", "writers=8", "writers=8,handles=8", "writers=1,rows=5000"}
)

// render: the table, and why PostgreSQL was skipped when it was; ends with a newline.
func (l *ledger) render() (string, error) {
	b, err := os.ReadFile(l.file)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(b), "\n")
	var out strings.Builder
	fmt.Fprintf(&out, "| Ledger (`Allocate`, allocs/s, median of %d) | writers=1 | writers=8 | writers=8, handles=8 | writers=1, 5,000 allocations already in the ledger |\n", l.count)
	out.WriteString("|---|---:|---:|---:|---:|\n")
	for _, be := range ledgerBackends {
		out.WriteString("| " + be)
		for _, c := range ledgerCases {
			if v := median(allocsPerSecond(lines, "BenchmarkAllocate/"+be+"/"+c)); math.IsNaN(v) {
				out.WriteString(" | skipped")
			} else {
				fmt.Fprintf(&out, " | %.0f", v)
			}
		}
		out.WriteString(" |\n")
	}
	// pgtest skips with "PostgreSQL is not available: <why>" (internal/testutil/pgtest).
	skipped, why := false, ""
	for _, line := range lines {
		skipped = skipped || strings.Contains(line, "SKIP")
		if why == "" && strings.Contains(line, "PostgreSQL is not available") {
			skipped, why = true, strings.TrimSpace(line)
		}
	}
	if skipped {
		fmt.Fprintf(&out, "\nPostgreSQL skipped: %s\n", why)
	}
	return out.String(), nil
}

// allocsPerSecond: the allocs/s of every line of benchmark name, whatever its -GOMAXPROCS suffix:
//
//	BenchmarkAllocate/sqlite/writers=8-2   300   2325455 ns/op   430.0 allocs/s
func allocsPerSecond(lines []string, name string) []float64 {
	var vs []float64
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 || trimProcs(f[0]) != name {
			continue
		}
		for i := 1; i+1 < len(f); i++ {
			if f[i+1] == "allocs/s" {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					vs = append(vs, v)
				}
			}
		}
	}
	return vs
}

// trimProcs drops a benchmark name's "-N" suffix (GOMAXPROCS).
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}
