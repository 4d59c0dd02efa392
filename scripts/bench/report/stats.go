package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// The statistics of the report. A missing figure is NaN (a file without rounds, the provider columns
// of terraform_data, a destroy not run) and prints as "–"; every figure derived from one is missing too.

// median of vs, NaN for none. Of an even count it is the mean of the two middle values at 6 significant
// digits, as the awk it replaces printed it (the inputs have 3 decimals: nothing is lost).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return sig6((s[len(s)/2-1] + s[len(s)/2]) / 2)
}

func sig6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

func minOf(vs []float64) float64 { return fold(vs, math.Min) }
func maxOf(vs []float64) float64 { return fold(vs, math.Max) }

// fold: f over vs, NaN for none.
func fold(vs []float64, f func(a, b float64) float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	m := vs[0]
	for _, v := range vs[1:] {
		m = f(m, v)
	}
	return m
}

// ratio a/b rounded to the hundredth it prints as, so that a verdict judges the figure the reader sees;
// NaN when either is missing or b is 0.
func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	r, _ := strconv.ParseFloat(fmt.Sprintf("%.2f", a/b), 64)
	return r
}

// perItem: milliseconds per resource of seconds spent on n resources.
func perItem(seconds float64, n int) float64 { return 1000 * seconds / float64(n) }

// f2 prints a figure with 2 decimals, f0 with none; "–" when missing.
func f2(v float64) string { return fmtOr(v, "%.2f") }
func f0(v float64) string { return fmtOr(v, "%.0f") }

func fmtOr(v float64, format string) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}
