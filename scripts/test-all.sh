#!/usr/bin/env bash
# The README's second command, and what .ci/run calls: every test of the project on a fresh machine.
# It installs what it needs (PostgreSQL from Debian's packages; Terraform, OpenTofu, tfplugindocs,
# golangci-lint, goreleaser and the local Kubernetes control plane from the Go module proxy, cached
# in .tools/), then runs:
#   1. gofmt, go vet, golangci-lint (.golangci.yml), `goreleaser check` of .goreleaser.yml, and a
#      check that docs/ matches the code;
#   2. unit tests, fuzz seed corpora and acceptance tests through the real Terraform CLI (TF_ACC=1),
#      with a throwaway PostgreSQL cluster and the local control plane started by the tests themselves;
#   3. the acceptance tests again through OpenTofu.
# The ClickHouse tests run against chDB's ClickHouse 26.7 (scripts/chdb.sh, from npm), and their
# integration tests again against Debian's clickhouse-server 18.16 (scripts/clickhouse-server.sh); see
# internal/clickhouse/README.md for what each can and cannot show.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CGO_ENABLED=0 CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
# Bounded well inside CI's 90 minutes, so that a hang fails with go test's goroutine dump instead of
# a CI run that never reports.
timeout="${RILL_TEST_TIMEOUT:-30m}"

step() { printf '\n==> %s\n' "$*" >&2; }
# version_of CLI: its version line. Without a CLI config (a TF_CLI_CONFIG_FILE naming a missing file
# makes OpenTofu 1.12 print a warning on stdout first); the acceptance tests drop such a variable
# themselves (acctest.Main).
version_of() { TF_CLI_CONFIG_FILE= "$1" version | head -1; }

step "tools"
pgbin="$(scripts/postgres.sh)"
tf="$(scripts/terraform-cli.sh)"
tofu="$(scripts/tofu-cli.sh)"
chdb="$(scripts/chdb.sh)"
chserver="$(scripts/clickhouse-server.sh)"
golangci="$(scripts/golangci-lint.sh)"
goreleaser="$(scripts/goreleaser.sh)"
if [ -x scripts/controlplane.sh ]; then
  scripts/controlplane.sh build >&2
fi
echo "postgres: $pgbin" >&2
echo "terraform: $(version_of "$tf") ($tf)" >&2
echo "opentofu: $(version_of "$tofu") ($tofu)" >&2
echo "chdb: $chdb" >&2
echo "clickhouse-server: $chserver (Debian's package)" >&2
echo "golangci-lint: $("$golangci" version --short) ($golangci)" >&2
echo "goreleaser: $goreleaser" >&2

step "gofmt, go vet, golangci-lint, goreleaser check, docs, file sizes"
# A tracked file over 1 MB is a generated or rewritten file gone wrong (one such edit once turned a
# 17 KB Markdown file into 7 MB): fail before anything else reads it.
big="$(git ls-files -z | xargs -0 stat -c '%s %n' | awk '$1 > 1048576 {print "  " $2 " (" $1 " bytes)"}')"
if [ -n "$big" ]; then
  echo "tracked files over 1 MB:" >&2; echo "$big" >&2; exit 1
fi
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...
go vet -tags rill_fake_clickhouse ./internal/clickhouse/ # the stand-in compiled into the tests' provider
"$golangci" run --allow-serial-runners ./... # waits for another checkout's lint (GNUmakefile, lint)
"$goreleaser" check
scripts/docs.sh --check

step "unit and acceptance tests with $(version_of "$tf")"
TF_ACC=1 TF_ACC_TERRAFORM_PATH="$tf" go test ./... -count=1 -timeout "$timeout"

step "ClickHouse integration tests against $chserver"
# The same tests ran against chDB's ClickHouse 26.7 above; a real server of Debian's (18.16, older
# than SQL user management) shows what the provisioner does with an old server, over the native protocol.
RILL_TEST_CLICKHOUSE_SERVER="$chserver" go test ./internal/clickhouse/ -run Integration -count=1 -timeout "$timeout"

step "acceptance tests with $(version_of "$tofu")"
# OpenTofu resolves the in-process provider under its own registry host (see scripts/tofu-cli.sh).
TF_ACC=1 TF_ACC_TERRAFORM_PATH="$tofu" TF_ACC_PROVIDER_HOST=registry.opentofu.org TF_ACC_PROVIDER_NAMESPACE=hashicorp \
  go test ./internal/resources/... -run '^TestAcc' -count=1 -timeout "$timeout"
