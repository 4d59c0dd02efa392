// Command mutate runs the curated mutants of internal/mutate (`make mutate`): each applied alone to a
// scratch copy of the tree, with the tests named for it. It prints a table (mutant, killed, by which
// test) and exits 1 when any mutant survives or cannot be judged.
//
//	go run ./tools/mutate [-run regexp] [-skip regexp] [-baseline=false] [-timeout 20m]
//
// Acceptance checks need TF_ACC_TERRAFORM_PATH (the Makefile sets it); the Kubernetes and PostgreSQL
// ones start the local control plane and PostgreSQL as the tests always do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/mutate"
)

func main() {
	run := flag.String("run", "", "only mutants whose name matches this regexp")
	skip := flag.String("skip", "", "leave out mutants whose name matches this regexp")
	baseline := flag.Bool("baseline", true, "run every check once without mutants first")
	timeout := flag.Duration("timeout", 20*time.Minute, "timeout of each go test run")
	root := flag.String("root", ".", "repository root (copied, never changed)")
	flag.Parse()

	only, err := regexp.Compile(*run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	leaveOut, err := regexp.Compile(*skip)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mutants []mutate.Mutant
	for _, m := range mutate.Mutants {
		if only.MatchString(m.Name) && (*skip == "" || !leaveOut.MatchString(m.Name)) {
			mutants = append(mutants, m)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	results, err := mutate.Run(ctx, mutate.Options{Root: *root, Timeout: *timeout, Log: os.Stderr, Baseline: *baseline}, mutants)
	fmt.Print(mutate.Table(results))
	fmt.Printf("\n%d mutant(s) in %s\n", len(results), time.Since(start).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if s := mutate.Survivors(results); len(s) > 0 {
		fmt.Fprintf(os.Stderr, "%d mutant(s) not killed\n", len(s))
		os.Exit(1)
	}
}
