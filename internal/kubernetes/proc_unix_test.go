//go:build unix

package kubernetes

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup runs cmd in its own process group, killed as a whole when its context ends and
// sent SIGKILL when the test binary dies (Linux), so no control plane build outlives the tests.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
