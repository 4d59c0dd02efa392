//go:build linux

package k8stest

import (
	"os/exec"
	"syscall"
)

// dieWithParent runs cmd (a build or a start) in its own process group, killed as a whole when
// its context ends and sent SIGKILL when the test binary dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// ownProcessGroup runs cmd in a process group of its own, so that signals sent to the test's
// process group (Ctrl-C) do not reach it; it outlives the test binary on purpose.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
