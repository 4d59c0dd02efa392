//go:build !linux

package k8stest

import "os/exec"

// scripts/controlplane.sh runs on Linux only (it reads /proc); elsewhere start fails and the
// tests are skipped, so plain commands do.

func dieWithParent(*exec.Cmd) {}

func ownProcessGroup(*exec.Cmd) {}
