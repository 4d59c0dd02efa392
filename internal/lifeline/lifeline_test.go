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
	case "late-parent":
		// Starts the child and dies at once, before the child (which takes its time to start, as a
		// provider's package initialisation does) has begun to watch: its first parent ID is already
		// the one it was orphaned to.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=late-child", fmt.Sprintf("LIFELINE_TEST_PARENT=%d", os.Getpid()))
		if _, err := cmd.StdoutPipe(); err != nil { // Terraform reads a plugin's stdout
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	case "late-child":
		for strconv.Itoa(os.Getppid()) == os.Getenv("LIFELINE_TEST_PARENT") { // until it is re-parented
			time.Sleep(5 * time.Millisecond)
		}
		// It says nothing on its stdout: nobody reads it (the provider ignores SIGPIPE for that).
		Watch(50*time.Millisecond, func() {
			_ = os.WriteFile(os.Getenv("LIFELINE_TEST_MARK"), []byte("lost"), 0o644)
			os.Exit(0)
		})
		time.Sleep(time.Minute)
		os.Exit(3)
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
	orphanCallsOnLost(t, "parent")
}

// orphanCallsOnLost runs the test binary as role, a parent that starts a watching child and dies,
// and waits (10 s at most) for the orphaned child to call onLost.
func orphanCallsOnLost(t *testing.T, role string) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "lost")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "LIFELINE_TEST_MARK="+mark)
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

// A process orphaned before it began to watch (Terraform killed while the provider was starting)
// reads the new parent's ID as its first: only its standard output, a pipe whose reader died with
// Terraform, tells it, and it calls onLost all the same.
func TestOrphanedBeforeItWatchesSeesItsStdoutUnread(t *testing.T) {
	if !Supported() {
		t.Skip("parent death is not observable here")
	}
	orphanCallsOnLost(t, "late-parent")
}

// A pipe is unread once its reading end is closed; a file that is no pipe is never reported.
func TestReaderGoneSeesAPipesReaderClose(t *testing.T) {
	if !Supported() {
		t.Skip("parent death is not observable here")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	unread := readerGone(w)
	if unread() {
		t.Fatal("a pipe whose reader is open reported unread")
	}
	_ = r.Close()
	if !unread() {
		t.Fatal("a pipe whose reader is closed not reported unread")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if readerGone(f)() {
		t.Fatal("a regular file reported unread")
	}
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
