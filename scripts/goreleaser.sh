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
no_args_but_help goreleaser.sh "$@"
print_override goreleaser.sh RILL_GORELEASER_PATH

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
mod="$root/tools/goreleaser"
modpath="github.com/goreleaser/goreleaser/v2"
version="$(pinned_version goreleaser.sh "$mod/go.mod" "$modpath")"

build_goreleaser() {
  # goreleaser's own release sets main.version the same way; without it `goreleaser --version`
  # would say "unknown".
  GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=readonly" \
    go -C "$mod" build -trimpath -ldflags="-s -w -X main.version=$version" -o "$1" "$modpath"
}
cached_build goreleaser.sh "goreleaser v$version" "$root/.tools/goreleaser/$version" goreleaser build_goreleaser
