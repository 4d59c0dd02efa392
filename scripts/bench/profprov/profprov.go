// Command profprov is the provider binary (the same code as the repository's main.go) with profiling
// added, for scripts/bench.sh --profile. With RILL_BENCH_PROFILE_DIR set, each provider process
// writes <dir>/cpu-<pid>.pprof (CPU profile of its whole life) and <dir>/rusage-<pid>.txt (its user
// and system CPU seconds and wall time) when Terraform shuts it down.
//
//	CGO_ENABLED=0 go build -trimpath -o /tmp/prov/terraform-provider-rill ./scripts/bench/profprov
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
)

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	start := time.Now()
	dir := os.Getenv("RILL_BENCH_PROFILE_DIR")
	var prof *os.File
	if dir != "" {
		var err error
		if prof, err = os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid()))); err == nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				log.Printf("profprov: %v", err)
			}
		}
	}

	err := providerserver.Serve(context.Background(), provider.New("bench"), providerserver.ServeOpts{
		Address: "registry.terraform.io/rill-provisioner/rill",
		Debug:   debug,
	})
	provider.CloseAll()

	if prof != nil {
		pprof.StopCPUProfile()
		_ = prof.Close()
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("rusage-%d.txt", os.Getpid())),
			[]byte(fmt.Sprintf("wall=%.3f user=%.3f sys=%.3f\n", time.Since(start).Seconds(),
				time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds())), 0o644)
	}
	if err != nil {
		log.Fatal(err.Error())
	}
}
