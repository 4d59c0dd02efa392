//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary start a child and exit without stopping it.
const helperEnv = "PROC_TEST_ORPHAN_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		p, err := Start(Options{Name: "sleep", Path: "sleep", Args: []string{"600"}, Log: filepath.Join(dir, "sleep.log")})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(3)
		}
		fmt.Println(p.Pid())
		os.Exit(0) // no Stop: the parent-death signal must take the child down
	}
	os.Exit(m.Run())
}

func sh(t *testing.T, script string, o Options) *Process {
	t.Helper()
	o.Name, o.Path, o.Args = "sh", "sh", []string{"-c", script}
	if o.Log == "" {
		o.Log = filepath.Join(t.TempDir(), "sh.log")
	}
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

var errNotYet = errors.New("not yet")

func TestWaitReadyReturnsOnceReady(t *testing.T) {
	p := sh(t, "sleep 600", Options{})
	calls := 0
	err := p.WaitReady(context.Background(), time.Millisecond, func(context.Context) error {
		if calls++; calls < 3 {
			return errNotYet
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestWaitReadyReportsAnExitWithTheLog(t *testing.T) {
	p := sh(t, "echo 'FATAL: could not bind'; exit 3", Options{})
	err := p.WaitReady(context.Background(), 10*time.Millisecond, func(context.Context) error { return errNotYet })
	if err == nil || !strings.Contains(err.Error(), "sh exited while starting (exit status 3)") || !strings.Contains(err.Error(), "FATAL: could not bind") {
		t.Fatalf("got %v", err)
	}
}

func TestWaitReadyIsBoundedByTheContext(t *testing.T) {
	p := sh(t, "echo listening soon; sleep 600", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.WaitReady(ctx, 10*time.Millisecond, func(context.Context) error { return errNotYet })
	if err == nil || !strings.Contains(err.Error(), "sh was not ready in time") || !strings.Contains(err.Error(), "last check: not yet") ||
		!strings.Contains(err.Error(), "listening soon") {
		t.Fatalf("got %v", err)
	}
}

// A child that ignores the stop signal is killed after the grace period, with its own children when
// it runs in a group.
func TestStopKillsWhatIgnoresTheStopSignal(t *testing.T) {
	dir := t.TempDir()
	p := sh(t, `trap "" TERM; sleep 600 & echo $! >`+filepath.Join(dir, "child")+`; wait`, Options{Group: true, StopGrace: 200 * time.Millisecond})
	var child int
	if err := p.WaitReady(context.Background(), 10*time.Millisecond, func(context.Context) error {
		b, err := os.ReadFile(filepath.Join(dir, "child"))
		if err == nil {
			child, err = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the child exited")
	}
	if !GoneWithin(child, 10*time.Second) {
		t.Fatalf("the child's own child %d still runs", child)
	}
	p.Stop() // again: returns at once
}

func TestChildDiesWithTheTestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper printed %q", out)
	}
	if !GoneWithin(pid, 10*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child %d outlived the test binary that started it", pid)
	}
}

func TestTail(t *testing.T) {
	if got := Tail("abcdef\n", 3); got != "…ef\n" {
		t.Errorf("Tail cut: %q", got)
	}
	if got := Tail("abc\n", 10); got != "abc" {
		t.Errorf("Tail whole: %q", got)
	}
	if got := FileTail(filepath.Join(t.TempDir(), "missing"), 10); !strings.HasPrefix(got, "(no log: ") {
		t.Errorf("FileTail of a missing file: %q", got)
	}
}

func TestRepoRootIsTheCheckoutAboveThePackage(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"go.mod", "scripts/controlplane.sh", "internal/testutil/proc/proc.go"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("RepoRoot %s: %v", root, err)
		}
	}
	t.Chdir(t.TempDir())
	if root, err := RepoRoot(); err == nil {
		t.Errorf("RepoRoot outside any module: %s", root)
	}
}
