// Package proc supervises the server processes tests start (PostgreSQL, chDB, the scripts that run
// a Kubernetes control plane): one child with its output in a log file, a wait for readiness bounded
// by a deadline whose error shows the end of that log, a stop that asks (SIGTERM or the server's own
// signal) and then insists (SIGKILL), and a child that dies with the test binary however the binary
// dies (on Linux, a parent-death signal).
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Options describe a child process.
type Options struct {
	// Name says what the process is in errors ("postgres", "chDB").
	Name string
	// Path and Args are the program and its arguments (Args without the program).
	Path string
	Args []string
	// Dir is the working directory; Env the environment (nil: this process's).
	Dir string
	Env []string
	// Log is the file that receives the child's stdout and stderr (created or truncated).
	Log string
	// Credential runs the child as another user (nil: as this process).
	Credential *Credential
	// Group runs the child in a process group of its own, and signals the whole group: for children
	// that start children of their own.
	Group bool
	// StopSignal asks the child to stop (default SIGTERM); after StopGrace (default 10 s) Stop sends
	// SIGKILL.
	StopSignal syscall.Signal
	StopGrace  time.Duration
	// DeathSignal is what the child gets when the test binary dies (default SIGKILL; Linux only).
	DeathSignal syscall.Signal
}

// Process is a running (or exited) child.
type Process struct {
	opts    Options
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// Start starts the child. It returns once the child runs, or with the error that kept it from
// starting.
func Start(o Options) (*Process, error) {
	if o.StopSignal == 0 {
		o.StopSignal = syscall.SIGTERM
	}
	if o.StopGrace == 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.DeathSignal == 0 {
		o.DeathSignal = syscall.SIGKILL
	}
	log, err := os.OpenFile(o.Log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", o.Name, err)
	}
	defer func() { _ = log.Close() }() // the child has its own copy
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr, err = sysProcAttr(o.Credential, o.Group, o.DeathSignal); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	p := &Process{opts: o, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that started the child exits: this goroutine
		// stays locked to its thread (never unlocked, so the thread ends with it) until the child is
		// gone, so the signal fires only when the test binary itself dies.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(p.exited)
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", o.Name, o.Path, err)
	}
	return p, nil
}

// Pid is the child's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitReady calls ready every interval until it returns nil. It fails, with the end of the log, when
// the child exits first, or when ctx ends (with ready's last error): so a caller's deadline bounds
// the wait, and the error says what it waited for and why the child did not get there. The child is
// left running on error; the caller stops it.
func (p *Process) WaitReady(ctx context.Context, interval time.Duration, ready func(context.Context) error) error {
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited while starting (%v); last lines of its log %s:\n%s", p.opts.Name, p.waitErr, p.opts.Log, p.LogTail(4000))
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready in time (%v; last check: %v); last lines of its log %s:\n%s", p.opts.Name, ctx.Err(), err, p.opts.Log, p.LogTail(4000))
		case <-time.After(interval):
		}
	}
}

// Stop sends the stop signal, waits StopGrace for the child to exit, then kills it and waits. It
// returns at once for a child that has exited, and may be called more than once.
func (p *Process) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.signal(p.opts.StopSignal)
	select {
	case <-p.exited:
	case <-time.After(p.opts.StopGrace):
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}

// Kill kills the child at once and waits for it.
func (p *Process) Kill() {
	p.signal(syscall.SIGKILL)
	<-p.exited
}

// LogTail returns about the last n bytes of the child's log.
func (p *Process) LogTail(n int) string { return FileTail(p.opts.Log, n) }

// FileTail returns about the last n bytes of a file, or why it cannot be read.
func FileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return Tail(string(b), n)
}

// Tail returns the last n bytes of s, marked as cut when it is.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return strings.TrimRight(s, "\n")
}

// RepoRoot is the checkout the tests run in: the nearest directory at or above the working directory
// (go test runs in the package's) with a go.mod. The scripts that install and start test servers,
// and the provider's own main package, are found from it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// KillPID kills the process pid at once (SIGKILL on Unix systems): a process this test did not
// start itself, such as the provider Terraform runs.
func KillPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
