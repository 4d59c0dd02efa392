#!/usr/bin/env bash
# Print the absolute path of tfplugindocs (terraform-plugin-docs), built from
# the Go module proxy.
#
# Usage:
#   scripts/tfplugindocs.sh                       # $RILL_TFPLUGINDOCS_PATH, else build/reuse
#   RILL_TFPLUGINDOCS_PATH=/path/to/tfplugindocs scripts/tfplugindocs.sh
#
# The version is pinned by tools/docs/go.mod (a wrapper module with a `tool`
# directive for .../cmd/tfplugindocs). It is built with
#   go -C tools/docs build github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs
# into .tools/tfplugindocs/<version>/tfplugindocs (git-ignored) and reused.
# To bump: edit the require line in tools/docs/go.mod, then
# `go -C tools/docs mod tidy`.
#
# Offline doc generation. `tfplugindocs generate` (and `validate` without
# --providers-schema) compiles the provider with `go build`, writes it into a
# temp plugin dir as registry.terraform.io/hashicorp/<name>, and runs
# `terraform init -plugin-dir` + `terraform providers schema -json`. It gets
# that terraform via hashicorp/hc-install:
#   * with --tf-version X: ALWAYS downloads X from releases.hashicorp.com
#     (fails offline), so never pass --tf-version;
#   * without it: the first executable literally named `terraform` on $PATH,
#     and only if none exists, downloads the latest release (checkpoint API).
# tfplugindocs reads no environment variable for this (no TFPLUGINDOCS_*, and
# TF_ACC_TERRAFORM_PATH is ignored), so put the CLI from
# scripts/terraform-cli.sh first on PATH:
#   tf="$(scripts/terraform-cli.sh)"
#   PATH="$(dirname "$tf"):$PATH" "$(scripts/tfplugindocs.sh)" generate --provider-name rill
# It must be Terraform, not OpenTofu: the plugin dir is hard-coded to
# registry.terraform.io/hashicorp/<name>, which `tofu init` does not match.
# Alternatively pass --providers-schema <file> (output of
# `terraform providers schema -json`), which skips building and the CLI.
# The `go build` step needs the provider's modules in the module cache (or
# GOPROXY reachable).
#
# Only the binary path goes to stdout; progress goes to stderr.
set -euo pipefail

case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 0 ;;
  "") ;;
  *) echo "tfplugindocs.sh: unknown argument: $1" >&2; exit 2 ;;
esac

if [[ -n "${RILL_TFPLUGINDOCS_PATH:-}" ]]; then
  if [[ -x "$RILL_TFPLUGINDOCS_PATH" && ! -d "$RILL_TFPLUGINDOCS_PATH" ]]; then
    (cd "$(dirname "$RILL_TFPLUGINDOCS_PATH")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$RILL_TFPLUGINDOCS_PATH")")
    exit 0
  fi
  echo "tfplugindocs.sh: RILL_TFPLUGINDOCS_PATH=$RILL_TFPLUGINDOCS_PATH is not an executable file" >&2
  exit 1
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
mod="$root/tools/docs"
modpath="github.com/hashicorp/terraform-plugin-docs"
version="$(awk -v m="$modpath" '$1 == m && $2 ~ /^v/ {print $2; exit}
                $1 == "require" && $2 == m {print $3; exit}' "$mod/go.mod")"
if [[ -z "$version" ]]; then
  echo "tfplugindocs.sh: cannot find the $modpath requirement in $mod/go.mod" >&2
  exit 1
fi
version="${version#v}"

dir="$root/.tools/tfplugindocs/$version"
bin="$dir/tfplugindocs"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "tfplugindocs.sh: go is required to build tfplugindocs $version" >&2; exit 1; }
mkdir -p "$dir"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [[ ! -x "$bin" ]]; then
  tmp="$(mktemp -d "$dir/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "tfplugindocs.sh: building tfplugindocs v$version from the Go module proxy..." >&2
  start=$SECONDS
  GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=readonly" \
    go -C "$mod" build -trimpath -o "$tmp/tfplugindocs" "$modpath/cmd/tfplugindocs" >&2
  mv -f "$tmp/tfplugindocs" "$bin"
  echo "tfplugindocs.sh: built $bin in $((SECONDS - start))s" >&2
fi
echo "$bin"
