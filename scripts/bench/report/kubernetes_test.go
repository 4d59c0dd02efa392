package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubernetes.md is what scripts/bench-kubernetes.sh printed (before this command replaced its awk)
// for the work files in testdata/kubernetes, a real run's (-n 2 -c 10 --ready-count 5 --no-warmup).
func TestKubernetesMatchesTheShellItReplaced(t *testing.T) {
	matchesGolden(t, &kubernetes{dir: filepath.Join("testdata", "kubernetes"), count: 10, rounds: 2, parallelism: 10,
		readyCount: 5, idleSecs: 5, readyConcurrency: []int{1, 10}}, "kubernetes.md")
}

func TestKubernetesVerdictsAtTheBoundary(t *testing.T) {
	for _, tc := range []struct {
		t    k8sTarget
		v    float64
		want string
	}{
		{k8sApplyVsKubectl, 1.0, "met"},
		{k8sApplyVsKubectl, 1.01, "**missed**"},
		{k8sPlanRequestsPerRuntime, 0.2, "met"},
		{k8sPlanRequestsPerRuntime, 0.21, "**missed**"},
		{k8sLatencyP50Ratio, 1.25, "met"},
		{k8sLatencyP50Ratio, 1.26, "**missed**"},
		{k8sReadyP50, 49.9, "met"},
		{k8sReadyP50, 50, "**missed**"}, // strictly below
		{k8sReadyP50, math.NaN(), "**missed**"},
	} {
		if got := tc.t.verdict(tc.v); got != tc.want {
			t.Errorf("%s: verdict(%v) = %q, want %q", tc.t.shown, tc.v, got, tc.want)
		}
	}
}

// The plan note follows the probe's line; a work file missing is an error naming it.
func TestKubernetesNoteAndMissingFile(t *testing.T) {
	k := &kubernetes{dir: filepath.Join("testdata", "kubernetes"), count: 10, rounds: 2, parallelism: 10,
		readyCount: 5, idleSecs: 5, readyConcurrency: []int{1, 10}, planNote: "the plan of round 1/2 found changes (see tf-plan-1.log)"}
	var out strings.Builder
	if err := write(&out, k); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "16.28 ms.\nNote: the plan of round 1/2 found changes (see tf-plan-1.log).\n\nReadiness") {
		t.Errorf("no note after the probe's line:\n%s", out.String())
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "kubernetes", "tf.times"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tf.times"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	k.dir = dir
	if err := write(&out, k); err == nil || !strings.Contains(err.Error(), "kubectl.times") {
		t.Errorf("got %v, want an error naming kubectl.times", err)
	}
}
