//go:build unix

// Command profprov is the provider binary (the same code as the repository's main.go, with the same
// garbage-collector settings, internal/gctune) with profiling added, for scripts/bench.sh --profile.
// With RILL_BENCH_PROFILE_DIR set, each provider process writes <dir>/cpu-<pid>.pprof (CPU profile of
// its whole life), <dir>/heap-<pid>.pprof (the heap profile taken when the heap in use was largest,
// sampled every 200 ms) and <dir>/rusage-<pid>.txt (its user and system CPU seconds, wall time and
// peak RSS) when Terraform shuts it down.
//
//	CGO_ENABLED=0 go build -trimpath -o /tmp/prov/terraform-provider-rill ./scripts/bench/profprov
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provider
// (on Unix systems: it reads the kernel's rusage).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/gctune"
	"github.com/rill-provisioner/terraform-provider-rill/internal/pluginserver"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
)

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	gctune.Apply()

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
		go sampleHeap(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", os.Getpid())))
	}

	err := pluginserver.Serve(provider.Address, provider.New("bench"), debug)
	provider.CloseAll()

	if prof != nil {
		pprof.StopCPUProfile()
		_ = prof.Close()
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("rusage-%d.txt", os.Getpid())),
			[]byte(fmt.Sprintf("wall=%.3f user=%.3f sys=%.3f maxrss_kb=%d\n", time.Since(start).Seconds(),
				time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), ru.Maxrss)), 0o644)
	}
	if err != nil {
		log.Fatal(err.Error())
	}
}

// sampleHeap writes the heap profile to file whenever the heap in use is larger than at any earlier
// sample, so that the file shows what the process held at its peak.
func sampleHeap(file string) {
	var peak uint64
	for range time.Tick(200 * time.Millisecond) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= peak {
			continue
		}
		peak = ms.HeapInuse
		if f, err := os.Create(file); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
}
