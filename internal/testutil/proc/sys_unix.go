//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// Credential is the user and group a child runs as (Options.Credential).
type Credential = syscall.Credential

func (p *Process) signal(s syscall.Signal) {
	if p.opts.Group {
		if err := syscall.Kill(-p.cmd.Process.Pid, s); err == nil || !errors.Is(err, syscall.ESRCH) {
			return
		}
	}
	_ = p.cmd.Process.Signal(s)
}

// RunAs runs cmd as cred's user (nil: as this process), keeping the attributes DieWithParent or
// OwnProcessGroup set.
func RunAs(cmd *exec.Cmd, cred *Credential) error {
	if cred == nil {
		return nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = cred
	return nil
}

// exists reports whether process pid exists (a zombie included), another user's too.
func exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
