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
wrapper_tool golangci-lint.sh RILL_GOLANGCI_LINT_PATH golangci-lint golangci-lint golangci-lint \
  github.com/golangci/golangci-lint/v2 github.com/golangci/golangci-lint/v2/cmd/golangci-lint "" "$@"
