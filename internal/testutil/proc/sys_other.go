//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// The test servers run on Linux (PostgreSQL's cluster as another user, the control plane script
// reads /proc); elsewhere the children are plain, without a parent-death signal.

func sysProcAttr(cred *Credential, group bool, _ syscall.Signal) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: group}, nil
}

// DieWithParent does nothing here: there is no parent-death signal.
func DieWithParent(*exec.Cmd) {}

// OwnProcessGroup does nothing here.
func OwnProcessGroup(*exec.Cmd) {}
