package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scale.md is what scripts/bench.sh printed (before this command replaced its shell) for the scale run
// whose phases' results testdata/scale holds (scripts/bench.sh --no-apply --no-ledger --scale 20,40).
func TestScaleMatchesTheShellItReplaced(t *testing.T) {
	matchesGolden(t, &scale{dir: filepath.Join("testdata", "scale"), counts: []int{20, 40}}, "scale.md")
}

// A phase that did not complete is a row saying so, and the growth goes to the last count whose
// phase completed; a phase never reached is no row; one count is no growth.
func TestScaleStoppedAndNotRun(t *testing.T) {
	dir := t.TempDir()
	for path, res := range map[string]string{
		"scale100/runtime.apply.result": "2.000 3.000 60.0 1.000",
		"scale100/data.apply.result":    "1.000 0.500 nan nan",
		"scale500/runtime.apply.result": "9.000 12.000 80.0 6.000",
		"scale500/data.apply.result":    "4.000 2.000 nan nan",
		"scale900/runtime.apply.result": "stopped at the deadline (20:15) after 5 s, 3 of 900 done",
		"scale900/data.apply.result":    "1.000 0.900 nan nan",
		"scale900/runtime.plan.result":  "not run: an earlier phase did not complete",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(res+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := write(&out, &scale{dir: dir, counts: []int{100, 500, 900}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 100 | `rill_runtime` (4 hosts × 100 slots) | apply | 2.00 | 10.00 | 20.00 | 60 |\n",
		"| 100 | `terraform_data` | apply | 1.00 | – | 5.00 | – |\n",
		"| 500 | `rill_runtime` (5 hosts × 100 slots) | apply | 9.00 | 12.00 | 12.00 | 80 |\n",
		"| 900 | `rill_runtime` (9 hosts × 100 slots) | apply | stopped at the deadline (20:15) after 5 s, 3 of 900 done | | | |\n",
		"| 900 | `rill_runtime` (9 hosts × 100 slots) | plan | not run: an earlier phase did not complete | | | |\n",
		"\nProvider CPU per runtime, apply, from 100 to 500 runtimes: 10.00 → 12.00 ms (**1.20×**; flat is 1.0×). Terraform core beside it, terraform_data's CPU per resource: 5.00 → 4.00 ms (0.80×).\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "| 100 | `rill_runtime` (4 hosts × 100 slots) | plan") || strings.Contains(out.String(), ", plan, from") {
		t.Errorf("a phase never reached has a row or a growth:\n%s", out.String())
	}
	out.Reset()
	if err := write(&out, &scale{dir: dir, counts: []int{100}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Provider CPU per runtime") {
		t.Errorf("one count has no growth:\n%s", out.String())
	}
}

func TestParseArguments(t *testing.T) {
	for _, args := range [][]string{
		{"section", "-dir", "d", "-count", "0", "-configs", "runtime"},
		{"scale", "-dir", "d", "-counts", "20,x"},
		{"ledger", "-file", "f"},
		{"ledger", "-file", "f", "-count", "3", "extra"},
		{"kubernetes", "-dir", "d", "-count", "10", "-rounds", "2"},
		{"nonsense"},
	} {
		if _, err := parse(args[0], args[1:]); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	r, err := parse("scale", []string{"-dir", "d", "-counts", "20,40"})
	if s, ok := r.(*scale); err != nil || !ok || len(s.counts) != 2 || s.counts[1] != 40 {
		t.Errorf("scale -counts 20,40: %v, %v", r, err)
	}
}
