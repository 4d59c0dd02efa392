# Shared by scripts/terraform-cli.sh, tofu-cli.sh, tfplugindocs.sh, golangci-lint.sh, goreleaser.sh,
# postgres.sh and clickhouse-server.sh, and by
# lib-bench.sh (sourced, not run): help and arguments of the tool scripts, resolve an
# override, read a pinned version from a wrapper go.mod, and build a tool once into the git-ignored
# .tools/<tool>/<version>/ folder, serialised between concurrent callers.

# print_help SCRIPT: print SCRIPT's header comment (its --help).
print_help() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1" >&2
}

# no_args_but_help SCRIPT ARG...: the tool scripts take no argument but -h/--help (which prints the
# header comment and exits).
no_args_but_help() {
  local script=$1
  shift
  case "${1:-}" in
    -h|--help) print_help "$0"; exit 0 ;;
    "") ;;
    *) echo "$script: unknown argument: $1" >&2; exit 2 ;;
  esac
}

# abs_path FILE: the absolute, symlink-free path of FILE.
abs_path() {
  (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")")
}

# print_override SCRIPT VAR: when the variable VAR names an executable file, print it and exit; when
# it is set to anything else, fail.
print_override() {
  local script=$1 var=$2 value=${!2:-}
  [[ -z "$value" ]] && return 0
  if [[ -x "$value" && ! -d "$value" ]]; then
    abs_path "$value"
    exit 0
  fi
  echo "$script: $var=$value is not an executable file" >&2
  exit 1
}

# apt_install SCRIPT PACKAGE: install Debian's PACKAGE (no recommends, non-interactive), as root with
# apt-get, or fail saying how to install it. No service starts: a policy-rc.d that exits 101 (only
# created, and removed, when none exists) keeps the package from starting one; the tests start
# their own servers.
apt_install() {
  local script=$1 package=$2 policy=/usr/sbin/policy-rc.d made_policy=0 rc=0
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "$script: $package is not installed and we are not root; install it, e.g.: sudo apt-get install -y --no-install-recommends $package" >&2
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$script: $package is not installed and apt-get is unavailable" >&2
    return 1
  fi
  echo "$script: installing $package with apt-get..." >&2
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
  fi
  { DEBIAN_FRONTEND=noninteractive apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package"; } >&2 || rc=$?
  if [[ $made_policy -eq 1 ]]; then rm -f "$policy"; fi
  return $rc
}

# pinned_version SCRIPT GOMOD MODULE: the version of MODULE required in GOMOD, without the "v".
pinned_version() {
  local script=$1 gomod=$2 module=$3 version
  version="$(awk -v m="$module" '$1 == m && $2 ~ /^v/ {print $2; exit}
                                 $1 == "require" && $2 == m {print $3; exit}' "$gomod")"
  if [[ -z "$version" ]]; then
    echo "$script: cannot find the $module requirement in $gomod" >&2
    exit 1
  fi
  echo "${version#v}"
}

# cached_build SCRIPT WHAT DIR NAME BUILD_FUNCTION: print DIR/NAME, first building it with
# `BUILD_FUNCTION <output path>` when it is missing. One build at a time per DIR (parallel test
# packages may all ask); the binary appears only once it is complete.
cached_build() {
  local script=$1 what=$2 dir=$3 name=$4 build=$5 bin="$3/$4" start
  if [[ -x "$bin" ]]; then
    echo "$bin"
    return 0
  fi
  command -v go >/dev/null 2>&1 || { echo "$script: go is required to build $what" >&2; exit 1; }
  mkdir -p "$dir"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$dir/.lock"
    flock 9
  fi
  if [[ ! -x "$bin" ]]; then
    _cached_build_tmp="$(mktemp -d "$dir/.build.XXXXXX")"
    trap 'rm -rf "$_cached_build_tmp"' EXIT
    echo "$script: building $what from the Go module proxy (several minutes cold)..." >&2
    start=$SECONDS
    "$build" "$_cached_build_tmp/$name" >&2
    mv -f "$_cached_build_tmp/$name" "$bin"
    echo "$script: built $bin in $((SECONDS - start))s" >&2
  fi
  echo "$bin"
}

# wrapper_tool SCRIPT OVERRIDE_VAR NAME LABEL TOOLS_SUBDIR MODULE PACKAGE LDFLAGS [SCRIPT ARGS...]: the
# whole of a script that prints a tool built from a wrapper module under tools/ (a go.mod whose
# `tool` directive pins MODULE): -h/--help, the OVERRIDE_VAR override, the pinned version, and a
# cached static build of PACKAGE into .tools/NAME/<version>/NAME. "{version}" in LDFLAGS becomes the
# pinned version.
wrapper_tool() {
  local script=$1 var=$2 name=$3 label=$4 subdir=$5 module=$6 root
  _wrapper_tool_pkg=$7
  _wrapper_tool_ldflags=$8
  shift 8
  no_args_but_help "$script" "$@"
  print_override "$script" "$var"
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
  _wrapper_tool_mod="$root/tools/$subdir"
  local version
  version="$(pinned_version "$script" "$_wrapper_tool_mod/go.mod" "$module")"
  _wrapper_tool_ldflags="${_wrapper_tool_ldflags//\{version\}/$version}"
  cached_build "$script" "$label v$version" "$root/.tools/$name/$version" "$name" _build_wrapper_tool
}

# GOWORK=off keeps any go.work in the checkout out of it; -buildvcs=false because the build is not of
# this repository; -mod=readonly so that the wrapper's go.sum is the whole truth.
_build_wrapper_tool() {
  GOWORK=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=readonly" \
    go -C "$_wrapper_tool_mod" build -trimpath -ldflags="$_wrapper_tool_ldflags" -o "$1" "$_wrapper_tool_pkg"
}
