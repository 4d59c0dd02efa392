//go:build unix && !linux

package kubernetes

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
