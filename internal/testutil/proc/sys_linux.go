//go:build linux

package proc

import (
	"os/exec"
	"syscall"
)

func sysProcAttr(cred *Credential, group bool, death syscall.Signal) (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: group, Pdeathsig: death}, nil
}

// DieWithParent runs cmd (a command run to its end, such as a build) in its own process group,
// killed as a whole when its context ends, and sent SIGKILL when the test binary dies.
func DieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// OwnProcessGroup runs cmd in a process group of its own, so that signals sent to the test's
// process group (Ctrl-C) do not reach it: for a watchdog that outlives the test binary on purpose.
func OwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
