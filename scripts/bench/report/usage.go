package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
)

// usage: the provider processes of one timed command (report usage), from the rusage lines
// scripts/bench/rsswrap and scripts/bench/profprov write, one per process:
//
//	maxrss_kb=<KiB> user=<s> sys=<s> wall=<s>   (in any order)
type usage struct {
	files []string
	// processes: print "CPU s in N processes" (the profile's table) instead of "peak_rss_mb cpu_s".
	processes bool
}

// render: "peak_rss_mb cpu_s", the largest peak RSS of the processes and the sum of their CPU time
// ("nan nan" without any: terraform_data has no provider process); a missing file is no process.
func (u *usage) render() (string, error) {
	rss, cpu, n := 0.0, 0.0, 0
	for _, file := range u.files {
		b, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			kv := map[string]float64{}
			for _, f := range strings.Fields(line) {
				k, v, ok := strings.Cut(f, "=")
				x, err := strconv.ParseFloat(v, 64)
				if !ok || err != nil {
					return "", fmt.Errorf("%s:%d: %q is not key=number", file, i+1, f)
				}
				kv[k] = x
			}
			for _, k := range []string{"maxrss_kb", "user", "sys"} {
				if _, ok := kv[k]; !ok {
					return "", fmt.Errorf("%s:%d: no %s in %q", file, i+1, k, line)
				}
			}
			rss, cpu, n = math.Max(rss, kv["maxrss_kb"]), cpu+kv["user"]+kv["sys"], n+1
		}
	}
	if u.processes {
		return fmt.Sprintf("%.2f s in %d processes\n", cpu, n), nil
	}
	if n == 0 {
		return "nan nan\n", nil
	}
	return fmt.Sprintf("%.1f %.3f\n", rss/1024, cpu), nil
}
