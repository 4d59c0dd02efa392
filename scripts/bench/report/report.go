// Command report renders one count's section of scripts/bench.sh's results (Markdown on stdout) from
// the raw figures the script records in its work directory, and judges them against issue 11's
// targets (targets.go):
//
//	report -dir WORK/nCOUNT -count COUNT -rounds R -parallelism P -configs runtime,data,noop,... [-calibrate] [-destroy]
//
// DIR holds, per configuration NAME, the files NAME.times, NAME.plan.times and NAME.destroy.times: one
// line per timed round, "wall cpu provider_peak_rss_mb provider_cpu" (seconds, MB; "nan" for a figure
// not measured: the provider columns of terraform_data, a destroy not run). The configurations are the
// names scripts/bench.sh gives them (runtime, data, noop, noop_quiet, noop_schema, noop_bare,
// runtime_quiet, runtime_pg), in the order of the tables' rows.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	var c section
	var configs string
	flag.StringVar(&c.dir, "dir", "", "work directory of one count (holds NAME.times, NAME.plan.times, NAME.destroy.times)")
	flag.IntVar(&c.count, "count", 0, "resources per configuration")
	flag.IntVar(&c.rounds, "rounds", 0, "timed rounds (for the tables' headers)")
	flag.IntVar(&c.parallelism, "parallelism", 0, "terraform -parallelism (for the tables' headers)")
	flag.StringVar(&configs, "configs", "", "configurations, comma-separated, in row order")
	flag.BoolVar(&c.calibrate, "calibrate", false, "the run has the calibration configurations: print the targets table and the floor")
	flag.BoolVar(&c.destroy, "destroy", false, "the run timed destroys: print their table")
	flag.Parse()
	if c.dir == "" || c.count <= 0 || configs == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: report -dir DIR -count N -rounds R -parallelism P -configs NAME,... [-calibrate] [-destroy]")
		os.Exit(2)
	}
	c.configs = strings.Split(configs, ",")
	if err := c.write(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		os.Exit(1)
	}
}

// The columns of a .times line.
const (
	colWall = iota
	colCPU
	colRSS
	colProviderCPU
	columns
)

type section struct {
	dir                        string
	count, rounds, parallelism int
	configs                    []string
	calibrate, destroy         bool
	times                      map[string][][columns]float64 // by file name without .times
}

// load reads every configuration's .times files; a missing file is no rounds.
func (c *section) load() error {
	c.times = map[string][][columns]float64{}
	for _, n := range c.configs {
		for _, sfx := range []string{"", ".plan", ".destroy"} {
			rows, err := readTimes(filepath.Join(c.dir, n+sfx+".times"))
			if err != nil {
				return err
			}
			c.times[n+sfx] = rows
		}
	}
	return nil
}

func readTimes(path string) ([][columns]float64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows [][columns]float64
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != columns {
			return nil, fmt.Errorf("%s:%d: want %d figures (wall cpu provider_rss provider_cpu), got %q", path, i+1, columns, line)
		}
		var row [columns]float64
		for j, s := range f {
			if s == "nan" {
				row[j] = math.NaN()
				continue
			}
			if row[j], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %q is not a number", path, i+1, s)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// column: the measured values of one column of file NAME (NAME.times without .times).
func (c *section) column(name string, col int) []float64 {
	var vs []float64
	for _, r := range c.times[name] {
		if !math.IsNaN(r[col]) {
			vs = append(vs, r[col])
		}
	}
	return vs
}

func (c *section) med(name string, col int) float64 { return median(c.column(name, col)) }

// terraformCPU: the median over the rounds of Terraform's own CPU (the command's less its provider
// processes'), at 6 significant digits per round as the awk it replaces printed it.
func (c *section) terraformCPU(name string) float64 {
	var vs []float64
	for _, r := range c.times[name] {
		if !math.IsNaN(r[colCPU]) && !math.IsNaN(r[colProviderCPU]) {
			vs = append(vs, sig6(r[colCPU]-r[colProviderCPU]))
		}
	}
	return median(vs)
}

// floor: Terraform's own CPU for NAME against the plain no-op's whole CPU (sfx "" = the applies,
// ".plan" = the refresh plans).
func (c *section) floor(name, sfx string) float64 {
	return ratio(c.terraformCPU(name+sfx), c.med("noop_quiet"+sfx, colCPU))
}

func (c *section) label(n string) string {
	switch n {
	case "runtime":
		return fmt.Sprintf("%d × `rill_runtime` (SQLite ledger)", c.count)
	case "runtime_pg":
		return fmt.Sprintf("%d × `rill_runtime` (PostgreSQL ledger)", c.count)
	case "data":
		return fmt.Sprintf("%d × `terraform_data`", c.count)
	case "noop":
		return fmt.Sprintf("calibration: %d × `noop_item` (no-op framework provider)", c.count)
	case "noop_quiet":
		return fmt.Sprintf("calibration: %d × `noop_item`, SDK trace logging off", c.count)
	case "noop_schema":
		return fmt.Sprintf("calibration: %d × `noop_runtime` (no-op, rill_runtime's schema), SDK trace logging off", c.count)
	case "noop_bare":
		return fmt.Sprintf("calibration: %d × `noop_bare` (no-op, rill_runtime's attributes without validators, plan modifiers, defaults), SDK trace logging off", c.count)
	case "runtime_quiet":
		return fmt.Sprintf("calibration: %d × `rill_runtime` (SQLite), SDK trace logging off", c.count)
	}
	return n
}

// table: one row per configuration; sfx "" = the applies, ".plan" = the refresh plans, ".destroy" =
// the destroys. Ends without a newline.
func (c *section) table(b *strings.Builder, phase, sfx string) {
	dmed := c.med("data"+sfx, colWall)
	fmt.Fprintf(b, "| Configuration (`terraform %s`, -parallelism=%d, rounds=%d) | median wall (s) | min (s) | max (s) | median CPU (s) | wall vs terraform_data | provider peak RSS (MB, median) | provider CPU (s, median) |\n", phase, c.parallelism, c.rounds)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range c.configs {
		med := c.med(n+sfx, colWall)
		vs := "1.00"
		if n != "data" {
			vs = "**" + f2(ratio(med, dmed)) + "**"
		}
		fmt.Fprintf(b, "\n| %s | %s | %s | %s | %s | %s | %s | %s |", c.label(n), f2(med),
			f2(minOf(c.column(n+sfx, colWall))), f2(maxOf(c.column(n+sfx, colWall))), f2(c.med(n+sfx, colCPU)),
			vs, f0(c.med(n+sfx, colRSS)), f2(c.med(n+sfx, colProviderCPU)))
	}
}

func (c *section) write(w io.Writer) error {
	if err := c.load(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(c.render()); err != nil {
		return err
	}
	return bw.Flush()
}

// render: the section, ending with a blank line.
func (c *section) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d resources\n\n", c.count)
	dataWall, dataCPU := c.med("data", colWall), c.med("data", colCPU)
	c.table(&b, "apply", "")
	rt := ratio(c.med("runtime", colWall), dataWall)
	fmt.Fprintf(&b, "\n\nRatio runtime/terraform_data (median wall, SQLite ledger): **%s** — %s the target of <= %g.", f2(rt), verdict(meets(rt, targetVsData)), targetVsData)
	fmt.Fprintf(&b, " CPU ratio: %s.\n", f2(ratio(c.med("runtime", colCPU), dataCPU)))
	if c.calibrate {
		c.calibration(&b, dataWall)
	}
	b.WriteString("\nEach apply is followed by a refresh plan of what it created (`terraform plan`, which must report no changes):\n\n")
	c.table(&b, "plan", ".plan")
	b.WriteString("\n\n")
	if c.destroy {
		b.WriteString("Then a destroy of all of it:\n\n")
		c.table(&b, "destroy", ".destroy")
		b.WriteString("\n\n")
	}
	applyRSS, planRSS := c.med("runtime", colRSS), c.med("runtime.plan", colRSS)
	fmt.Fprintf(&b, "Provider memory at %d runtimes: peak RSS %s MB in the apply, %s MB in the refresh plan", c.count, f0(applyRSS), f0(planRSS))
	if t, ok := rssTargetMB[c.count]; ok {
		fmt.Fprintf(&b, " (%s the target of <= %g MB at %d)", verdict(meets(applyRSS, t) && meets(planRSS, t)), t, c.count)
	}
	b.WriteString(". Peak RSS counts the pages of the provider's binary that the process touched (file-backed, shared with the page cache) as well as its own memory.\n\n")
	return b.String()
}

// calibration: the no-op providers for scale, the targets table of issue 11, and the floor of the
// 1.5x target.
func (c *section) calibration(b *strings.Builder, dataWall float64) {
	fmt.Fprintf(b, "\nFor scale: a provider that does nothing costs %s× terraform_data", f2(ratio(c.med("noop", colWall), dataWall)))
	fmt.Fprintf(b, " (%s× with the SDK's trace logging off);", f2(ratio(c.med("noop_quiet", colWall), dataWall)))
	fmt.Fprintf(b, " rill_runtime with the SDK's trace logging off is %s×.\n\n", f2(ratio(c.med("runtime_quiet", colWall), dataWall)))
	fmt.Fprintf(b, "| Targets at %d (rill_runtime, SDK trace logging off as in `main.go`; medians) | vs same-schema no-op (<= %g) | vs plain no-op (<= %g) | vs terraform_data |\n", c.count, targetVsSchemaNoop, targetVsPlainNoop)
	b.WriteString("|---|---:|---:|---:|\n")
	for _, sfx := range []string{"", ".plan"} {
		phase := "apply"
		if sfx == ".plan" {
			phase = "refresh plan"
		}
		for _, col := range []int{colWall, colCPU, colProviderCPU} {
			what := map[int]string{colWall: "wall", colCPU: "CPU, terraform + provider", colProviderCPU: "CPU, provider only"}[col]
			a := c.med("runtime_quiet"+sfx, col)
			sr, pr := ratio(a, c.med("noop_schema"+sfx, col)), ratio(a, c.med("noop_quiet"+sfx, col))
			s, p, d := f2(sr), f2(pr), "–"
			// The provider's own CPU has no target: Terraform's side of the ratio is what the targets judge.
			if col != colProviderCPU {
				d = f2(ratio(a, c.med("data"+sfx, col)))
				s += " " + mark(meets(sr, targetVsSchemaNoop))
				p += " " + mark(meets(pr, targetVsPlainNoop))
			}
			fmt.Fprintf(b, "| %s, %s | %s | %s | %s |\n", phase, what, s, p, d)
		}
	}
	// The floor of the 1.5x target, two ways: what any provider with rill_runtime's attributes costs
	// (noop_bare, no validators, plan modifiers or defaults, doing nothing) against the plain no-op;
	// and Terraform's own CPU for rill_runtime (the command's less its provider's) against the plain
	// no-op's whole CPU. Above 1.5, a provider that cost nothing at all would still miss it.
	fmt.Fprintf(b, "\nThe floor of the %g× target: %d `noop_bare` (rill_runtime's attributes and `timeouts` block, without validators, plan modifiers or defaults, a provider doing nothing)", targetVsPlainNoop, c.count)
	fmt.Fprintf(b, " costs **%s×** the plain no-op's CPU (Terraform and provider) in the apply and **%s×** in the refresh plan",
		f2(ratio(c.med("noop_bare", colCPU), c.med("noop_quiet", colCPU))), f2(ratio(c.med("noop_bare.plan", colCPU), c.med("noop_quiet.plan", colCPU))))
	fmt.Fprintf(b, " (`noop_runtime`, with them: %s× and %s× `noop_bare`);",
		f2(ratio(c.med("noop_schema", colCPU), c.med("noop_bare", colCPU))), f2(ratio(c.med("noop_schema.plan", colCPU), c.med("noop_bare.plan", colCPU))))
	fmt.Fprintf(b, " Terraform's own CPU alone, without its provider's, is **%s×** and **%s×** the plain no-op's whole CPU for %d `rill_runtime`",
		f2(c.floor("runtime_quiet", "")), f2(c.floor("runtime_quiet", ".plan")), c.count)
	fmt.Fprintf(b, " (%s× and %s× for `noop_bare`). Above %g, a provider with these attributes that cost no CPU at all would still miss the %g× target.\n",
		f2(c.floor("noop_bare", "")), f2(c.floor("noop_bare", ".plan")), targetVsPlainNoop, targetVsPlainNoop)
}
