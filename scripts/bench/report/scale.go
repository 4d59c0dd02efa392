package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// scale: the --scale table (report scale).
type scale struct {
	dir    string
	counts []int
}

var scalePhases = []string{"apply", "plan", "destroy"}

// render: the table and the growth sentences; ends with a newline.
func (s *scale) render() (string, error) {
	var b strings.Builder
	b.WriteString("| N | configuration | phase | wall (s) | provider CPU per runtime (ms) | Terraform's own CPU per resource (ms) | provider peak RSS (MB) |\n")
	b.WriteString("|---:|---|---|---:|---:|---:|---:|\n")
	// The per-resource figures as printed, by count and phase: the growth compares them.
	providerPer, dataPer := map[string]string{}, map[string]string{}
	for _, n := range s.counts {
		for _, phase := range scalePhases {
			for _, name := range []string{"runtime", "data"} {
				res, err := readResult(filepath.Join(s.dir, fmt.Sprintf("scale%d", n), name+"."+phase+".result"))
				if err != nil {
					return "", err
				}
				if res == "" {
					continue
				}
				cfg := "`terraform_data`"
				if name == "runtime" {
					cfg = fmt.Sprintf("`rill_runtime` (%d hosts × %d slots)", hosts(n), slotsPerHost)
				}
				f, measured, err := figures(res)
				if err != nil {
					return "", err
				}
				key := fmt.Sprintf("%d.%s", n, phase)
				switch {
				case !measured:
					fmt.Fprintf(&b, "| %d | %s | %s | %s | | | |\n", n, cfg, phase, res)
				case name == "runtime":
					providerPer[key] = f2(perItem(f[colProviderCPU], n))
					fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", n, cfg, phase, f2(f[colWall]), providerPer[key],
						f2(ownPerItem(f[colCPU], f[colProviderCPU], n)), f0(f[colRSS]))
				default:
					dataPer[key] = f2(ownPerItem(f[colCPU], math.NaN(), n))
					fmt.Fprintf(&b, "| %d | %s | %s | %s | – | %s | – |\n", n, cfg, phase, f2(f[colWall]), dataPer[key])
				}
			}
		}
	}
	first := s.counts[0]
	for _, phase := range scalePhases {
		last := 0
		for _, n := range s.counts {
			if _, ok := providerPer[fmt.Sprintf("%d.%s", n, phase)]; ok {
				last = n
			}
		}
		p1, ok := providerPer[fmt.Sprintf("%d.%s", first, phase)]
		if last == 0 || last == first || !ok {
			continue
		}
		p2 := providerPer[fmt.Sprintf("%d.%s", last, phase)]
		fmt.Fprintf(&b, "\nProvider CPU per runtime, %s, from %d to %d runtimes: %s → %s ms (**%s×**; flat is 1.0×).", phase, first, last, p1, p2, f2(ratio(parsed(p2), parsed(p1))))
		d1, ok1 := dataPer[fmt.Sprintf("%d.%s", first, phase)]
		d2, ok2 := dataPer[fmt.Sprintf("%d.%s", last, phase)]
		if ok1 && ok2 {
			fmt.Fprintf(&b, " Terraform core beside it, terraform_data's CPU per resource: %s → %s ms (%s×).", d1, d2, f2(ratio(parsed(d2), parsed(d1))))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// ownPerItem: Terraform's own CPU per resource in ms, the command's less its provider's (none: NaN).
func ownPerItem(cpu, providerCPU float64, n int) float64 {
	if math.IsNaN(providerCPU) {
		providerCPU = 0
	}
	return perItem(cpu-providerCPU, n)
}

// parsed: a printed figure's value ("–": NaN).
func parsed(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// readResult: a phase's one line ("" when the file is missing: the phase was not reached).
func readResult(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}

// figures: a result's four figures, measured = false when it says what happened instead (it does not
// start with a digit).
func figures(res string) (f [columns]float64, measured bool, err error) {
	if res == "" || res[0] < '0' || res[0] > '9' {
		return f, false, nil
	}
	f, err = parseFigures(res)
	return f, err == nil, err
}
