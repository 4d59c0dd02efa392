package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// section: one count's section of the apply benchmark (report section).
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
		row, err := parseFigures(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
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

// configLabels names each configuration in the tables; %d is the count. A configuration without a
// label is printed by its name.
var configLabels = map[string]string{
	"runtime":       "%d × `rill_runtime` (SQLite ledger)",
	"runtime_pg":    "%d × `rill_runtime` (PostgreSQL ledger)",
	"data":          "%d × `terraform_data`",
	"noop":          "calibration: %d × `noop_item` (no-op framework provider)",
	"noop_quiet":    "calibration: %d × `noop_item`, SDK trace logging off",
	"noop_schema":   "calibration: %d × `noop_runtime` (no-op, rill_runtime's schema), SDK trace logging off",
	"noop_bare":     "calibration: %d × `noop_bare` (no-op, rill_runtime's attributes without validators, plan modifiers, defaults), SDK trace logging off",
	"noop_contract": "calibration: %d × `noop_contract` (no-op, only the attributes of Rill's provisioner contract, as `noop_bare`), SDK trace logging off",
	"runtime_quiet": "calibration: %d × `rill_runtime` (SQLite), SDK trace logging off",
}

func (c *section) label(n string) string {
	if f, ok := configLabels[n]; ok {
		return fmt.Sprintf(f, c.count)
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

// render: the section, ending with a blank line.
func (c *section) render() (string, error) {
	if err := c.load(); err != nil {
		return "", err
	}
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
	return b.String(), nil
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
	if slices.Contains(c.configs, "noop_contract") {
		// The same floor for a provider that exposes only what Rill's provisioner contract carries
		// (a runtime's arguments and config), none of this provider's additions.
		fmt.Fprintf(b, "With only the attributes of Rill's provisioner contract (`noop_contract`: ID, provisioner, slots, version, annotations, host, audience, cpu, memory_gb, storage_bytes; no `timeouts` block), the floor is **%s×** and **%s×** (Terraform and provider), and Terraform's own CPU alone **%s×** and **%s×**.\n",
			f2(ratio(c.med("noop_contract", colCPU), c.med("noop_quiet", colCPU))), f2(ratio(c.med("noop_contract.plan", colCPU), c.med("noop_quiet.plan", colCPU))),
			f2(c.floor("noop_contract", "")), f2(c.floor("noop_contract", ".plan")))
	}
	c.stateSizes(b)
}

// stateSizes: the state file's bytes per resource after an apply (NAME.state.bytes, which
// scripts/bench.sh writes after each apply), of rill_runtime against the same-schema no-op and
// terraform_data. Terraform rewrites the whole state file after each resource an apply completes,
// so an apply of N resources writes about N²/2 times these bytes: at 1,000 and more, they decide
// Terraform's share of the apply.
func (c *section) stateSizes(b *strings.Builder) {
	per := func(n string) float64 {
		raw, err := os.ReadFile(filepath.Join(c.dir, n+".state.bytes"))
		if err != nil {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err != nil {
			return math.NaN()
		}
		return v / float64(c.count)
	}
	rt, schema := per("runtime_quiet"), per("noop_schema")
	fmt.Fprintf(b, "\nThe state file after the apply, in bytes per resource: %s for `rill_runtime`, %s for `noop_runtime` (%s×), %s for `terraform_data`."+
		" Terraform rewrites the whole file after each resource an apply completes, so an apply of %d writes about %d times these bytes.\n",
		f0(rt), f0(schema), f2(ratio(rt, schema)), f0(per("data")), c.count, c.count/2)
}

// parseFigures: one line "wall cpu provider_rss provider_cpu" ("nan": a figure not measured).
func parseFigures(line string) (f [columns]float64, err error) {
	fields := strings.Fields(line)
	if len(fields) != columns {
		return f, fmt.Errorf("want %d figures (wall cpu provider_rss provider_cpu), got %q", columns, line)
	}
	for i, s := range fields {
		if s == "nan" {
			f[i] = math.NaN()
		} else if f[i], err = strconv.ParseFloat(s, 64); err != nil {
			return f, fmt.Errorf("%q is not a number", s)
		}
	}
	return f, nil
}

// positiveInts: a comma-separated list of positive integers.
func positiveInts(list string) ([]int, error) {
	var ns []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
