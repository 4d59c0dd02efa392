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
