#!/usr/bin/env bash
# Print the absolute path of a clickhouse-server binary, installing Debian's package with apt if
# missing. Debian's is ClickHouse 18.16: too old for SQL user management (20.4), so what it shows is
# the provisioner against an old server: the clear refusal, login errors told apart, the lookups by
# name over the native protocol (internal/clickhouse/README.md, "What has run for real here").
#
# Usage:
#   scripts/clickhouse-server.sh             # e.g. /usr/sbin/clickhouse-server
#   RILL_TEST_CLICKHOUSE_SERVER=/opt/ch/clickhouse scripts/clickhouse-server.sh
#   RILL_TEST_CLICKHOUSE_SERVER="$(scripts/clickhouse-server.sh)" go test ./internal/clickhouse/ -run Integration
#
# Resolution order: $RILL_TEST_CLICKHOUSE_SERVER if it is an executable file; clickhouse-server on
# PATH or in /usr/sbin; else, as root with apt-get,
#   apt-get install -y --no-install-recommends clickhouse-server
# (no service started; internal/testutil/chservertest starts a throwaway server per test).
# Only the path goes to stdout; progress goes to stderr.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"
no_args_but_help clickhouse-server.sh "$@"
print_override clickhouse-server.sh RILL_TEST_CLICKHOUSE_SERVER

find_bin() {
  local p
  for p in "$(command -v clickhouse-server 2>/dev/null || true)" /usr/sbin/clickhouse-server; do
    if [[ -n "$p" && -x "$p" ]]; then
      abs_path "$p"
      return 0
    fi
  done
  return 1
}

find_bin && exit 0
apt_install clickhouse-server.sh clickhouse-server || exit 1
find_bin && exit 0
echo "clickhouse-server.sh: installed clickhouse-server but found no clickhouse-server binary" >&2
exit 1
