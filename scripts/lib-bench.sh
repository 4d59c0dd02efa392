# Shared by scripts/bench.sh and scripts/bench-kubernetes.sh (sourced, not run): argument checks, the
# wait for a quiet machine, and --update. The caller defines log(). The statistics, tables and verdicts
# are Go: scripts/bench/report.

source "$(dirname "${BASH_SOURCE[0]}")/lib-tools.sh"

# usage: print the calling script's header comment (its --help).
usage() { print_help "$0"; }

# check_counts SCRIPT VAR...: each named variable holds a positive integer, and max_wait and max_load
# (set by the caller) are a number of seconds and a number.
check_counts() {
  local script=$1 v
  shift
  for v in "$@"; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "$script: $v must be a positive integer, got ${!v}" >&2; exit 2; }
  done
  [[ "$max_wait" =~ ^[0-9]+$ ]] || { echo "$script: max-wait must be a number of seconds, got $max_wait" >&2; exit 2; }
  [[ "$max_load" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "$script: max-load must be a number, got $max_load" >&2; exit 2; }
}

# unset_measurement_env: nothing from the caller's environment may change what is measured.
unset_measurement_env() {
  unset TF_LOG TF_LOG_PATH TF_LOG_CORE TF_LOG_PROVIDER TF_LOG_SDK TF_LOG_SDK_PROTO TF_LOG_SDK_FRAMEWORK \
    TF_PLUGIN_CACHE_DIR TF_CLI_ARGS TF_CLI_ARGS_apply TF_CLI_ARGS_plan TF_CLI_ARGS_init TF_WORKSPACE TF_DATA_DIR \
    RILL_ADMIN_PROVISIONER_SET_JSON RILL_ADMIN_DEFAULT_PROVISIONER RILL_LEDGER_DSN RILL_VERSION
}

load1() { cut -d' ' -f1 /proc/loadavg; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

# wait_for_quiet STEP: wait, STEP seconds at a time and at most max_wait seconds, until the 1-minute
# load average is at most max_load; then set load_note to what the results should say about it.
wait_for_quiet() {
  local step=$1 waited=0
  load_note=""
  while above "$(load1)" "$max_load"; do
    if (( waited >= max_wait )); then
      load_note="still $(loadavg) after waiting ${waited}s for it to drop to $max_load; ran anyway, so wall times are pessimistic"
      log "$load_note"
      return 0
    fi
    log "load average $(loadavg) > $max_load: waiting (${waited}s of ${max_wait}s)"
    sleep "$step"
    waited=$((waited + step))
  done
  load_note="$(loadavg) at the start (waited ${waited}s for it to be <= $max_load)"
}


# prepare_update NAME FILE: with --update (update=1), build scripts/bench/results (the tested Go function
# that writes results between FILE's <!-- NAME:results:begin/end --> markers) into $work and check the
# markers now, so that a damaged file fails the run before it starts, not after it.
prepare_update() {
  [[ "$update" == 1 ]] || return 0
  (cd "$root" && go build -o "$work/results-tool" ./scripts/bench/results)
  "$work/results-tool" -name "$1" -file "$2" -check
}

# write_results NAME FILE: replace FILE's results block with stdin (after prepare_update).
write_results() {
  "$work/results-tool" -name "$1" -file "$2"
  log "updated $2"
}
