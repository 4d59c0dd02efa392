#!/usr/bin/env bash
# Runs the clickhouse-static integration tests against a real ClickHouse server, in one command:
#
#   internal/clickhouse/testdata/run-integration.sh
#
# With RILL_TEST_CLICKHOUSE_DSN set (an admin DSN: a user with access_management=1 on ClickHouse 20.4
# or newer, e.g. clickhouse://default:@127.0.0.1:9000), the tests use that server. Without it, the
# script starts a throwaway server from the clickhouse-server (or clickhouse) binary on free local
# ports, in a temporary directory, and stops and removes it afterwards. Set CLICKHOUSE_SERVER to pick
# the binary. RILL_TEST_CLICKHOUSE_CLUSTER, if set, makes the tests use ON CLUSTER.
#
# Without either, the tests run against chDB's ClickHouse 26.7 (internal/testutil/chdbtest, installed
# by scripts/chdb.sh), which cannot create users by SQL.
#
# Exit status: 0 when the full lifecycle ran and passed; 1 when a test failed; 3 when the tests
# passed but the server cannot manage users by SQL (too old, no access_management, or chDB), so the
# lifecycle test was skipped.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
workdir=""
server_pid=""

cleanup() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$server_pid" 2>/dev/null || true
	fi
	if [[ -n "$workdir" ]]; then rm -rf "$workdir"; fi
}
trap cleanup EXIT

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 20000))
		if port_is_free "$p"; then echo "$p"; return 0; fi
	done
	echo "no free port found" >&2
	return 1
}

start_local_server() {
	local bin="${CLICKHOUSE_SERVER:-}"
	local -a cmd
	if [[ -z "$bin" ]]; then
		if command -v clickhouse-server >/dev/null; then bin="$(command -v clickhouse-server)"
		elif command -v clickhouse >/dev/null; then bin="$(command -v clickhouse)"
		else
			cat >&2 <<'MSG'
No ClickHouse server to test against, so the tests run against chDB's ClickHouse
(internal/testutil/chdbtest), which cannot create users by SQL: the lifecycle is skipped. For
the lifecycle, either
  - set RILL_TEST_CLICKHOUSE_DSN to an admin DSN of a server you have
    (ClickHouse >= 20.4, a user with access_management=1), e.g.
      docker run -d -p 9000:9000 -e CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT=1 clickhouse/clickhouse-server
      RILL_TEST_CLICKHOUSE_DSN=clickhouse://default:@127.0.0.1:9000 internal/clickhouse/testdata/run-integration.sh
  - or install clickhouse-server (or the single clickhouse binary) so that this script can start one.
MSG
			return 0
		fi
	fi
	case "$(basename "$bin")" in
		clickhouse) cmd=("$bin" server) ;;
		*) cmd=("$bin") ;;
	esac

	workdir="$(mktemp -d -t rill-clickhouse-it.XXXXXX)"
	local tcp http
	tcp="$(free_port)"; http="$(free_port)"
	while [[ "$http" == "$tcp" ]]; do http="$(free_port)"; done
	mkdir -p "$workdir/data/tmp" "$workdir/data/user_files" "$workdir/data/format_schemas" "$workdir/data/access"
	cat >"$workdir/config.xml" <<XML
<?xml version="1.0"?>
<clickhouse>
    <logger><level>warning</level><log>$workdir/server.log</log><errorlog>$workdir/server.err.log</errorlog></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$tcp</tcp_port>
    <http_port>$http</http_port>
    <path>$workdir/data/</path>
    <tmp_path>$workdir/data/tmp/</tmp_path>
    <user_files_path>$workdir/data/user_files/</user_files_path>
    <format_schema_path>$workdir/data/format_schemas/</format_schema_path>
    <users_config>$workdir/users.xml</users_config>
    <access_control_path>$workdir/data/access/</access_control_path>
    <user_directories>
        <users_xml><path>$workdir/users.xml</path></users_xml>
        <local_directory><path>$workdir/data/access/</path></local_directory>
    </user_directories>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>268435456</mark_cache_size>
</clickhouse>
XML
	cat >"$workdir/users.xml" <<'XML'
<?xml version="1.0"?>
<clickhouse>
    <profiles><default></default></profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
        </default>
    </users>
    <quotas><default></default></quotas>
</clickhouse>
XML
	echo "starting a throwaway ClickHouse ($bin) on 127.0.0.1:$tcp in $workdir" >&2
	"${cmd[@]}" --config-file="$workdir/config.xml" >"$workdir/stdout.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 150); do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			echo "clickhouse-server exited:" >&2
			tail -n 30 "$workdir/stdout.log" "$workdir/server.err.log" >&2 2>/dev/null || true
			exit 1
		fi
		if ! port_is_free "$tcp"; then
			export RILL_TEST_CLICKHOUSE_DSN="clickhouse://default:@127.0.0.1:$tcp/default?dial_timeout=5s"
			return 0
		fi
		sleep 0.2
	done
	echo "clickhouse-server did not listen on 127.0.0.1:$tcp within 30s" >&2
	exit 1
}

if [[ -z "${RILL_TEST_CLICKHOUSE_DSN:-}" ]]; then
	start_local_server
fi

cd "$repo"
out="$(mktemp -t rill-clickhouse-it-out.XXXXXX)"
status=0
go test ./internal/clickhouse/ -run 'Integration' -count=1 -v 2>&1 | tee "$out" || status=$?
if [[ $status -ne 0 ]]; then rm -f "$out"; exit 1; fi
if grep -q -- '--- SKIP: TestIntegrationLifecycleOfTwoIsolatedTenants' "$out"; then
	rm -f "$out"
	echo "The tests passed, but the lifecycle was skipped: this server cannot manage users by SQL (see above)." >&2
	exit 3
fi
rm -f "$out"
echo "ClickHouse integration tests passed, full lifecycle included."
