// Package k8stest gives tests a Kubernetes API server, started at most once per test binary.
//
// Typical use, in a test that needs a cluster:
//
//	c := k8stest.Get(t) // skips (or, with CI=true, fails) when no cluster can be had
//	cfg, _ := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
//
// Where the cluster comes from:
//   - RILL_TEST_KUBECONFIG=<path>: that cluster. Nothing is started or stopped. RILL_TEST_CHAOS=1
//     says kwok's chaos stages are loaded; RILL_TEST_AUDIT_LOG=<path> names its API server's audit
//     log, if the tests may read it.
//   - Otherwise, on the first Get, a private control plane (etcd, kube-apiserver,
//     kube-controller-manager, kube-scheduler and kwok, see scripts/controlplane.sh) is built
//     (about 12 minutes cold on 2 cores; seconds when cached) and started in a temporary state
//     dir, with kwok's chaos stages and an audit log of every request of the user "admin" (the
//     user of the kubeconfig tests get) at level Metadata. Later calls reuse it.
//   - -short, or no scripts/controlplane.sh, or a build or start that fails: the test is skipped
//     with the reason, or fails when the CI environment variable is "true" (unless -short).
//
// The private control plane never outlives the test binary: a watchdog process (its own process
// group, so Ctrl-C and kill of the test's process group do not reach it) waits for a pipe the
// test binary holds and stops the control plane, then removes the state dir, once that pipe
// closes: when Stop is called, or when the binary exits in any way (end of the tests, os.Exit
// in a TestMain, -timeout panic, SIGKILL). TestMain calls Stop after m.Run (StopAtExit from an
// exit handler) to wait for it: without that it happens just after the binary exits, when `go test`
// may have returned, and a CI job that ends then kills the watchdog half-way, leaving the state dir.
package k8stest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// Environment variables that configure k8stest.
const (
	EnvKubeconfig = "RILL_TEST_KUBECONFIG"
	EnvChaos      = "RILL_TEST_CHAOS"
	EnvAuditLog   = "RILL_TEST_AUDIT_LOG"
)

// AuditUser is the user of the private control plane's kubeconfig, whose requests its audit log
// records.
const AuditUser = "admin"

// Cluster is the API server tests talk to.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig for a user in system:masters.
	Kubeconfig string
	// Chaos is set when kwok's chaos stages are loaded (see tools/controlplane/README.md).
	Chaos bool
	// AuditLog is the path of the API server's JSON audit log, "" when unknown. For the private
	// control plane it records every request of AuditUser (stage ResponseComplete, level Metadata)
	// and nothing else, written synchronously (--audit-log-mode=blocking).
	AuditLog string
	// Private is set when this test binary started the cluster (and will stop it).
	Private bool
}

var (
	processStart = time.Now()

	mu       sync.Mutex // held while starting, so concurrent callers wait for the one start
	tried    bool
	cluster  *Cluster
	startErr error

	// The watchdog: closing pipeW makes it stop the control plane.
	pipeW    *os.File
	watchdog *exec.Cmd
)

// Get returns the cluster, starting the private control plane on the first call. It skips the
// test when no cluster can be had (fails it when CI=true).
func Get(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kubernetes API server: skipped in -short mode")
	}
	c, err := get()
	if err != nil {
		ci.Skip(t, "no Kubernetes cluster: %v", err)
	}
	return c
}

func get() (*Cluster, error) {
	mu.Lock()
	defer mu.Unlock()
	if !tried {
		tried = true
		cluster, startErr = resolve()
	}
	return cluster, startErr
}

func resolve() (*Cluster, error) {
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		if _, err := os.Stat(kc); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKubeconfig, err)
		}
		return &Cluster{Kubeconfig: kc, Chaos: os.Getenv(EnvChaos) == "1", AuditLog: os.Getenv(EnvAuditLog)}, nil
	}
	script, err := scriptFinder()
	if err != nil {
		return nil, err
	}
	return startPrivate(script)
}

// scriptFinder finds scripts/controlplane.sh; a variable so that a test can hand in a script that
// fails.
var scriptFinder = findScript

// findScript finds scripts/controlplane.sh in the checkout.
func findScript() (string, error) {
	root, err := proc.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%s is not set and %w", EnvKubeconfig, err)
	}
	p := filepath.Join(root, "scripts", "controlplane.sh")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not set and %s does not exist", EnvKubeconfig, p)
	}
	return p, nil
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [` + AuditUser + `]
- level: None
`

func startPrivate(script string) (*Cluster, error) {
	base, err := os.MkdirTemp("", "rill-k8stest-")
	if err != nil {
		return nil, err
	}
	// The script wants its state dir empty or its own: the policy and the log live next to it.
	stateDir := filepath.Join(base, "controlplane")
	policy := filepath.Join(base, "audit-policy.yaml")
	auditLog := filepath.Join(base, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		_ = os.RemoveAll(base)
		return nil, err
	}
	env := append(os.Environ(), "RILL_CONTROLPLANE_DIR="+stateDir)

	run := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, args...)
		proc.DieWithParent(cmd)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("%s %s did not finish within %s (the first build of the binaries takes about 12 minutes on 2 cores: run scripts/controlplane.sh build beforehand, or raise go test's -timeout)",
					filepath.Base(script), strings.Join(args, " "), timeout.Round(time.Second))
			}
			return "", fmt.Errorf("%s %s: %v\n%s", filepath.Base(script), strings.Join(args, " "), err, proc.Tail(stderr.String(), 2000))
		}
		return strings.TrimSpace(stdout.String()), nil
	}

	t0 := time.Now()
	fmt.Fprintln(os.Stderr, "k8stest: building (or reusing) and starting the local control plane")
	if _, err := run(buildBudget(), "build"); err != nil {
		_ = os.RemoveAll(base)
		return nil, err
	}
	t1 := time.Now()
	// The watchdog first, so that even a test binary killed during start leaves nothing behind.
	if err := startWatchdog(script, env, base); err != nil {
		_ = os.RemoveAll(base)
		return nil, fmt.Errorf("starting the control plane's watchdog: %w", err)
	}
	out, err := run(10*time.Minute, "start", "--chaos", "--audit-policy", policy, "--audit-log", auditLog)
	if err != nil {
		// The logs go with the state dir once the watchdog stops the control plane: read them first.
		err = fmt.Errorf("%w%s", err, componentLogTails(filepath.Join(stateDir, "logs"), 15))
		stopLocked()
		return nil, err
	}
	lines := strings.Split(out, "\n")
	kubeconfig := strings.TrimSpace(lines[len(lines)-1])
	if _, err := os.Stat(kubeconfig); err != nil {
		stopLocked()
		return nil, fmt.Errorf("%s start printed %q, which is not a kubeconfig file", filepath.Base(script), kubeconfig)
	}
	fmt.Fprintf(os.Stderr, "k8stest: control plane ready (build check %s, start %s); state in %s\n",
		t1.Sub(t0).Round(100*time.Millisecond), time.Since(t1).Round(100*time.Millisecond), stateDir)
	return &Cluster{Kubeconfig: kubeconfig, Chaos: true, AuditLog: auditLog, Private: true}, nil
}

// startWatchdog starts `sh` reading a pipe whose only writer is this process: at EOF it stops the
// control plane and removes base.
func startWatchdog(script string, env []string, base string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", `cat >/dev/null; "$0" stop >/dev/null 2>&1; rm -rf "$1"`, script, base)
	cmd.Env = env
	cmd.Stdin = r // stdout and stderr: /dev/null, so that `go test` never waits for this process
	proc.OwnProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return err
	}
	_ = r.Close()
	pipeW, watchdog = w, cmd
	return nil
}

// Stop stops the private control plane, if one was started, and waits (up to two minutes) until
// it is stopped. The cluster cannot be used afterwards. It is safe to call more than once, and
// without a cluster.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	stopLocked()
}

// StopAtExit is Stop for exit handlers, which can run while the first Get is still starting the
// control plane (Ctrl-C during its 12-minute build): it waits at most exitLockWait for that start
// rather than until it ends, and leaves the control plane to the watchdog, which stops it once the
// binary exits.
func StopAtExit() {
	for deadline := time.Now().Add(exitLockWait); !mu.TryLock(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "k8stest: a control plane start is in progress; its watchdog stops it when this binary exits")
			return
		}
	}
	defer mu.Unlock()
	stopLocked()
}

// exitLockWait bounds StopAtExit's wait for a start in progress; a variable for its test.
var exitLockWait = 5 * time.Second

// stopLocked is Stop for callers that hold mu: startPrivate runs under it (get holds mu while the
// one start runs), so it must not call Stop, which would wait for mu forever.
func stopLocked() {
	w, cmd := pipeW, watchdog
	pipeW, watchdog = nil, nil
	if cluster != nil && cluster.Private {
		cluster = nil
		startErr = errors.New("the local control plane was stopped")
	}
	if w == nil {
		return
	}
	_ = w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "k8stest: stopping the control plane:", err)
		}
	case <-time.After(2 * time.Minute):
		fmt.Fprintln(os.Stderr, "k8stest: the control plane did not stop within 2 minutes")
	}
}

// buildBudget is how long building the binaries may take: what go test's -timeout leaves after
// the time already spent and a few minutes for the tests themselves.
func buildBudget() time.Duration {
	budget := 40 * time.Minute
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			budget = min(budget, d-time.Since(processStart)-5*time.Minute)
		}
	}
	return max(budget, 30*time.Second)
}

// componentLogTails returns the last n lines of each component's log in dir (etcd.log,
// kube-apiserver.log, ...), or "" when there are none: why a start failed is in them, and they are
// removed with the state dir.
func componentLogTails(dir string, n int) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var b strings.Builder
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		text := strings.TrimRight(string(data), "\n")
		if text == "" {
			fmt.Fprintf(&b, "\n--- %s: empty", filepath.Base(p))
			continue
		}
		lines := strings.Split(text, "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "\n--- last lines of %s:\n%s", filepath.Base(p), proc.Tail(strings.Join(lines, "\n"), 3000))
	}
	return b.String()
}
