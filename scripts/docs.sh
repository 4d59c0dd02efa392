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
# The docs come from `terraform providers schema -json`, which reports write-only attributes
# (rill_clickhouse's password_wo) only from Terraform 1.11 on; an older CLI would render them as
# plain arguments. scripts/terraform-cli.sh builds 1.5.7 where no terraform is on PATH, and 1.11 cannot
# be built from the Go module proxy (its go.mod has replace directives), so on such a machine the
# check is skipped, saying why, and generating refuses.
tf_version="$("$tf" version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([0-9]*\.[0-9]*\).*/\1/p' | head -1)"
if [[ "$(printf '%s\n1.11\n' "${tf_version:-0.0}" | sort -V | head -1)" != "1.11" ]]; then
  if [ "${1:-}" = "--check" ]; then
    echo "docs.sh: skipping the docs check: it needs Terraform >= 1.11 (write-only attributes), found ${tf_version:-none} at $tf" >&2
    exit 0
  fi
  echo "docs.sh: generating docs needs Terraform >= 1.11 (write-only attributes), found ${tf_version:-none} at $tf; put one on PATH or set TF_ACC_TERRAFORM_PATH" >&2
  exit 1
fi
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
