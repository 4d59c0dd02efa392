#!/usr/bin/env bash
# Print the absolute path of an OpenTofu CLI built from the Go module proxy.
#
# Usage:
#   scripts/tofu-cli.sh                 # $RILL_TOFU_PATH, else build/reuse
#   RILL_TOFU_PATH=/usr/bin/tofu scripts/tofu-cli.sh
#
# The version is pinned by tools/opentofu/go.mod (a wrapper module that
# requires github.com/opentofu/opentofu and repeats the one `replace` line from
# OpenTofu's own go.mod). It is built with
#   go -C tools/opentofu build github.com/opentofu/opentofu/cmd/tofu
# into .tools/tofu/<version>/tofu (git-ignored) and reused on later runs.
# Cold build: ~11 min of CPU (510 s user + 155 s sys measured); 38 min wall
# on 2 heavily shared cores. With a warm Go build cache only the link runs.
# To bump: edit the require + replace lines in tools/opentofu/go.mod, then
# `go -C tools/opentofu mod tidy`.
#
# Running terraform-plugin-testing (v1.16) acceptance tests against OpenTofu:
#   TF_ACC=1
#   TF_ACC_TERRAFORM_PATH="$(scripts/tofu-cli.sh)"  # terraform-exec runs it
#   TF_ACC_PROVIDER_HOST=registry.opentofu.org        # required
#   TF_ACC_PROVIDER_NAMESPACE=hashicorp               # or the <ns> of the
#                                                     # tests' own source = "<ns>/rill"
#   (TF_ACC_TERRAFORM_VERSION unset: it would download Terraform.)
# Why (verified with a throwaway framework provider, OpenTofu 1.10.10):
# * The framework serves the provider in-process and passes it to the CLI in
#   TF_REATTACH_PROVIDERS keyed "<host>/<ns>/rill"; host defaults to
#   registry.terraform.io, ns to both "-" and "hashicorp". With neither
#   variable set every tofu command fails with: Invalid provider namespace:
#   The legacy provider namespace "-" can be used only with hostname
#   registry.opentofu.org.
# * For configs without a terraform block, the framework injects
#   required_providers { rill = { source = "<host>/<ns>/rill" } }, so any
#   consistent host/ns pair works there.
# * A config with its own terraform { required_providers { rill = { source =
#   "<ns>/rill" } } } resolves under OpenTofu to registry.opentofu.org/<ns>/rill;
#   unless host and namespace match it, tofu reports "Inconsistent dependency
#   lock file ... no version is selected" (it tries to install it). The same
#   namespace rule applies to Terraform (host registry.terraform.io there).
# The values above are also what OpenTofu's docs (language/providers) give.
#
# Only the binary path goes to stdout; progress goes to stderr.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
# Flags mirror OpenTofu's .goreleaser.yaml (static, -trimpath, -s -w, and version.dev=no so `tofu version`
# says v<version> rather than v<version>-dev).
wrapper_tool tofu-cli.sh RILL_TOFU_PATH tofu OpenTofu opentofu \
  github.com/opentofu/opentofu github.com/opentofu/opentofu/cmd/tofu "-s -w -X github.com/opentofu/opentofu/version.dev=no" "$@"
