package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// The test servers run on Unix systems (PostgreSQL's cluster as another user, shell scripts that
// start the control plane); on Windows this package only compiles, so that `go vet ./...` covers
// the rest of the repository there. A child runs as this user, and is killed to stop it: Windows has
// no signal to ask it to.

// Credential is the user and group a child runs as (Options.Credential), which Windows cannot do:
// Start fails when it is set.
type Credential struct {
	Uid, Gid uint32
	Groups   []uint32
}

var errCredential = errors.New("running a child as another user is not supported on Windows")

func sysProcAttr(cred *Credential, _ bool, _ syscall.Signal) (*syscall.SysProcAttr, error) {
	if cred != nil {
		return nil, errCredential
	}
	return nil, nil
}

// RunAs fails unless cred is nil: see Credential.
func RunAs(_ *exec.Cmd, cred *Credential) error {
	if cred != nil {
		return errCredential
	}
	return nil
}

func (p *Process) signal(syscall.Signal) { _ = p.cmd.Process.Kill() }

// DieWithParent does nothing here: there is no parent-death signal.
func DieWithParent(*exec.Cmd) {}

// OwnProcessGroup does nothing here.
func OwnProcessGroup(*exec.Cmd) {}

// exists reports whether process pid exists.
func exists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
