#!/usr/bin/env bash
# Print the absolute path of a directory holding PostgreSQL server binaries
# (initdb, postgres, pg_ctl), installing them with apt if missing.
#
# Usage:
#   scripts/postgres.sh                      # e.g. /usr/lib/postgresql/15/bin
#   RILL_POSTGRES_BIN=/opt/pg/bin scripts/postgres.sh
#   PATH="$(scripts/postgres.sh):$PATH" go test ./...
#
# Resolution order:
#   1. $RILL_POSTGRES_BIN, if it contains executable initdb, postgres, pg_ctl.
#   2. The newest /usr/lib/postgresql/<major>/bin with them (Debian/Ubuntu
#      keep server binaries there, off PATH).
#   3. The directory of `initdb` on PATH (symlinks resolved), if postgres and
#      pg_ctl sit next to it.
#   4. If none is found and we run as root with apt-get available:
#      apt-get update && apt-get install -y --no-install-recommends postgresql
#      (non-interactive, no services started), then retry 2./3.
# The install does not start or enable a cluster; tests are expected to
# initdb their own data directory (as a non-root user: postgres refuses root).
#
# Only the directory goes to stdout; progress goes to stderr.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
no_args_but_help postgres.sh "$@"

has_server() {
  [[ -x "$1/initdb" && -x "$1/postgres" && -x "$1/pg_ctl" ]]
}

find_bin() {
  local d
  if [[ -n "${RILL_POSTGRES_BIN:-}" ]]; then
    if has_server "$RILL_POSTGRES_BIN"; then
      (cd "$RILL_POSTGRES_BIN" && pwd -P)
      return 0
    fi
    echo "postgres.sh: RILL_POSTGRES_BIN=$RILL_POSTGRES_BIN lacks executable initdb/postgres/pg_ctl" >&2
    return 2
  fi
  # Newest major first (version sort).
  while IFS= read -r d; do
    if has_server "$d"; then
      (cd "$d" && pwd -P)
      return 0
    fi
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -t/ -k5,5 -V -r || true)
  if d="$(command -v initdb 2>/dev/null)" && [[ -n "$d" ]]; then
    d="$(dirname "$(readlink -f "$d")")"
    if has_server "$d"; then
      echo "$d"
      return 0
    fi
  fi
  return 1
}

rc=0
find_bin && exit 0 || rc=$?
[[ $rc -eq 2 ]] && exit 1

apt_install postgres.sh postgresql || exit 1
if find_bin; then
  exit 0
fi
echo "postgres.sh: installed postgresql but found no initdb/postgres/pg_ctl" >&2
exit 1
