#!/usr/bin/env bash
# Print the path of `chlocal`, a ClickHouse (local mode) built on chDB's libchdb.so, installing it
# into the git-ignored .tools/chdb/<version>/ first when it is missing.
#
#   scripts/chdb.sh            # e.g. /repo/.tools/chdb/26.7.3-stable.1/chlocal
#   CHDB_VERSION=... scripts/chdb.sh
#
# Why: these machines have no Docker and no ClickHouse download; Debian's clickhouse-server is
# 18.16, older than SQL user management. libchdb, from the npm package @chdb/lib-linux-x64-gnu, is a
# current ClickHouse engine (26.7) that serves the native and HTTP protocols. It keeps users in
# users.xml only (no writable user directory: CREATE USER fails with code 514), so the tests use it
# for what it can prove: the provisioner's refusal of such a server before any statement, and the
# login errors read as "gone". The full lifecycle needs a server given by RILL_TEST_CLICKHOUSE_DSN.
#
# Needs npm (the registry) and a C compiler (cc) for the 40-line shim tools/chdb/chlocal.c. The
# npm tarball is 178 MB (566 MB unpacked); npm's cache keeps it for the next clean clone.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${CHDB_VERSION:-26.7.3-stable.1}"
dir="$repo/.tools/chdb/$version"
bin="$dir/chlocal"

# A shim built before it found its library through $ORIGIN (or copied from another checkout) names
# another directory and fails with exit 127: it is built again below.
runs() { [[ -x "$bin" && -f "$dir/package/libchdb.so" ]] && "$bin" --query 'SELECT 1' >/dev/null 2>&1; }
if runs; then
	echo "$bin"
	exit 0
fi
# npm and a C compiler come from Debian's packages when missing (as root, like scripts/postgres.sh).
declare -A debian_package=([npm]=npm [cc]="gcc libc6-dev")
for tool in npm cc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
			echo "chdb.sh: installing ${debian_package[$tool]} with apt-get" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${debian_package[$tool]} >&2 ||
				{ apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${debian_package[$tool]} >&2; }
		fi
		command -v "$tool" >/dev/null 2>&1 || { echo "chdb.sh: $tool is required to install chDB" >&2; exit 1; }
	fi
done
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if ! runs; then
	tmp="$(mktemp -d "$dir/.install.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	if [[ ! -f "$dir/package/libchdb.so" ]]; then
		echo "chdb.sh: fetching @chdb/lib-linux-x64-gnu@$version from npm (178 MB)..." >&2
		(cd "$tmp" && npm pack --silent "@chdb/lib-linux-x64-gnu@$version" >/dev/null)
		tar -xzf "$tmp"/*.tgz -C "$tmp"
		[[ -f "$tmp/package/libchdb.so" ]] || { echo "chdb.sh: the package has no libchdb.so" >&2; exit 1; }
		rm -rf "$dir/package"
		mv "$tmp/package" "$dir/package"
	fi
	# $ORIGIN: the shim finds libchdb.so beside itself wherever the checkout (or its .tools/) lives.
	cc -O2 -o "$tmp/chlocal" "$repo/tools/chdb/chlocal.c" -L"$dir/package" -lchdb -Wl,-rpath,'$ORIGIN/package'
	mv -f "$tmp/chlocal" "$bin"
	echo "chdb.sh: installed $bin ($("$bin" --query 'SELECT version()' 2>/dev/null || echo '?'))" >&2
fi
echo "$bin"
