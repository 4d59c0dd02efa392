#!/usr/bin/env bash
# Print the absolute path of goreleaser, built from the Go module proxy.
#
# Usage:
#   scripts/goreleaser.sh                       # $RILL_GORELEASER_PATH, else build/reuse
#   RILL_GORELEASER_PATH=/path/to/goreleaser scripts/goreleaser.sh
#
# The version is pinned by tools/goreleaser/go.mod (a wrapper module with a `tool` directive for
# github.com/goreleaser/goreleaser/v2). It is built with
#   go -C tools/goreleaser build github.com/goreleaser/goreleaser/v2
# into .tools/goreleaser/<version>/goreleaser (git-ignored) and reused. It reads .goreleaser.yml:
# `make release-snapshot` builds every archive into dist/ without signing, and scripts/test-all.sh
# runs `goreleaser check`. To bump: `go -C tools/goreleaser get -tool <module>@<version>` (the
# module's go directive must not be newer than the local Go).
#
# Only the binary path goes to stdout; progress goes to stderr.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
# goreleaser's own release sets main.version the same way; without it `goreleaser --version` would say
# "unknown".
wrapper_tool goreleaser.sh RILL_GORELEASER_PATH goreleaser goreleaser goreleaser \
  github.com/goreleaser/goreleaser/v2 github.com/goreleaser/goreleaser/v2 "-s -w -X main.version={version}" "$@"
