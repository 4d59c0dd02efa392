// Command results writes a benchmark run's results into a Markdown file, between its two marker lines:
//
//	<!-- NAME:results:begin (anything) -->
//	...replaced...
//	<!-- NAME:results:end -->
//
// It is the --update of scripts/bench.sh (NAME bench, BENCHMARKS.md) and scripts/bench-kubernetes.sh
// (NAME bench-kubernetes, BENCHMARKS-kubernetes.md):
//
//	go run ./scripts/bench/results -name bench -file BENCHMARKS.md <results.md
//	go run ./scripts/bench/results -name bench -file BENCHMARKS.md -check  # markers only, before a run
//
// Each marker must stand exactly once, begin before end; otherwise it changes nothing and fails, so a
// damaged file is never appended to or doubled (a missing marker once made --update append).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	name := flag.String("name", "", "marker name: the NAME in <!-- NAME:results:begin ... -->")
	file := flag.String("file", "", "Markdown file to update in place")
	check := flag.Bool("check", false, "only check FILE's markers (before a long run); write nothing")
	flag.Parse()
	if *name == "" || *file == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: results -name NAME -file FILE [-check] <results.md")
		os.Exit(2)
	}
	in := io.Reader(os.Stdin)
	if *check {
		in = nil
	}
	if err := run(*name, *file, in); err != nil {
		fmt.Fprintf(os.Stderr, "results: %v\n", err)
		os.Exit(1)
	}
}

// run replaces the results in file with what in holds; with a nil in, it only checks the markers.
func run(name, file string, in io.Reader) error {
	var results []byte
	if in != nil {
		var err error
		if results, err = io.ReadAll(in); err != nil {
			return fmt.Errorf("reading the results: %w", err)
		}
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := Replace(doc, name, results)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if in == nil {
		return nil
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	// A temporary file in the same directory and a rename: an interrupted run leaves the old file.
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename; left only on failure
	_, err = tmp.Write(out)
	if err == nil {
		err = tmp.Chmod(info.Mode().Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// Replace returns doc with the lines between NAME's begin and end marker lines replaced by results.
// It fails, naming the marker, unless each marker line stands exactly once and begin comes first, or
// when results itself holds a marker line (the next update would then find it twice).
func Replace(doc []byte, name string, results []byte) ([]byte, error) {
	begin, end := "<!-- "+name+":results:begin", "<!-- "+name+":results:end -->"
	isBegin := func(l string) bool { return strings.HasPrefix(l, begin) && strings.HasSuffix(l, "-->") }
	isEnd := func(l string) bool { return l == end }

	lines := strings.SplitAfter(string(doc), "\n")
	b, e := -1, -1
	for i, raw := range lines {
		l := strings.TrimRight(raw, " \t\r\n")
		switch {
		case isBegin(l) && b >= 0:
			return nil, fmt.Errorf("marker %q stands twice (lines %d and %d)", begin+" ... -->", b+1, i+1)
		case isBegin(l):
			b = i
		case isEnd(l) && e >= 0:
			return nil, fmt.Errorf("marker %q stands twice (lines %d and %d)", end, e+1, i+1)
		case isEnd(l):
			e = i
		}
	}
	switch {
	case b < 0:
		return nil, fmt.Errorf("marker %q not found", begin+" ... -->")
	case e < 0:
		return nil, fmt.Errorf("marker %q not found", end)
	case e < b:
		return nil, fmt.Errorf("marker %q (line %d) comes before %q (line %d)", end, e+1, begin+" ... -->", b+1)
	}
	for _, raw := range strings.Split(string(results), "\n") {
		if l := strings.TrimRight(raw, " \t\r"); isBegin(l) || isEnd(l) {
			return nil, fmt.Errorf("the results hold the marker line %q", l)
		}
	}

	var out bytes.Buffer
	for _, l := range lines[:b+1] {
		out.WriteString(l)
	}
	if !strings.HasSuffix(lines[b], "\n") { // cannot happen (end follows), but never glue two lines
		out.WriteByte('\n')
	}
	out.Write(results)
	if len(results) > 0 && results[len(results)-1] != '\n' {
		out.WriteByte('\n')
	}
	for _, l := range lines[e:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}
