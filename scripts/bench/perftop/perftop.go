// Command perftop prints where a Go program spent its CPU in a `perf record -g` profile, for
// scripts/bench.sh --profile: Terraform's own CPU, which pprof cannot reach (Terraform is a release
// binary, stripped of its ELF symbols, so `perf report` shows bare addresses). It reads the output of
//
//	perf script -i perf.data -F comm,ip,dso
//
// on stdin, keeps the samples of one command (-comm) and symbolizes the frames that are in the
// binary (-binary) through its Go symbol table (.gopclntab, which stripping keeps: the Go runtime
// needs it). It prints the functions with the largest share of the samples: -cum counts a sample for
// every function on its stack (each once), else only for the function it was taken in.
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider.
package main

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	comm := flag.String("comm", "terraform", "the command whose samples count (perf's comm: 15 characters at most)")
	binary := flag.String("binary", "", "the executable those samples ran (required)")
	cum := flag.Bool("cum", false, "count every function on a sample's stack, not only the innermost")
	n := flag.Int("n", 25, "how many functions to print")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "perftop: -binary is required")
		os.Exit(2)
	}
	if err := run(os.Stdin, os.Stdout, *comm, *binary, *cum, *n); err != nil {
		fmt.Fprintf(os.Stderr, "perftop: %v\n", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, comm, binary string, cum bool, n int) error {
	sym, err := openSymbols(binary)
	if err != nil {
		return err
	}
	samples, err := readSamples(in, comm, binary)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("no samples of command %q in the input", comm)
	}
	counts := map[string]int{}
	for _, frames := range samples {
		if !cum && len(frames) > 0 {
			frames = frames[:1] // the function the sample was taken in
		}
		seen := map[string]bool{}
		for _, off := range frames {
			if name := sym.name(off); !seen[name] {
				counts[name]++
				seen[name] = true
			}
		}
	}
	type row struct {
		name  string
		count int
	}
	rows := make([]row, 0, len(counts))
	for name, c := range counts {
		rows = append(rows, row{name, c})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].count != rows[j].count {
			return rows[i].count > rows[j].count
		}
		return rows[i].name < rows[j].name
	})
	kind := "flat (the function the sample was taken in)"
	if cum {
		kind = "cumulative (every function on the sample's stack)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d samples of %s, %s\n", len(samples), comm, kind)
	for i, r := range rows {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "%6.2f%%  %s\n", 100*float64(r.count)/float64(len(samples)), r.name)
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// readSamples returns, per sample of comm, the file offsets of its frames in binary, innermost first;
// a frame elsewhere (the kernel, the vDSO, another binary) is -1.
func readSamples(in io.Reader, comm, binary string) ([][]int64, error) {
	var (
		samples [][]int64
		cur     []int64
		keep    bool
		inside  bool
	)
	flush := func() {
		if inside && keep {
			samples = append(samples, cur)
		}
		cur, inside = nil, false
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	dso := "(" + binary + ")"
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != '\t' && line[0] != ' ':
			// A sample's header: its comm (perf pads it), then the ip and dso when the sample has no
			// call chain.
			flush()
			fields := strings.Fields(line)
			keep, inside = len(fields) > 0 && fields[0] == comm, true
		default:
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			off := int64(-1)
			if fields[1] == dso {
				v, err := strconv.ParseUint(fields[0], 16, 64)
				if err != nil {
					return nil, fmt.Errorf("frame %q: %w", line, err)
				}
				off = int64(v)
			}
			cur = append(cur, off)
		}
	}
	flush()
	return samples, sc.Err()
}

// symbols names the functions of a Go binary by the file offsets perf reports.
type symbols struct {
	table *gosym.Table
	loads []*elf.Prog
}

func openSymbols(binary string) (*symbols, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil, errors.New(binary + " has no Go symbol table (.gopclntab)")
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, err
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("reading the Go symbol table of %s: %w", binary, err)
	}
	s := &symbols{table: table}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			s.loads = append(s.loads, p)
		}
	}
	return s, nil
}

// name returns the function at a file offset ("[other]" outside the binary). perf reports a frame as
// its offset in the file; the program headers map it to the address the symbol table knows.
func (s *symbols) name(off int64) string {
	if off < 0 {
		return "[kernel or other binary]"
	}
	for _, p := range s.loads {
		if uint64(off) >= p.Off && uint64(off) < p.Off+p.Filesz {
			if fn := s.table.PCToFunc(uint64(off) - p.Off + p.Vaddr); fn != nil {
				return fn.Name
			}
			break
		}
	}
	return fmt.Sprintf("[unknown %#x]", off)
}
