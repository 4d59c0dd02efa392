//go:build unix

// Command rsswrap measures each provider process Terraform starts, for scripts/bench.sh: copied as
// <dir>/terraform-provider-<name> into a dev_overrides directory, it runs the real provider binary,
// <dir>/real/terraform-provider-<name>, with the same arguments, standard streams and environment,
// and when that ends appends one line to RILL_BENCH_RUSAGE_FILE (if set):
//
//	maxrss_kb=<peak resident set size> user=<s> sys=<s> wall=<s>
//
// The kernel's own accounting (wait4's rusage), so it costs the provider nothing and needs no change
// in it. Peak RSS includes the pages of the binary that the process touched (file-backed, shared with
// the page cache) as well as its own memory.
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider
// (on Unix systems: it reads the kernel's rusage).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rsswrap: %v\n", err)
		os.Exit(2)
	}
	prov := filepath.Join(filepath.Dir(self), "real", filepath.Base(self))
	out := os.Getenv("RILL_BENCH_RUSAGE_FILE")
	cmd := exec.Command(prov, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Ctrl-C reaches the provider directly (same process group); a termination aimed at the wrapper
	// is passed on.
	signal.Ignore(os.Interrupt)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "rsswrap: %v\n", err)
		os.Exit(1)
	}
	go func() {
		for s := range term {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && out != "" {
		line := fmt.Sprintf("maxrss_kb=%d user=%.3f sys=%.3f wall=%.3f\n", ru.Maxrss,
			time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), time.Since(start).Seconds())
		if f, ferr := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); ferr == nil {
			_, _ = f.WriteString(line)
			_ = f.Close()
		}
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(1)
	}
}
