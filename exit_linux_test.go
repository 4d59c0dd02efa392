//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// exitTestRole names the part the test binary plays in TestAProviderWhoseTerraformIsGoneClosesAndExits.
const exitTestRole = "RILL_EXIT_TEST_ROLE"

// runExitTestRole plays the role exitTestRole names, if any, and exits; it returns when there is none.
//   - "reaper": the test's stand-in for init. It becomes a child subreaper (Linux), so that the
//     provider, orphaned below, is re-parented to it and it can wait for it; it runs the "terraform"
//     role, then prints the provider's exit status.
//   - "terraform": starts the provider as Terraform does (go-plugin's handshake cookie, its stdout and
//     stderr on pipes), reads the handshake line (the provider serves), prints the provider's PID and
//     dies without a word, as a killed terraform: the provider's pipes now have no reader.
func runExitTestRole() {
	switch os.Getenv(exitTestRole) {
	case "reaper":
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			fmt.Println("error: prctl:", errno)
			os.Exit(2)
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), exitTestRole+"=terraform")
		out, err := cmd.Output()
		pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil || perr != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			fmt.Printf("error: the terraform role: %v %v %q; its stderr: %s\n", err, perr, out, stderr)
			os.Exit(2)
		}
		var status syscall.WaitStatus
		done := make(chan error, 1)
		go func() { _, err := syscall.Wait4(pid, &status, 0, nil); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				fmt.Println("error: wait4:", err)
				os.Exit(2)
			}
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			fmt.Println("error: the provider still ran 30s after terraform was gone")
			os.Exit(2)
		}
		switch {
		case status.Signaled():
			fmt.Println("signal:", status.Signal())
		default:
			fmt.Println("exit:", status.ExitStatus())
		}
		os.Exit(0)
	case "terraform":
		cmd := exec.Command(os.Getenv("RILL_EXIT_TEST_PROVIDER"))
		// The handshake cookie of terraform-plugin-go's tf6server: without it the binary refuses to serve.
		cmd.Env = append(os.Environ(), "TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2")
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			_, err = cmd.StderrPipe()
		}
		if err == nil {
			err = cmd.Start()
		}
		if err == nil {
			_, err = bufio.NewReader(stdout).ReadString('\n')
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
}

// A provider whose Terraform is gone (kill -9) closes its ledgers, removes its socket file and exits
// with status 1 within about a second (exitWhenTerraformIsGone). Its stderr is a pipe nobody reads any more: before, the
// handler's first log line killed it with SIGPIPE, so the ledgers were never closed, and a PostgreSQL
// ledger's sessions were left to the server to notice (found with strace by a walkthrough).
func TestAProviderWhoseTerraformIsGoneClosesAndExits(t *testing.T) {
	// The provider's Unix socket: a path must fit in 108 bytes, which t.TempDir's (or a long TMPDIR)
	// may not.
	sockets, err := os.MkdirTemp("/tmp", "rx") //nolint:usetesting // t.TempDir's path is too long for a socket (above)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockets) })
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), exitTestRole+"=reaper", "RILL_EXIT_TEST_PROVIDER="+providerBinary(t), "PLUGIN_UNIX_SOCKET_DIR="+sockets)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reaper: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "exit: 1" {
		t.Fatalf("the provider whose terraform was gone ended with %q; want \"exit: 1\" (it closed its ledgers, then exited)", got)
	}
	// go-plugin's socket file goes with it: each killed terraform used to leave one in /tmp.
	if left, _ := filepath.Glob(filepath.Join(sockets, "*")); len(left) > 0 {
		t.Errorf("the provider left %v in its PLUGIN_UNIX_SOCKET_DIR", left)
	}
}
