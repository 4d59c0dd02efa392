package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// Version and commit stamped into the binary that the tests of this package build, the way the
// release build (.goreleaser.yml) stamps them.
const (
	testVersion = "0.0.1"
	testCommit  = "0123abc"
)

// buildDir holds what the tests build; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	runExitTestRole()
	dir, err := os.MkdirTemp("", "terraform-provider-rill-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var built struct {
	once sync.Once
	bin  string
	err  error
}

// providerBinary builds the provider once per test binary with the release build's -ldflags (those of
// .goreleaser.yml, with testVersion and testCommit) and CGO off, and returns its path.
func providerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the provider binary: skipped in -short mode")
	}
	cfg := readGoreleaserConfig(t)
	if len(cfg.Builds) != 1 {
		t.Fatalf(".goreleaser.yml has %d builds, want 1", len(cfg.Builds))
	}
	ldflags := renderTemplate(t, strings.Join(cfg.Builds[0].Ldflags, " "), map[string]string{"Version": testVersion, "Commit": testCommit})
	built.once.Do(func() {
		built.bin = filepath.Join(buildDir, "terraform-provider-rill")
		built.err = acctest.BuildProvider(".", built.bin, "-trimpath", "-ldflags", ldflags)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// The release build stamps the version and commit with -ldflags -X: if either variable were renamed
// or turned into a constant, or .goreleaser.yml named another (main.Version), the link would silently
// ignore the flag and every release would call itself "dev". The binary is built with .goreleaser.yml's
// own ldflags, so both sides are checked.
func TestReleaseLdflagsSetVersion(t *testing.T) {
	bin := providerBinary(t)
	out, err := exec.Command(bin, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -version: %v\n%s", bin, err, out)
	}
	want := "terraform-provider-rill " + testVersion + " (commit " + testCommit + ")"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("-version printed %q, want %q", got, want)
	}
}
