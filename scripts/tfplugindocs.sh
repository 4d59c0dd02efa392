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

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
wrapper_tool tfplugindocs.sh RILL_TFPLUGINDOCS_PATH tfplugindocs tfplugindocs docs \
  github.com/hashicorp/terraform-plugin-docs github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs "" "$@"
