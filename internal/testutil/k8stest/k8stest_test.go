package k8stest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A control plane that fails to start must fail the caller with the reason and the components'
// logs. It used to deadlock instead: startPrivate, running under get's lock, called Stop, which
// takes the same lock, and the test binary hung until go test's -timeout with no message.
func TestFailedStartReportsTheErrorAndTheLogsInsteadOfHanging(t *testing.T) {
	dir := t.TempDir()
	// Stands in for scripts/controlplane.sh: builds nothing, and fails to start after writing
	// component logs the way the real script does (RILL_CONTROLPLANE_DIR/logs/NAME.log).
	script := filepath.Join(dir, "controlplane.sh")
	body := `#!/bin/sh
case "$1" in
build) exit 0 ;;
start)
	mkdir -p "$RILL_CONTROLPLANE_DIR/logs"
	echo "etcd is serving" >"$RILL_CONTROLPLANE_DIR/logs/etcd.log"
	: >"$RILL_CONTROLPLANE_DIR/logs/kube-apiserver.log"
	echo "controlplane: kube-apiserver exited" >&2
	exit 1 ;;
stop) exit 0 ;;
esac
exit 2
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvKubeconfig, "")
	saved := scriptFinder
	scriptFinder = func() (string, error) { return script, nil }
	t.Cleanup(func() {
		scriptFinder = saved
		if mu.TryLock() { // not after a deadlock: the test has failed already
			tried, cluster, startErr = false, nil, nil
			mu.Unlock()
		}
	})

	done := make(chan error, 1)
	go func() {
		_, err := get()
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("get did not return within a minute of a failed start: deadlock")
	}
	if err == nil {
		t.Fatal("get returned no error for a start that failed")
	}
	for _, want := range []string{"kube-apiserver exited", "last lines of etcd.log:\netcd is serving", "kube-apiserver.log: empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	// A second caller gets the same error at once, and Stop returns.
	if _, err2 := get(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second get: %v, want the first start's error", err2)
	}
	Stop()
}

// An exit handler's StopAtExit stops a started control plane and waits for the watchdog, which
// removes the state dir: a CI job that ends with the test binary finds nothing left (it used to
// find the state dir of internal/resources' control plane, whose TestMain did not wait). During a
// start, it gives up after exitLockWait instead of waiting for the start to end.
func TestStopAtExitWaitsForTheWatchdogButNotForAStartInProgress(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "controlplane.sh")
	body := `#!/bin/sh
case "$1" in
build|stop) exit 0 ;;
start)
	mkdir -p "$RILL_CONTROLPLANE_DIR"
	: >"$RILL_CONTROLPLANE_DIR/kubeconfig"
	echo "$RILL_CONTROLPLANE_DIR/kubeconfig"
	exit 0 ;;
esac
exit 2
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvKubeconfig, "")
	savedFinder, savedWait := scriptFinder, exitLockWait
	scriptFinder = func() (string, error) { return script, nil }
	t.Cleanup(func() {
		scriptFinder, exitLockWait = savedFinder, savedWait
		tried, cluster, startErr = false, nil, nil
	})

	c, err := get()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(filepath.Dir(c.Kubeconfig)) // <base>/controlplane/kubeconfig
	if _, err := os.Stat(base); err != nil {
		t.Fatalf("state dir after the start: %v", err)
	}
	StopAtExit()
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("state dir %s after StopAtExit: %v, want it removed", base, err)
	}

	exitLockWait = 200 * time.Millisecond
	mu.Lock() // a start in progress
	start := time.Now()
	StopAtExit()
	waited := time.Since(start)
	mu.Unlock()
	if waited < exitLockWait || waited > exitLockWait+5*time.Second {
		t.Errorf("StopAtExit during a start returned after %s, want about %s", waited, exitLockWait)
	}
}
