// Command freeport prints N free loopback TCP ports (default 1), distinct, one a line: the ports
// scripts/controlplane.sh starts its components on (see package freeport for how they are picked).
//
//	go run ./internal/testutil/freeport/cmd/freeport 6
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
)

func main() {
	n := 1
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil || v < 1 || len(os.Args) > 2 {
			fmt.Fprintln(os.Stderr, "usage: freeport [N]")
			os.Exit(2)
		}
		n = v
	}
	for i := 0; i < n; i++ {
		p, err := freeport.Get()
		if err != nil {
			fmt.Fprintln(os.Stderr, "freeport:", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
