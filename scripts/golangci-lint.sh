#!/usr/bin/env bash
# Print the absolute path of golangci-lint, built from the Go module proxy.
#
# Usage:
#   scripts/golangci-lint.sh                          # $RILL_GOLANGCI_LINT_PATH, else build/reuse
#   RILL_GOLANGCI_LINT_PATH=/path/to/golangci-lint scripts/golangci-lint.sh
#
# The version is pinned by tools/golangci-lint/go.mod (a wrapper module with a `tool` directive for
# .../cmd/golangci-lint). It is built with
#   go -C tools/golangci-lint build github.com/golangci/golangci-lint/v2/cmd/golangci-lint
# into .tools/golangci-lint/<version>/golangci-lint (git-ignored) and reused. The linters it runs
# are set in .golangci.yml. To bump: `go -C tools/golangci-lint get -tool <module>@<version>`.
#
# Only the binary path goes to stdout; progress goes to stderr.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
no_args_but_help golangci-lint.sh "$@"
print_override golangci-lint.sh RILL_GOLANGCI_LINT_PATH

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
mod="$root/tools/golangci-lint"
modpath="github.com/golangci/golangci-lint/v2"
version="$(pinned_version golangci-lint.sh "$mod/go.mod" "$modpath")"

build_golangci_lint() {
  GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=readonly" \
    go -C "$mod" build -trimpath -o "$1" "$modpath/cmd/golangci-lint"
}
cached_build golangci-lint.sh "golangci-lint v$version" "$root/.tools/golangci-lint/$version" golangci-lint build_golangci_lint
