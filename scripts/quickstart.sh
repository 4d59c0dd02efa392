#!/usr/bin/env bash
# The README's first command: build the provider, wire it into Terraform with a dev override, and apply
# examples/quickstart (three runtimes on a static pool, default SQLite ledger). Needs only Go; gets a
# Terraform CLI (the one on PATH, else builds v1.5.7 from the Go module proxy into .tools/).
#
#   scripts/quickstart.sh            # apply
#   scripts/quickstart.sh destroy    # tear it down again
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

action="${1:-apply}"
case "$action" in apply|destroy|plan) ;; *) echo "usage: $0 [apply|destroy|plan]" >&2; exit 2 ;; esac

tf="$(scripts/terraform-cli.sh)"
bindir="$root/.tools/dev-provider"
mkdir -p "$bindir"
echo "quickstart: building the provider into $bindir" >&2
CGO_ENABLED=0 go build -trimpath -o "$bindir/terraform-provider-rill" .

# A CLI config that points Terraform at the binary just built (no registry needed).
rc="$root/.tools/dev-provider/terraformrc"
cat > "$rc" <<RC
provider_installation {
  dev_overrides {
    "rill-provisioner/rill" = "$bindir"
  }
  direct {}
}
RC
echo "quickstart: $("$tf" version | head -1) at $tf" >&2
export TF_CLI_CONFIG_FILE="$rc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
case "$action" in
  apply) "$tf" -chdir=examples/quickstart apply -auto-approve -input=false ;;
  plan) "$tf" -chdir=examples/quickstart plan -input=false ;;
  destroy) "$tf" -chdir=examples/quickstart destroy -auto-approve -input=false ;;
esac
