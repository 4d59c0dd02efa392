// Package ci decides what a test does when something it needs is missing (TF_ACC, the Terraform CLI,
// PostgreSQL, chDB, kwok's chaos stages): on a developer's machine it skips with the reason; under
// CI=true it fails, because there a skip would hide a broken setup and the suite would pass without
// having run. -short asks for unit tests only, so under -short it skips even in CI.
package ci

import (
	"fmt"
	"os"
	"testing"
)

// Enabled reports whether the tests run in CI (the CI environment variable is "true", as GitHub
// Actions and most CI systems set it).
func Enabled() bool { return os.Getenv("CI") == "true" }

// Skip skips t with the reason, or fails it when CI=true and the run is not -short.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if Enabled() && !testing.Short() {
		t.Fatalf("CI=true, but %s: in CI this must fail rather than skip (run with -short for unit tests only)", reason)
	}
	t.Skip(reason)
}
