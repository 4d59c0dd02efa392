package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"odd count: the middle value", []float64{3, 1, 2}, 2},
		{"even count: the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"one value", []float64{0.123}, 0.123},
		{"even count at 6 significant digits", []float64{1.0000001, 1.0000004}, 1},
		{"none: missing", nil, math.NaN()},
	} {
		got := median(tc.in)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: median(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
	if minOf(nil) == minOf(nil) || maxOf(nil) == maxOf(nil) {
		t.Error("min and max of no values must be missing (NaN)")
	}
	if minOf([]float64{2, 1, 3}) != 1 || maxOf([]float64{2, 3, 1}) != 3 {
		t.Error("min/max of 2,1,3")
	}
}

func TestFiguresPrintMissingAsADash(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{f2(math.NaN()), "–"},
		{f0(math.NaN()), "–"},
		{f2(1.005), "1.00"}, // 1.005 is 1.00499999... in binary, as printf rounds it
		{f2(2), "2.00"},
		{f0(59.5), "60"},
		{f0(50.4), "50"},
		{f2(ratio(math.NaN(), 1)), "–"},
		{f2(ratio(1, math.NaN())), "–"},
		{f2(ratio(1, 0)), "–"},
		{f2(ratio(1, 3)), "0.33"},
		{f2(perItem(0.5, 200)), "2.50"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// A ratio is judged as it prints: 1.2549 prints 1.25 and meets <= 1.25; 1.2551 prints 1.26 and misses.
// A missing figure meets no target.
func TestVerdictsAtTheBoundary(t *testing.T) {
	for _, tc := range []struct {
		v, target float64
		want      bool
	}{
		{ratio(1.25, 1), targetVsSchemaNoop, true},
		{ratio(1.2549, 1), targetVsSchemaNoop, true},
		{ratio(1.2551, 1), targetVsSchemaNoop, false},
		{ratio(1.5, 1), targetVsPlainNoop, true},
		{ratio(1.51, 1), targetVsPlainNoop, false},
		{ratio(1.3, 1), targetVsData, true},
		{ratio(1.31, 1), targetVsData, false},
		{ratio(math.NaN(), 1), targetVsData, false},
		{60, rssTargetMB[200], true},
		{60.1, rssTargetMB[200], false}, // prints as 60, but the memory target judges the median itself
		{120, rssTargetMB[1000], true},
	} {
		if got := meets(tc.v, tc.target); got != tc.want {
			t.Errorf("meets(%v, %v) = %v, want %v", tc.v, tc.target, got, tc.want)
		}
	}
	if verdict(true) != "meets" || verdict(false) != "misses" || mark(true) != "✓" || mark(false) != "✗" {
		t.Error("verdict words")
	}
}

// The golden files are what the shell functions of scripts/bench.sh printed (before this command
// replaced them) for testdata/n20, the .times files of a real run (scripts/bench.sh --rev HEAD
// --calibrate --count 20 -n 2 --destroy); calibrate-destroy-20.md is also that run's section as printed,
// plus the rows and sentence of noop_contract, whose .times files are from a later run of the same
// command (2026-12-01 20:10 UTC, when the bench gained that configuration).
func TestRenderMatchesTheShellItReplaced(t *testing.T) {
	all := []string{"runtime", "data", "noop", "noop_quiet", "noop_schema", "noop_bare", "noop_contract", "runtime_quiet"}
	for _, tc := range []struct {
		golden string
		s      section
	}{
		{"calibrate-destroy-20.md", section{count: 20, rounds: 2, parallelism: 10, configs: all, calibrate: true, destroy: true}},
		{"plain-200.md", section{count: 200, rounds: 2, parallelism: 10, configs: []string{"runtime", "data"}}},
	} {
		tc.s.dir = filepath.Join("testdata", "n20")
		matchesGolden(t, &tc.s, tc.golden)
	}
}

// matchesGolden: what r renders is testdata/golden, byte for byte.
func matchesGolden(t *testing.T, r renderer, golden string) {
	t.Helper()
	var out strings.Builder
	if err := write(&out, r); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", golden))
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", golden, out.String(), want)
	}
}

func writeTimes(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".times"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The memory verdict appears only at the counts with a target, and judges both the apply and the plan.
func TestMemoryTarget(t *testing.T) {
	for _, tc := range []struct {
		count      int
		apply, pln string
		want       string
	}{
		{200, "60.0", "59.0", "peak RSS 60 MB in the apply, 59 MB in the refresh plan (meets the target of <= 60 MB at 200)."},
		{200, "59.0", "60.2", "(misses the target of <= 60 MB at 200)."},
		{1000, "119.9", "121.0", "peak RSS 120 MB in the apply, 121 MB in the refresh plan (misses the target of <= 120 MB at 1000)."},
		{1000, "100", "nan", "100 MB in the apply, – MB in the refresh plan (misses the target of <= 120 MB at 1000)."},
		{500, "900.0", "900.0", "peak RSS 900 MB in the apply, 900 MB in the refresh plan. Peak RSS counts"},
	} {
		dir := t.TempDir()
		writeTimes(t, dir, map[string]string{
			"runtime":      "1 1 " + tc.apply + " 0.5\n",
			"runtime.plan": "1 1 " + tc.pln + " 0.5\n",
			"data":         "1 1 nan nan\n",
		})
		s := section{dir: dir, count: tc.count, rounds: 1, parallelism: 10, configs: []string{"runtime", "data"}}
		var out strings.Builder
		if err := write(&out, &s); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("count %d, RSS %s/%s: want %q in\n%s", tc.count, tc.apply, tc.pln, tc.want, out.String())
		}
	}
}

// Without terraform_data's rounds every ratio against it is missing, and a missing ratio misses.
func TestMissingBaselinePrintsDashesAndMisses(t *testing.T) {
	dir := t.TempDir()
	writeTimes(t, dir, map[string]string{"runtime": "1.000 0.900 50.0 0.400\n"})
	s := section{dir: dir, count: 20, rounds: 1, parallelism: 10, configs: []string{"runtime", "data"}}
	var out strings.Builder
	if err := write(&out, &s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 20 × `rill_runtime` (SQLite ledger) | 1.00 | 1.00 | 1.00 | 0.90 | **–** | 50 | 0.40 |",
		"| 20 × `terraform_data` | – | – | – | – | 1.00 | – | – |",
		"**–** — misses the target of <= 1.3. CPU ratio: –.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in\n%s", want, out.String())
		}
	}
}

func TestMalformedTimesFail(t *testing.T) {
	for _, content := range []string{"1 2 3\n", "1 2 x 4\n"} {
		dir := t.TempDir()
		writeTimes(t, dir, map[string]string{"runtime": content})
		s := section{dir: dir, count: 20, configs: []string{"runtime"}}
		if err := write(&strings.Builder{}, &s); err == nil || !strings.Contains(err.Error(), "runtime.times:1") {
			t.Errorf("%q: got %v, want an error naming runtime.times:1", content, err)
		}
	}
}
