// Command pgcluster runs a throwaway PostgreSQL cluster for scripts/bench.sh, through the same
// internal/testutil/pgtest code the tests use (initdb + postgres as a direct child; as root the
// server runs as the "postgres" OS user; fsync off). It creates -databases empty databases, writes
// their DSNs (one a line) to -out, then a line "ready", and keeps the cluster up until it gets
// SIGTERM/SIGINT or its parent process goes away; then it stops the cluster and removes its files.
//
//	go build -o /tmp/pgcluster ./scripts/bench/pgcluster
//	/tmp/pgcluster -databases 6 -out /tmp/dsns & ...; kill -TERM $!
//
// Exit status 3 means PostgreSQL is not installed (pgtest.ErrUnavailable).
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with pgtest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

func main() {
	n := flag.Int("databases", 1, "number of empty databases to create")
	out := flag.String("out", "", "file to write the DSNs to (default stdout)")
	flag.Parse()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	ppid := os.Getppid()

	c, err := pgtest.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		if errors.Is(err, pgtest.ErrUnavailable) {
			os.Exit(3)
		}
		os.Exit(1)
	}
	code := 0
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgcluster: stop:", err)
		}
		os.Exit(code)
	}()

	var dsns []string
	for i := 0; i < *n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		dsn, _, err := c.CreateDatabase(ctx, fmt.Sprintf("bench_%d", i))
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pgcluster:", err)
			code = 1
			return
		}
		dsns = append(dsns, dsn)
	}
	text := strings.Join(dsns, "\n") + "\nready\n"
	if *out == "" {
		fmt.Print(text)
	} else if err := os.WriteFile(*out+".tmp", []byte(text), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		code = 1
		return
	} else if err := os.Rename(*out+".tmp", *out); err != nil {
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		code = 1
		return
	}

	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sigs:
			return
		case <-tick.C:
			if os.Getppid() != ppid { // the script died without stopping us
				return
			}
		}
	}
}
