package kubernetes

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The integration tests (integration_test.go) need a Kubernetes API server:
//   - RILL_TEST_KUBECONFIG=<path>: use that cluster (it needs a default StorageClass that binds
//     claims; chaos tests run only when RILL_TEST_CHAOS=1 says kwok's chaos stages are loaded);
//   - otherwise, when scripts/controlplane.sh exists, TestMain starts a private control plane
//     (etcd, kube-apiserver, controller-manager, scheduler, kwok) in a temporary state dir and
//     stops it at the end; the first run builds the binaries (about 12 minutes on 2 cores);
//   - otherwise, or with -short, they are skipped with the reason; with CI=true they fail instead.
var (
	testKubeconfig    string
	testChaos         bool
	clusterSkipReason string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	testKubeconfig = os.Getenv("RILL_TEST_KUBECONFIG")
	testChaos = os.Getenv("RILL_TEST_CHAOS") == "1"
	if testKubeconfig == "" {
		script, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "controlplane.sh"))
		switch _, err := os.Stat(script); {
		case testing.Short():
			clusterSkipReason = "integration tests skipped in -short mode"
		case err != nil:
			clusterSkipReason = "no Kubernetes cluster: RILL_TEST_KUBECONFIG is not set and scripts/controlplane.sh does not exist"
		default:
			kubeconfig, stop, err := startControlPlane(script)
			if err != nil {
				clusterSkipReason = "the local control plane did not start: " + err.Error()
			} else {
				defer stop()
				testKubeconfig, testChaos = kubeconfig, true
			}
		}
	}
	return m.Run()
}

// startControlPlane starts a private control plane with kwok's chaos stages and returns its
// kubeconfig and a function that stops it.
func startControlPlane(script string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "rill-k8s-test-cp-")
	if err != nil {
		return "", nil, err
	}
	run := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, args...)
		ownProcessGroup(cmd)
		cmd.Env = append(os.Environ(), "RILL_CONTROLPLANE_DIR="+dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("%s %s did not finish within %s (the first build of the binaries takes about 12 minutes: run scripts/controlplane.sh build beforehand, or go test with a longer -timeout)",
					filepath.Base(script), strings.Join(args, " "), timeout)
			}
			return "", fmt.Errorf("%s %s: %v\n%s", filepath.Base(script), strings.Join(args, " "), err, tail(stderr.String(), 2000))
		}
		return strings.TrimSpace(stdout.String()), nil
	}
	fmt.Fprintln(os.Stderr, "kubernetes tests: building/starting the local control plane (the first build takes minutes)")
	if _, err := run(buildBudget(), "build"); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	out, err := run(5*time.Minute, "start", "--chaos")
	stop := func() {
		if _, err := run(2*time.Minute, "stop"); err != nil {
			fmt.Fprintln(os.Stderr, "kubernetes tests: stopping the control plane:", err)
		}
		os.RemoveAll(dir)
	}
	if err != nil {
		stop()
		return "", nil, err
	}
	lines := strings.Split(out, "\n")
	kubeconfig := strings.TrimSpace(lines[len(lines)-1])
	if _, err := os.Stat(kubeconfig); err != nil {
		stop()
		return "", nil, fmt.Errorf("start printed %q, which is not a kubeconfig file", kubeconfig)
	}
	return kubeconfig, stop, nil
}

// buildBudget is how long building the binaries may take: what the test timeout leaves after the
// tests' own few minutes.
func buildBudget() time.Duration {
	budget := 40 * time.Minute
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			budget = min(budget, d-4*time.Minute)
		}
	}
	return max(budget, 30*time.Second)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// needCluster skips (or, in CI, fails) a test that needs a cluster when there is none.
func needCluster(t *testing.T) {
	t.Helper()
	if testKubeconfig != "" {
		return
	}
	if !testing.Short() && os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but no cluster: %s", clusterSkipReason)
	}
	t.Skip(clusterSkipReason)
}
