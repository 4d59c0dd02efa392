package lifeline

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const helperEnv = "LIFELINE_TEST_ROLE"

// TestMain lets the test binary play the two other processes of the scenario: a "parent" that starts
// a "child" and dies, and the child that watches its parent.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "parent":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=child")
		ready, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err == nil { // the child is watching once it says so
			_, err = bufio.NewReader(ready).ReadString('\n')
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0) // dies without waiting: the child is orphaned, as when terraform is killed
	case "child":
		Watch(50*time.Millisecond, func() {
			_ = os.WriteFile(os.Getenv("LIFELINE_TEST_MARK"), []byte("lost"), 0o644)
			os.Exit(0)
		})
		fmt.Println("watching")
		time.Sleep(time.Minute) // a provider with nothing to do
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// A process whose parent dies learns it within a few intervals and calls onLost.
func TestOrphanSeesItsParentGo(t *testing.T) {
	if !Supported() {
		t.Skip("parent death is not observable here")
	}
	mark := filepath.Join(t.TempDir(), "lost")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=parent", "LIFELINE_TEST_MARK="+mark)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("parent helper: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("parent helper printed %q", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(mark); err == nil && string(b) == "lost" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	t.Fatalf("the orphaned child %d did not notice its parent's death within 10s", pid)
}

// A watch that is stopped never calls onLost, even when the parent then changes; the same watch left
// running sees the change (the control: without it, this test would pass with a watch that never looks).
func TestStopEndsTheWatch(t *testing.T) {
	var ppid atomic.Int64
	ppid.Store(1000)
	getppid = func() int { return int(ppid.Load()) }
	t.Cleanup(func() { getppid = os.Getppid })

	stopped := make(chan struct{}, 1)
	stop := Watch(time.Millisecond, func() { stopped <- struct{}{} })
	running := make(chan struct{}, 1)
	stopRunning := Watch(time.Millisecond, func() { running <- struct{}{} })
	defer stopRunning()
	stop()
	stop()           // idempotent
	ppid.Store(1001) // the parent "dies"

	<-running // the control sees it (go test -timeout catches a watch that never does)
	// Twenty intervals more: a watch that was not stopped would have called onLost by now, as the
	// control just did.
	time.Sleep(20 * time.Millisecond)
	select {
	case <-stopped:
		t.Fatal("onLost called after stop")
	default:
	}
}
