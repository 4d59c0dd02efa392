#!/usr/bin/env bash
# Regenerate docs/ from the provider's schema and examples/ with tfplugindocs, offline.
#   scripts/docs.sh          # write docs/
#   scripts/docs.sh --check  # fail when docs/ is not current (CI)
# Doc templates live in docs-templates/, not templates/ (which holds Kubernetes manifests and would be
# read by tfplugindocs by default).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tf="$(scripts/terraform-cli.sh)"
docs="$(scripts/tfplugindocs.sh)"
out="docs"
if [ "${1:-}" = "--check" ]; then
  # tfplugindocs resolves the output directory relative to the provider directory: keep it inside
  # the (git-ignored) .tools folder.
  out=".tools/docs-check"
  rm -rf "$out"
fi
# tfplugindocs finds Terraform only as `terraform` on PATH; it must not download one.
PATH="$(dirname "$tf"):$PATH" "$docs" generate --provider-name rill --provider-dir "$root" \
  --website-source-dir docs-templates --examples-dir examples --rendered-website-dir "$out" >&2
if [ "${1:-}" = "--check" ]; then
  if ! diff -ru docs "$out" >&2; then
    echo "docs/ is out of date: run 'make generate' and commit the result" >&2
    exit 1
  fi
  echo "docs/ is current" >&2
fi
