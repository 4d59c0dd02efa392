#!/usr/bin/env bash
# Print the absolute path of a Terraform CLI for the acceptance tests.
#
# Usage:
#   scripts/terraform-cli.sh            # override > terraform on PATH > build 1.5.7
#   scripts/terraform-cli.sh --build    # always use the 1.5.7 built from source
#   export TF_ACC_TERRAFORM_PATH="$(scripts/terraform-cli.sh)"
#
# Resolution order:
#   1. $TF_ACC_TERRAFORM_PATH, if set and executable (the same variable
#      terraform-plugin-testing reads, so an exported value is respected).
#   2. `terraform` on PATH.
#   3. Terraform v1.5.7 (the last MPL-2.0 release) built from the Go module
#      proxy with `go install github.com/hashicorp/terraform@v1.5.7` into
#      .tools/terraform/1.5.7/terraform (git-ignored), reused on later runs.
#      Cold build: ~5 min of CPU (281 s user + 88 s sys measured); 27 min wall
#      on 2 heavily shared cores. A warm Go build cache makes it seconds.
#
# Set RILL_FORCE_TERRAFORM_BUILD=1 (or pass --build) to skip 1. and 2. and
# always use the source-built 1.5.7. RILL_TERRAFORM_VERSION picks another
# version to build (must be go-installable from the proxy).
#
# Only the binary path goes to stdout; progress goes to stderr.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"

force="${RILL_FORCE_TERRAFORM_BUILD:-0}"
for arg in "$@"; do
  case "$arg" in
    --build|--force-build) force=1 ;;
    -h|--help) print_help "$0"; exit 0 ;;
    *) echo "terraform-cli.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
version="${RILL_TERRAFORM_VERSION:-1.5.7}"
version="${version#v}"

if [[ "$force" != "1" ]]; then
  if [[ -n "${TF_ACC_TERRAFORM_PATH:-}" ]]; then
    if [[ -x "$TF_ACC_TERRAFORM_PATH" && ! -d "$TF_ACC_TERRAFORM_PATH" ]]; then
      abs_path "$TF_ACC_TERRAFORM_PATH"
      exit 0
    fi
    echo "terraform-cli.sh: ignoring TF_ACC_TERRAFORM_PATH=$TF_ACC_TERRAFORM_PATH (not an executable file)" >&2
  fi
  if onpath="$(command -v terraform 2>/dev/null)" && [[ -n "$onpath" && -x "$onpath" ]]; then
    abs_path "$onpath"
    exit 0
  fi
fi

build_terraform() {
  # CGO_ENABLED=0 matches HashiCorp's static release builds; GOWORK=off keeps any go.work in the
  # checkout out of it; -buildvcs=false because the build is not of this repository.
  local out=$1 gobin
  gobin="$(dirname "$out")"
  GOBIN="$gobin" GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go install -ldflags="-s -w" "github.com/hashicorp/terraform@v$version"
}
cached_build terraform-cli.sh "terraform v$version" "$root/.tools/terraform/$version" terraform build_terraform
