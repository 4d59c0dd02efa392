package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The largest peak RSS and the sum of the CPU of the processes, in rsswrap's and profprov's order of
// fields alike; no process (terraform_data) is "nan nan"; a damaged line fails rather than count 0.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"wrap":    "maxrss_kb=51200 user=0.200 sys=0.050 wall=1.000\nmaxrss_kb=60416 user=0.300 sys=0.100 wall=2.000\n",
		"prof":    "wall=1.000 user=0.500 sys=0.250 maxrss_kb=1024\n",
		"empty":   "",
		"damaged": "maxrss_kb=1 user=x sys=0\n",
		"partial": "maxrss_kb=1 user=0.1\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(names ...string) []string {
		var ps []string
		for _, n := range names {
			ps = append(ps, filepath.Join(dir, n))
		}
		return ps
	}
	for _, tc := range []struct {
		u    usage
		want string
	}{
		{usage{files: p("wrap")}, "59.0 0.650\n"},
		{usage{files: p("wrap", "prof")}, "59.0 1.400\n"},
		{usage{files: p("empty")}, "nan nan\n"},
		{usage{files: p("missing")}, "nan nan\n"},
		{usage{files: p("wrap", "prof"), processes: true}, "1.40 s in 3 processes\n"},
	} {
		got, err := tc.u.render()
		if err != nil || got != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.u, got, err, tc.want)
		}
	}
	for _, bad := range []string{"damaged", "partial"} {
		if _, err := (&usage{files: p(bad)}).render(); err == nil || !strings.Contains(err.Error(), bad+":1") {
			t.Errorf("%s: got %v, want an error naming %s:1", bad, err, bad)
		}
	}
}
