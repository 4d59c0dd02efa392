// Command terraform-provider-rill serves the rill Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
)

// Run "go generate" to format example Terraform files and regenerate docs/ (see GNUmakefile).
//go:generate terraform fmt -recursive ./examples/
//go:generate sh ./scripts/docs.sh

// version is set by the release build (goreleaser ldflags).
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/rill-provisioner/rill",
		Debug:   debug,
	})
	// Close provisioners and ledger connections once Terraform is done with the plugin.
	provider.CloseAll()
	if err != nil {
		log.Fatal(err.Error())
	}
}
