// Command report renders scripts/bench.sh's results (Markdown on stdout) from the raw figures the
// script records in its work directory, and judges them against issue 11's targets (targets.go):
//
//	report section -dir WORK/nCOUNT -count COUNT -rounds R -parallelism P -configs runtime,data,... [-calibrate] [-destroy]
//	report scale -dir WORK -counts N1,N2,...
//	report ledger -file WORK/ledger.txt -count C
//	report usage [-processes] RUSAGE_FILE...
//	report pool -count N
//	report kubernetes -dir WORK -count N -rounds R -parallelism P -ready-count N -idle-secs S -ready-concurrency 1,P [-plan-note TEXT]
//
// section: one count's tables, ratios and verdicts. DIR holds, per configuration NAME, the files
// NAME.times, NAME.plan.times and NAME.destroy.times: one line per timed round, "wall cpu
// provider_peak_rss_mb provider_cpu" (seconds, MB; "nan" for a figure not measured: the provider
// columns of terraform_data, a destroy not run). The configurations are the names scripts/bench.sh
// gives them (runtime, data, noop, noop_quiet, noop_schema, noop_bare, runtime_quiet, runtime_pg), in
// the order of the tables' rows.
//
// scale: the --scale table and the growth of the CPU per resource from the first N to the last. WORK
// holds scaleN/NAME.PHASE.result per N, NAME (runtime, data) and PHASE (apply, plan, destroy): one line,
// "wall cpu provider_peak_rss_mb provider_cpu", or what happened instead ("stopped ...", "failed ...",
// "not run: ..."); a missing file is a phase not reached.
//
// ledger: the table of `go test ./internal/database -bench BenchmarkAllocate -count C`'s output: the
// median allocs/s per backend and case.
//
// usage: the provider processes' peak RSS (MB, the largest) and CPU time (s, the sum) of one timed
// command, from the rusage lines scripts/bench/rsswrap (or scripts/bench/profprov) wrote; with
// -processes, the CPU time and the number of processes.
//
// pool: "HOSTS SLOTS_PER_HOST", the static pool scripts/bench.sh writes for N one-slot runtimes
// (pool.go), so that the script's configurations and the scale table's labels cannot disagree.
//
// kubernetes: scripts/bench-kubernetes.sh's tables and verdicts (kubernetes.go), from its work directory.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		printUsage()
	}
	r, err := parse(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "report %s: %v\n", os.Args[1], err)
		printUsage()
	}
	if err := write(os.Stdout, r); err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		os.Exit(1)
	}
}

func printUsage() {
	fmt.Fprintln(os.Stderr, `usage: report section -dir DIR -count N -rounds R -parallelism P -configs NAME,... [-calibrate] [-destroy]
       report scale -dir WORK -counts N1,N2,...
       report ledger -file LEDGER.txt -count C
       report usage [-processes] RUSAGE_FILE...
       report pool -count N
       report kubernetes -dir WORK -count N -rounds R -parallelism P -ready-count N -idle-secs S -ready-concurrency 1,P [-plan-note TEXT]`)
	os.Exit(2)
}

// renderer: what each subcommand prints.
type renderer interface {
	render() (string, error)
}

func parse(cmd string, args []string) (renderer, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var r renderer
	var list string
	switch cmd {
	case "section":
		s := &section{}
		fs.StringVar(&s.dir, "dir", "", "work directory of one count (holds NAME.times, NAME.plan.times, NAME.destroy.times)")
		fs.IntVar(&s.count, "count", 0, "resources per configuration")
		fs.IntVar(&s.rounds, "rounds", 0, "timed rounds (for the tables' headers)")
		fs.IntVar(&s.parallelism, "parallelism", 0, "terraform -parallelism (for the tables' headers)")
		fs.StringVar(&list, "configs", "", "configurations, comma-separated, in row order")
		fs.BoolVar(&s.calibrate, "calibrate", false, "the run has the calibration configurations: print the targets table and the floor")
		fs.BoolVar(&s.destroy, "destroy", false, "the run timed destroys: print their table")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if s.dir == "" || s.count <= 0 || list == "" {
			return nil, fmt.Errorf("-dir, -count and -configs are required")
		}
		s.configs = strings.Split(list, ",")
		r = s
	case "scale":
		s := &scale{}
		fs.StringVar(&s.dir, "dir", "", "work directory (holds scaleN/NAME.PHASE.result)")
		fs.StringVar(&list, "counts", "", "the scale run's counts, comma-separated, in order")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		counts, err := positiveInts(list)
		if s.dir == "" || err != nil {
			return nil, fmt.Errorf("-dir and -counts (positive integers) are required")
		}
		s.counts = counts
		r = s
	case "ledger":
		l := &ledger{}
		fs.StringVar(&l.file, "file", "", "the ledger benchmark's output")
		fs.IntVar(&l.count, "count", 0, "its -count (for the header)")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if l.file == "" || l.count <= 0 {
			return nil, fmt.Errorf("-file and -count are required")
		}
		r = l
	case "kubernetes":
		k := &kubernetes{}
		fs.StringVar(&k.dir, "dir", "", "scripts/bench-kubernetes.sh's work directory")
		fs.IntVar(&k.count, "count", 0, "runtimes per apply")
		fs.IntVar(&k.rounds, "rounds", 0, "timed rounds")
		fs.IntVar(&k.parallelism, "parallelism", 0, "terraform -parallelism")
		fs.IntVar(&k.readyCount, "ready-count", 0, "runtimes of the readiness benchmark")
		fs.IntVar(&k.idleSecs, "idle-secs", 0, "seconds of the latency probe before each plan")
		fs.StringVar(&list, "ready-concurrency", "", "the readiness runs' concurrencies, comma-separated")
		fs.StringVar(&k.planNote, "plan-note", "", "a note on the plans (one found changes)")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		conc, err := positiveInts(list)
		if k.dir == "" || k.count <= 0 || k.rounds <= 0 || err != nil {
			return nil, fmt.Errorf("-dir, -count, -rounds and -ready-concurrency are required")
		}
		k.readyConcurrency = conc
		r = k
	case "usage":
		u := &usage{}
		fs.BoolVar(&u.processes, "processes", false, `print "CPU s in N processes"`)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		u.files = fs.Args()
		return u, nil
	case "pool":
		h := &poolHosts{}
		fs.IntVar(&h.count, "count", 0, "runtimes the pool must hold")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if h.count <= 0 {
			return nil, fmt.Errorf("-count is required")
		}
		r = h
	default:
		return nil, fmt.Errorf("unknown command")
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return r, nil
}

func write(w io.Writer, r renderer) error {
	out, err := r.render()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(out); err != nil {
		return err
	}
	return bw.Flush()
}
