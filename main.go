// Command terraform-provider-rill serves the rill Terraform provider.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/gctune"
	"github.com/rill-provisioner/terraform-provider-rill/internal/lifeline"
	"github.com/rill-provisioner/terraform-provider-rill/internal/pluginserver"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/rillmigrate"
)

// Run "go generate" to format example Terraform files and regenerate docs/ (see GNUmakefile).
//go:generate terraform fmt -recursive ./examples/
//go:generate sh ./scripts/docs.sh

// Set by the release build (.goreleaser.yml: -ldflags "-X main.version=... -X main.commit=...").
// version is what the provider reports to Terraform; both are printed by -version.
var (
	version = "dev"
	commit  = "none"
)

func main() {
	// A one-time migration from Rill's admin service, run by hand (Terraform starts the plugin without
	// arguments); see docs/guides/migrating-from-rill-admin.md.
	if len(os.Args) > 1 && os.Args[1] == rillmigrate.Command {
		os.Exit(rillmigrate.Main(os.Args[2:], os.Stdout, os.Stderr))
	}
	var debug, printVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.BoolVar(&printVersion, "version", false, "print the version and commit, then exit")
	flag.Parse()
	if printVersion {
		fmt.Printf("terraform-provider-rill %s (commit %s)\n", version, commit)
		return
	}
	quietLogsUnlessAsked()
	// Fewer collections than Go's default, within a soft memory limit (see internal/gctune).
	gctune.Apply()

	if !debug {
		exitWhenTerraformIsGone()
	}
	// providerserver.Serve, with each per-resource RPC's context released when it returns (see
	// internal/pluginserver: the framework keeps them otherwise).
	err := pluginserver.Serve(provider.Address, provider.New(version), debug)
	// Close provisioners and ledger connections once Terraform is done with the plugin.
	provider.CloseAll()
	if err != nil {
		log.Fatal(err.Error())
	}
}

// exitWhenTerraformIsGone ends the process within about a second of losing the Terraform process that
// started it (killed, or crashed): nothing else would, and an orphan holds ledger connections and
// locks. Ledgers get two seconds to close (a transaction in flight is rolled back either way).
func exitWhenTerraformIsGone() {
	if os.Getenv("TF_PLUGIN_MAGIC_COOKIE") == "" || !lifeline.Supported() {
		return // not started by Terraform as a plugin
	}
	// Our stdout and stderr are pipes to Terraform: once it is gone, Go kills a process that writes to
	// fd 1 or 2 with SIGPIPE, unless the signal is ignored. Without this, the log line below (or any
	// line before the watch noticed) ended the process before the ledgers were closed; ignored, such a
	// write fails, and the watch ends the process as below.
	signal.Ignore(syscall.SIGPIPE)
	lifeline.Watch(time.Second, func() {
		log.Print("[ERROR] the Terraform process that started this provider is gone; exiting")
		closed := make(chan struct{})
		go func() {
			provider.CloseAll()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
		}
		lifeline.RemoveListeningSockets() // go-plugin's socket file, which its server never stopped will not remove
		os.Exit(1)
	})
}

// quietLogsUnlessAsked switches the plugin SDK's and the provider's loggers off when nobody asked for
// logs. Without TF_LOG, Terraform discards whatever a provider writes to its log, but the SDK would
// still format a trace line for every RPC and send it over: measured in BENCHMARKS.md, that was about
// 40% of an apply of 200 runtimes. With TF_LOG (or TF_LOG_PROVIDER, or a variable set explicitly)
// nothing changes.
func quietLogsUnlessAsked() {
	for _, asked := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_CORE"} {
		if os.Getenv(asked) != "" {
			return
		}
	}
	for _, k := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_RILL"} {
		if _, set := os.LookupEnv(k); !set {
			_ = os.Setenv(k, "off")
		}
	}
}
