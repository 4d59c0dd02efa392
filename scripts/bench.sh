#!/usr/bin/env bash
# Benchmarks of the provider (`make bench`); see BENCHMARKS.md for what each figure means.
#
#   scripts/bench.sh                 # apply + ledger benchmarks; Markdown table on stdout
#   scripts/bench.sh --update        # ... and write the results into BENCHMARKS.md
#   scripts/bench.sh --pg --profile  # also a PostgreSQL-ledger apply, and a profile of one apply
#   scripts/bench.sh --calibrate --count 200,1000   # `make bench`: issue 11's ratios at 200 and 1,000
#   scripts/bench.sh --no-apply --no-ledger --scale 200,1000,5000   # scale only
#
# 1. Apply benchmark. Builds the provider (CGO_ENABLED=0), wires it into Terraform with a
#    dev_overrides CLI config (like scripts/quickstart.sh), and times `terraform apply -auto-approve`
#    of these configurations in temporary directories, interleaved round by round with the same
#    Terraform CLI (scripts/terraform-cli.sh) and the same -parallelism:
#      a) COUNT `rill_runtime` (slots = 1) on a static pool of 4 hosts x 100 slots (COUNT/100 hosts
#         above 400), with a fresh SQLite ledger in the temporary directory;
#      b) COUNT `terraform_data` (built in, no provider process);
#      c) with --pg: (a) with a PostgreSQL ledger (a throwaway cluster, scripts/bench/pgcluster);
#      d) with --calibrate: COUNT `noop_item` of a do-nothing plugin-framework provider
#         (scripts/bench/noopprov): the floor of any out-of-process framework provider; once as
#         is, once with the plugin SDK's trace logging switched off
#         (TF_LOG_SDK=off TF_LOG_SDK_PROTO=off TF_LOG_SDK_FRAMEWORK=off);
#      e) with --calibrate: COUNT `noop_runtime` of the same provider, a do-nothing resource with
#         rill_runtime's own schema (its Schema method), SDK logging off: what that schema costs;
#         and COUNT `noop_bare`, its attributes without validators, plan modifiers and defaults:
#         the least any provider with rill_runtime's attributes costs (the floor of the 1.5x target);
#         and COUNT `noop_contract`, noop_bare with only the attributes of Rill's provisioner contract
#         (no additions of this provider, no timeouts block): the least any provider exposing them costs;
#      f) with --calibrate: (a) with the SDK's trace logging switched off, and the ratios (f)/(e) and
#         (f)/(d, logging off) for the applies and the refresh plans.
#    Before every timed apply the state and the ledger are reset (state file and SQLite files removed,
#    a fresh PostgreSQL database), so every round is a fresh create of all COUNT resources; each apply
#    is followed by a timed refresh plan (`terraform plan`, which must report no changes) and, with
#    --destroy, a timed `terraform destroy` (which must destroy all COUNT). One untimed warm-up round
#    comes first. With
#    several counts (--count 200,1000) all of this runs per count, one section each; with
#    --calibrate each section has issue 11's targets as a table of ratios (apply and refresh plan;
#    wall, CPU of terraform + provider, CPU of the provider) and the provider's peak RSS against the
#    memory targets at 200 and 1,000 (scripts/bench/report holds the targets, renders the sections and
#    judges them). Reported, for the applies and the plans: median, min and max wall time, median
#    CPU time (user+sys of terraform and its provider processes), median(x) / median(b), and the
#    provider processes' peak RSS and CPU time (each provider process runs under
#    scripts/bench/rsswrap, which records the kernel's rusage of it).
# 1b. --scale N1,N2,...: per N, one apply, refresh plan and destroy of N `rill_runtime` (one pool of
#    N/100 hosts x 100 slots, fresh SQLite ledger) and of N `terraform_data`, interleaved by phase
#    (both applies, both plans, both destroys; --scale-deadline stops it in time): wall times, the
#    provider's CPU per runtime and Terraform's own CPU per resource (terraform_data beside it), and
#    the growth of the provider's CPU per runtime from the smallest N to the largest (flat = 1.0x).
# 2. Ledger benchmark: `go test ./internal/database -run '^$' -bench BenchmarkAllocate -benchtime 300x
#    -count 3`, reported as the median allocs/s of the counts per backend and writers.
# 3. --profile: one more (a) apply with TF_LOG=trace (per-RPC timings from the log) and with a provider
#    built with pprof (scripts/bench/profprov), plus one with the SDK's trace logging switched off,
#    and, when `perf` is installed, one under `perf record -g` for Terraform's own CPU (symbolized
#    by scripts/bench/perftop); summarized on stderr and kept in the work directory (--keep).
#
# Options (environment variable in parentheses):
#   -n, --rounds N        timed rounds (BENCH_ROUNDS, 5)
#   -p, --parallelism N   terraform -parallelism (BENCH_PARALLELISM, 10)
#   -c, --count N[,N...]  resources per configuration (BENCH_COUNT, 200); several: a section each
#       --scale N,N,...   the scale run (BENCH_SCALE; off by default)
#       --scale-deadline T  stop the scale run at time T (date -d syntax, e.g. 20:15): the command in
#                         flight is stopped and reported with what it got done (BENCH_SCALE_DEADLINE)
#       --destroy         also time a destroy after each round's refresh plan (BENCH_DESTROY=1; the
#                         scale run always does)
#       --ledger-count N  -count of the ledger benchmark (BENCH_LEDGER_COUNT, 3)
#       --pg              also the PostgreSQL-ledger apply (BENCH_PG=1)
#       --calibrate       also the no-op provider and the SDK-logging-off applies (BENCH_CALIBRATE=1)
#       --profile         profile one rill_runtime apply (BENCH_PROFILE=1)
#       --no-apply        skip the apply benchmark
#       --no-ledger       skip the ledger benchmark
#       --rev REV         benchmark committed revision REV (git archive) instead of the working tree
#                         (BENCH_REV); useful when the working tree is mid-edit and does not build
#       --max-load L      wait while the 1-minute load average is above L (BENCH_MAX_LOAD, 3) ...
#       --max-wait S      ... for at most S seconds, then run anyway and say so (BENCH_MAX_WAIT, 1200)
#       --update          replace the results block of BENCHMARKS.md with this run's
#       --keep            keep the work directory (logs, profiles)
#
# Progress goes to stderr; only the Markdown results go to stdout. Needs Go, bash, git; Terraform is
# whatever scripts/terraform-cli.sh picks (PATH, else v1.5.7 built from the Go module proxy).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

rounds="${BENCH_ROUNDS:-5}"
parallelism="${BENCH_PARALLELISM:-10}"
count_list="${BENCH_COUNT:-200}"
scale="${BENCH_SCALE:-}"
with_destroy="${BENCH_DESTROY:-0}"
scale_deadline="${BENCH_SCALE_DEADLINE:-}"
tf_timeout=""
ledger_count="${BENCH_LEDGER_COUNT:-3}"
with_pg="${BENCH_PG:-0}"
calibrate="${BENCH_CALIBRATE:-0}"
profile="${BENCH_PROFILE:-0}"
rev="${BENCH_REV:-}"
max_load="${BENCH_MAX_LOAD:-3}"
max_wait="${BENCH_MAX_WAIT:-1200}"
do_apply=1 do_ledger=1 update=0 keep=0

source "$root/scripts/lib-bench.sh"
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n|--rounds) rounds="$2"; shift ;;
    -p|--parallelism) parallelism="$2"; shift ;;
    -c|--count) count_list="$2"; shift ;;
    --scale) scale="$2"; shift ;;
    --destroy) with_destroy=1 ;;
    --scale-deadline) scale_deadline="$2"; shift ;;
    --ledger-count) ledger_count="$2"; shift ;;
    --pg) with_pg=1 ;;
    --calibrate) calibrate=1 ;;
    --profile) profile=1 ;;
    --no-apply) do_apply=0 ;;
    --no-ledger) do_ledger=0 ;;
    --rev) rev="$2"; shift ;;
    --max-load) max_load="$2"; shift ;;
    --max-wait) max_wait="$2"; shift ;;
    --update) update=1 ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
check_counts bench.sh rounds parallelism ledger_count
IFS=, read -r -a counts <<<"$count_list"
IFS=, read -r -a scale_check <<<"$scale"
for c in "${counts[@]}" "${scale_check[@]}"; do
  [[ "$c" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --count and --scale take positive integers separated by commas, got ${count_list} / ${scale}" >&2; exit 2; }
done
[[ ${#counts[@]} -gt 0 ]] || { echo "bench.sh: --count needs at least one number" >&2; exit 2; }
count="${counts[0]}"

log() { printf 'bench: %s\n' "$*" >&2; }
export CGO_ENABLED=0 CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
# Nothing from the caller's environment may change what is measured.
unset_measurement_env

work="$(mktemp -d "${TMPDIR:-/tmp}/rill-bench.XXXXXX")"
pg_pid=""
cleanup() {
  if [[ -n "$pg_pid" ]]; then
    kill -TERM "$pg_pid" 2>/dev/null || true
    wait "$pg_pid" 2>/dev/null || true
  fi
  if [[ "$keep" == 1 ]]; then log "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# --update writes two blocks of BENCHMARKS.md: "bench" (the rounds, ledger and profile) and
# "bench-scale" (--scale, which takes long enough at 5,000 to be run on its own); each only when this
# run measured something for it.
main_block=0
[[ "$do_apply" == 0 && "$do_ledger" == 0 && -n "$scale" ]] || main_block=1
[[ "$main_block" == 0 ]] || prepare_update bench "$root/BENCHMARKS.md"
[[ -z "$scale" ]] || prepare_update bench-scale "$root/BENCHMARKS.md"
# The results' tables, statistics and verdicts against issue 11's targets (scripts/bench/report), from
# the raw figures this script records; built from this checkout (with --rev too), like rsswrap.
(cd "$root" && go build -trimpath -o "$work/report-tool" ./scripts/bench/report)

# ---------------------------------------------------------------------------------------------------
# Machine and load.
wait_for_quiet 30

cpu_model="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
mem_total="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
go_version="$(go env GOVERSION)"

# ---------------------------------------------------------------------------------------------------
# Source: the working tree, or a committed revision exported to the work directory.
src="$root"
head="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$rev" ]]; then
  commit="$(git rev-parse --short "$rev^{commit}")"
  src="$work/src"
  mkdir -p "$src"
  git archive "$commit" | tar -x -C "$src"
  # Use this checkout's helper programs, whatever the revision has (built against its internal/).
  mkdir -p "$src/scripts/bench"
  cp -R "$root"/scripts/bench/noopprov "$root"/scripts/bench/pgcluster "$root"/scripts/bench/profprov "$src/scripts/bench/"
  source_desc="commit $commit (git archive of $rev)"
else
  dirty=""
  [[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] || dirty=" + uncommitted changes"
  source_desc="working tree at $head$dirty"
fi
log "source: $source_desc"

# ---------------------------------------------------------------------------------------------------
# Apply benchmark.
tf="$(scripts/terraform-cli.sh)"
# An empty CLI config until the provider is built (the caller's may not exist, or may point elsewhere).
: >"$work/empty.tfrc"
export TF_CLI_CONFIG_FILE="$work/empty.tfrc"
tf_version="$("$tf" version)"
tf_version="${tf_version%%$'\n'*}"
apply_md=""


write_cli_config() { # $1 = file, $2 = directory holding terraform-provider-rill
  cat > "$1" <<RC
provider_installation {
  dev_overrides {
    "rill-provisioner/rill" = "$2"
    "rill-provisioner/noop" = "$2"
  }
  direct {}
}
RC
}

write_runtime_config() { # $1 = dir, $2 = ledger DSN ("": the default SQLite ledger, under $1/data)
  mkdir -p "$1"
  local dsn=null
  [[ -z "$2" ]] || dsn="\"$2\""
  # The pool's layout has one home, scripts/bench/report/pool.go: 100 slots per host, at least 4
  # hosts, enough for every runtime (count = 1,000: 10 hosts).
  local pool hosts slots_per_host
  pool="$("$work/report-tool" pool -count "$count")" || exit 1
  read -r hosts slots_per_host <<<"$pool"
  cat > "$1/main.tf" <<TF
terraform {
  required_providers {
    rill = { source = "rill-provisioner/rill" }
  }
}

provider "rill" {
  # $hosts hosts x $slots_per_host slots: room for $count one-slot runtimes.
  provisioner_set_json = jsonencode({
    pool = {
      type = "static"
      spec = {
        runtimes = [for i in range($hosts) : {
          host         = "http://runtime-\${i}.bench.invalid:9091"
          slots        = $slots_per_host
          data_dir     = "/mnt/data"
          audience_url = "http://runtime-\${i}.bench.invalid:8081"
        }]
      }
    }
  })
  default_provisioner = "pool"
  ledger_dsn          = var.ledger_dsn
}

variable "ledger_dsn" {
  type      = string
  sensitive = true
  default   = $dsn
}

resource "rill_runtime" "bench" {
  count = $count
  slots = 1
}
TF
}

write_noop_config() { # $1 = dir, $2 = resource type (noop_item, or noop_runtime: rill_runtime's schema)
  mkdir -p "$1"
  cat > "$1/main.tf" <<TF
terraform {
  required_providers {
    noop = { source = "rill-provisioner/noop" }
  }
}

resource "$2" "bench" {
  count = $count
  slots = 1
}
TF
}

# The plugin SDK's own loggers (terraform-plugin-go, terraform-plugin-framework) default to TRACE when
# these are unset; every line goes to the plugin's stderr for Terraform to parse (and drop).
quiet_env=(TF_LOG_SDK=off TF_LOG_SDK_PROTO=off TF_LOG_SDK_FRAMEWORK=off)

write_data_config() { # $1 = dir
  mkdir -p "$1"
  cat > "$1/main.tf" <<TF
resource "terraform_data" "bench" {
  count = $count
  input = count.index
}
TF
}

# timed_apply DIR LOG [VAR=VALUE...]: one apply; prints "wall cpu" (seconds). bash's `time` reports the
# user+sys of the children it waited for, and Terraform waits for its provider processes. When the
# provider directory holds the rsswrap wrappers, each provider process appends its peak RSS and CPU
# time to LOG.rusage (provider_usage reads them).
timed_apply() { timed_tf apply "$@"; }

# timed_plan DIR LOG [VAR=VALUE...]: one refresh plan of what the last apply created, which must
# report no changes; prints "wall cpu" like timed_apply.
timed_plan() {
  timed_tf plan "$@" || return 1
  grep -q '^No changes\.' "$2" || { log "terraform plan in $1 proposed changes after an apply (see $2)"; return 1; }
}

timed_tf() { # CMD DIR LOG [VAR=VALUE...]
  local cmd="$1" dir="$2" logf="$3" t
  shift 3
  local args=(-input=false -no-color -parallelism="$parallelism")
  [[ "$cmd" == plan ]] || args+=(-auto-approve)
  local TIMEFORMAT='%3R %3U %3S'
  rm -f "$logf.rusage"
  local limit=()
  [[ -z "$tf_timeout" ]] || limit=(timeout -k 30 "$tf_timeout")
  # XDG_DATA_HOME: the default SQLite ledger of a runtime configuration without a ledger_dsn (the
  # README's main job) is $dir/data/terraform-provider-rill/ledger.db.
  if ! t="$( { time env RILL_BENCH_RUSAGE_FILE="$logf.rusage" XDG_DATA_HOME="$dir/data" "$@" "${limit[@]}" "$tf" -chdir="$dir" "$cmd" "${args[@]}" \
      >"$logf" 2>&1; } 2>&1 )"; then
    log "terraform $cmd failed in $dir; last lines of $logf:"
    tail -20 "$logf" >&2
    return 1
  fi
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

# provider_usage LOG: "peak_rss_mb cpu_s" of the provider processes of one timed command: the largest
# peak RSS of any of them, and the sum of their CPU time ("nan nan" without a provider, i.e.
# terraform_data); scripts/bench/report reads LOG.rusage.
provider_usage() { "$work/report-tool" usage "$1.rusage"; }

reset_dir() { # remove state (and the default SQLite ledger) so that the next apply creates everything
  rm -f "$1"/terraform.tfstate "$1"/terraform.tfstate.backup "$1"/.terraform.tfstate.lock.info
  rm -rf "$1"/data
}

if [[ "$do_apply" == 1 || -n "$scale" ]]; then
  bindir="$work/provider"
  mkdir -p "$bindir"
  mkdir -p "$bindir/real"
  log "building the provider (CGO_ENABLED=0) from $src, and the wrapper that records each provider process's peak RSS and CPU (scripts/bench/rsswrap)"
  (cd "$src" && go build -trimpath -o "$bindir/real/terraform-provider-rill" .)
  (cd "$root" && go build -trimpath -o "$bindir/terraform-provider-rill" ./scripts/bench/rsswrap)
  cp "$bindir/terraform-provider-rill" "$bindir/terraform-provider-noop"
  rc="$work/terraformrc"
  write_cli_config "$rc" "$bindir"
  export TF_CLI_CONFIG_FILE="$rc"
  if [[ "$calibrate" == 1 ]]; then
    log "building the no-op calibration provider (scripts/bench/noopprov)"
    (cd "$src" && go build -trimpath -o "$bindir/real/terraform-provider-noop" ./scripts/bench/noopprov)
  fi
fi

describe() { echo "wall $1 s, cpu $2 s, provider peak RSS $3 MB, provider cpu $4 s"; }

# run_cycle NAME DIR LOGPREFIX COUNT DESTROY [VAR=VALUE...]: apply (fresh), refresh plan and, when
# DESTROY is 1, destroy of DIR; checks that each touched COUNT resources; prints three lines
# "wall cpu provider_rss provider_cpu" (apply, plan, destroy; "nan ..." for a destroy not run).
run_cycle() {
  local n="$1" dir="$2" lp="$3" want="$4" destroy="$5" res pres dres got
  shift 5
  reset_dir "$dir"
  res="$(timed_apply "$dir" "$lp.apply.log" "$@")" || return 1
  got="$(grep -c '^\(rill_runtime\|terraform_data\|noop_item\|noop_runtime\|noop_bare\|noop_contract\)\.bench\[[0-9]*\]: Creation complete' "$lp.apply.log" || true)"
  [[ "$got" == "$want" ]] || { log "$n created $got resources, expected $want (see $lp.apply.log)"; return 1; }
  wc -c <"$dir/terraform.tfstate" >"$dir.state.bytes" # the section's bytes per resource (last round's)
  # A refresh plan of what was just created: what every later plan of the configuration costs.
  # Later: a plan reads an SQLite ledger without locks (and without creating its -wal and -shm) only
  # once the file has been left alone for 2 s (internal/database, sqliteSnapshotSettle), as it has
  # been before any plan but one run straight after an apply. The wait is not timed.
  sleep 2.5
  pres="$(timed_plan "$dir" "$lp.plan.log" "$@")" || return 1
  echo "$res $(provider_usage "$lp.apply.log")"
  echo "$pres $(provider_usage "$lp.plan.log")"
  if [[ "$destroy" != 1 ]]; then
    echo "nan nan nan nan"
    return 0
  fi
  dres="$(timed_tf destroy "$dir" "$lp.destroy.log" "$@")" || return 1
  got="$(grep -c '^\(rill_runtime\|terraform_data\|noop_item\|noop_runtime\|noop_bare\|noop_contract\)\.bench\[[0-9]*\]: Destruction complete' "$lp.destroy.log" || true)"
  [[ "$got" == "$want" ]] || { log "$n destroyed $got resources, expected $want (see $lp.destroy.log)"; return 1; }
  echo "$dres $(provider_usage "$lp.destroy.log")"
}

# The PostgreSQL cluster, when asked for: one fresh database per timed round and count (and warm-up).
pg_dsns=()
pg_note=""
if [[ "$do_apply" == 1 && "$with_pg" == 1 ]]; then
  log "starting a throwaway PostgreSQL cluster (internal/testutil/pgtest)"
  (cd "$src" && go build -trimpath -o "$work/pgcluster" ./scripts/bench/pgcluster)
  "$work/pgcluster" -databases "$(((rounds + 1) * ${#counts[@]}))" -out "$work/pg.dsns" 2>"$work/pgcluster.log" &
  pg_pid=$!
  for _ in $(seq 1 240); do
    [[ -s "$work/pg.dsns" ]] && break
    kill -0 "$pg_pid" 2>/dev/null || break
    sleep 0.5
  done
  if [[ -s "$work/pg.dsns" ]]; then
    mapfile -t pg_dsns < <(grep -v '^ready$' "$work/pg.dsns")
  else
    pg_rc=0
    wait "$pg_pid" 2>/dev/null || pg_rc=$?
    pg_pid=""
    pg_note="PostgreSQL-ledger apply skipped: the cluster did not start (exit $pg_rc: $(tail -1 "$work/pgcluster.log"))"
    log "$pg_note"
  fi
fi

ci=0
for count in "${counts[@]}"; do
  [[ "$do_apply" == 1 ]] || break
  w="$work/n$count"
  mkdir -p "$w"
  names=(runtime data)
  write_runtime_config "$w/runtime" ""
  write_data_config "$w/data"
  if [[ "$calibrate" == 1 ]]; then
    names+=(noop noop_quiet noop_schema noop_bare noop_contract runtime_quiet)
    write_noop_config "$w/noop" noop_item
    write_noop_config "$w/noop_quiet" noop_item
    write_noop_config "$w/noop_schema" noop_runtime
    write_noop_config "$w/noop_bare" noop_bare
    write_noop_config "$w/noop_contract" noop_contract
    write_runtime_config "$w/runtime_quiet" ""
  fi
  if [[ ${#pg_dsns[@]} -gt 0 ]]; then
    names+=(runtime_pg)
    write_runtime_config "$w/runtime_pg" "${pg_dsns[$((ci * (rounds + 1)))]}"
  fi

  # The dev override needs no `terraform init` (Terraform advises against it); terraform_data is built
  # in, and init is a formality, done once, untimed.
  "$tf" -chdir="$w/data" init -input=false -no-color >"$w/data.init.log" 2>&1 ||
    { log "terraform init failed for terraform_data:"; tail -20 "$w/data.init.log" >&2; exit 1; }

  # Round 0 is the untimed warm-up (page cache, first provider start, Go runtime).
  for r in $(seq 0 "$rounds"); do
    for n in "${names[@]}"; do
      vars=()
      case "$n" in
        runtime_pg) vars=("TF_VAR_ledger_dsn=${pg_dsns[$((ci * (rounds + 1) + r))]}") ;;
        runtime_quiet|noop_quiet|noop_schema|noop_bare|noop_contract) vars=("${quiet_env[@]}") ;;
      esac
      out="$(run_cycle "$n" "$w/$n" "$w/$n.$r" "$count" "$with_destroy" "${vars[@]}")" || exit 1
      { read -r res; read -r pres; read -r dres; } <<<"$out"
      if [[ "$r" == 0 ]]; then
        log "N=$count warm-up $n: apply $(describe $res); plan $(describe $pres)"
      else
        log "N=$count round $r/$rounds $n: apply $(describe $res); plan $(describe $pres) (load $(loadavg))"
        echo "$res" >>"$w/$n.times"
        echo "$pres" >>"$w/$n.plan.times"
        echo "$dres" >>"$w/$n.destroy.times"
      fi
    done
  done

  # The section's tables, ratios and verdicts against issue 11's targets, from the rounds' .times files.
  section_args=(-dir "$w" -count "$count" -rounds "$rounds" -parallelism "$parallelism")
  section_args+=(-configs "$(IFS=,; echo "${names[*]}")")
  [[ "$calibrate" != 1 ]] || section_args+=(-calibrate)
  [[ "$with_destroy" != 1 ]] || section_args+=(-destroy)
  section_md="$("$work/report-tool" section "${section_args[@]}")" || exit 1
  apply_md+="$section_md"$'\n\n'
  ci=$((ci + 1))
done
if [[ "$do_apply" == 1 && "$with_pg" == 1 && -n "$pg_note" ]]; then
  apply_md+="$pg_note."$'\n'
elif [[ "$do_apply" == 1 && "$with_pg" != 1 ]]; then
  apply_md+="PostgreSQL-ledger apply not run (pass \`--pg\`)."$'\n'
fi

# ---------------------------------------------------------------------------------------------------
# Scale: per N, one apply, refresh plan and destroy of N rill_runtime and of N terraform_data, each
# from a fresh ledger and state, interleaved by phase (both applies, both plans, both destroys), so that
# a run stopped by --scale-deadline still has each phase for both where it got that far.
scale_md=""
if [[ -n "$scale" ]]; then
  IFS=, read -r -a scale_counts <<<"$scale"
  deadline_s=""
  if [[ -n "$scale_deadline" ]]; then
    deadline_s="$(date -u -d "$scale_deadline" +%s)" || { log "--scale-deadline: not a time: $scale_deadline"; exit 2; }
  fi
  # scale_phase N NAME DIR PHASE WANT: one timed command; prints "wall cpu rss provider_cpu", or
  # "stopped ..." / "failed ..." with what was done.
  scale_phase() {
    local count="$1" n="$2" dir="$3" phase="$4" logf="$3.$4.log" res got done_re
    if [[ -n "$deadline_s" ]]; then
      tf_timeout=$((deadline_s - $(date +%s)))
      if (( tf_timeout <= 0 )); then echo "stopped: not started before the deadline ($scale_deadline)"; return; fi
    fi
    local start=$SECONDS rc=0
    res="$(timed_tf "$phase" "$dir" "$logf")" || rc=$?
    tf_timeout=""
    done_re='Creation complete'
    [[ "$phase" == destroy ]] && done_re='Destruction complete'
    got="$(grep -c "^\(rill_runtime\|terraform_data\)\.bench\[[0-9]*\]: $done_re" "$logf" 2>/dev/null || true)"
    if [[ "$rc" != 0 ]]; then
      if [[ -n "$deadline_s" ]] && (( $(date +%s) >= deadline_s )); then
        echo "stopped at the deadline ($scale_deadline) after $((SECONDS - start)) s, $got of $count done"
      else
        echo "failed after $((SECONDS - start)) s, $got of $count done (see $logf)"
      fi
      return
    fi
    case "$phase" in
      apply|destroy) [[ "$got" == "$count" ]] || { echo "failed: $got of $count done (see $logf)"; return; } ;;
      plan) grep -q '^No changes\.' "$logf" || { echo "failed: the plan proposed changes (see $logf)"; return; } ;;
    esac
    echo "$res $(provider_usage "$logf")"
  }
  for count in "${scale_counts[@]}"; do
    w="$work/scale$count"
    mkdir -p "$w"
    write_runtime_config "$w/runtime" ""
    write_data_config "$w/data"
    "$tf" -chdir="$w/data" init -input=false -no-color >"$w/data.init.log" 2>&1 ||
      { log "terraform init failed for terraform_data:"; tail -20 "$w/data.init.log" >&2; exit 1; }
    reset_dir "$w/runtime"
    reset_dir "$w/data"
    declare -A ok=([runtime]=1 [data]=1)
    for phase in apply plan destroy; do
      for n in runtime data; do
        if [[ "${ok[$n]}" != 1 ]]; then
          out="not run: an earlier phase did not complete"
        else
          log "scale N=$count $n: $phase (load $(loadavg))"
          out="$(scale_phase "$count" "$n" "$w/$n" "$phase")"
          log "scale N=$count $n $phase: $out"
        fi
        # What the table says of it (scripts/bench/report): the figures, or what happened instead.
        echo "$out" >"$w/$n.$phase.result"
        [[ "$out" =~ ^[0-9] ]] || ok[$n]=0
      done
    done
  done
  scale_md="$("$work/report-tool" scale -dir "$work" -counts "$scale")" || exit 1
fi

# ---------------------------------------------------------------------------------------------------
# Profile of one rill_runtime apply (SQLite ledger).
profile_md=""
count="${counts[0]}"
if [[ "$profile" == 1 && "$do_apply" == 1 ]]; then
  pdir="$work/profile"
  mkdir -p "$pdir/bin" "$pdir/pprof" "$pdir/pprof-quiet"
  log "profile: building the provider with pprof (scripts/bench/profprov)"
  (cd "$src" && go build -trimpath -o "$pdir/bin/terraform-provider-rill" ./scripts/bench/profprov)
  write_cli_config "$pdir/terraformrc" "$pdir/bin"
  write_runtime_config "$pdir/runtime" ""
  export TF_CLI_CONFIG_FILE="$pdir/terraformrc"

  log "profile: apply with TF_LOG=trace"
  reset_dir "$pdir/runtime"
  trace_res="$(timed_apply "$pdir/runtime" "$pdir/apply.trace.log" TF_LOG=trace TF_LOG_PATH="$pdir/trace.log")"
  rpc_table="$(cd "$root" && go run ./scripts/bench/rpctimes "$pdir/trace.log")"

  provider_cpu() { "$work/report-tool" usage -processes "$1"/rusage-*.txt; }
  log "profile: apply with pprof"
  reset_dir "$pdir/runtime"
  prof_res="$(timed_apply "$pdir/runtime" "$pdir/apply.pprof.log" RILL_BENCH_PROFILE_DIR="$pdir/pprof")"
  log "profile: apply with pprof and the SDK's trace logging off"
  reset_dir "$pdir/runtime"
  quiet_res="$(timed_apply "$pdir/runtime" "$pdir/apply.quiet.log" RILL_BENCH_PROFILE_DIR="$pdir/pprof-quiet" "${quiet_env[@]}")"
  # Terraform's own CPU, which pprof cannot reach (a stripped release binary): perf, when there is
  # one, symbolized through the binary's Go symbol table by scripts/bench/perftop.
  tf_top=""
  if command -v perf >/dev/null 2>&1; then
    log "profile: apply under perf record -g (Terraform's own CPU), SDK trace logging off"
    reset_dir "$pdir/runtime"
    perf_res="$(timed_apply "$pdir/runtime" "$pdir/apply.perf.log" "${quiet_env[@]}" perf record -q -F 499 -g -o "$pdir/perf.data" --)"
    (cd "$src" && go build -o "$pdir/bin/perftop" ./scripts/bench/perftop)
    perf script -i "$pdir/perf.data" -F comm,ip,dso 2>/dev/null >"$pdir/perf.txt"
    tf_bin="$(readlink -f "$(command -v "$tf")")"
    tf_top="$("$pdir/bin/perftop" -binary "$tf_bin" -cum -n 30 <"$pdir/perf.txt")"$'\n\n'"$("$pdir/bin/perftop" -binary "$tf_bin" -n 15 <"$pdir/perf.txt")"
  fi
  # The apply-phase provider process is the one that lived longest.
  biggest="$(ls -S "$pdir"/pprof/cpu-*.pprof | head -1)"
  top="$(cd "$src" && go tool pprof -top -cum -nodecount=40 "$pdir/bin/terraform-provider-rill" "$biggest" 2>/dev/null | sed -n '4,50p')"
  top_quiet="$(cd "$src" && go tool pprof -top -cum -nodecount=40 "$pdir/bin/terraform-provider-rill" "$(ls -S "$pdir"/pprof-quiet/cpu-*.pprof | head -1)" 2>/dev/null | sed -n '4,50p')"
  profile_md+="Profile of one $count × \`rill_runtime\` apply (SQLite ledger, -parallelism=$parallelism):"$'\n\n'
  profile_md+="| Run | wall (s) | CPU, terraform + provider (s) | CPU, provider processes |"$'\n'
  profile_md+="|---|---:|---:|---|"$'\n'
  profile_md+="| TF_LOG=trace (for the RPC timings below) | ${trace_res% *} | ${trace_res#* } | |"$'\n'
  profile_md+="| default logging, provider with pprof | ${prof_res% *} | ${prof_res#* } | $(provider_cpu "$pdir/pprof") |"$'\n'
  profile_md+="| SDK trace logging off (\`${quiet_env[*]}\`) | ${quiet_res% *} | ${quiet_res#* } | $(provider_cpu "$pdir/pprof-quiet") |"$'\n\n'
  profile_md+="Provider RPCs (from the TF_LOG=trace run; durations inflated by trace logging):"$'\n\n'
  profile_md+='```'$'\n'"$rpc_table"$'\n''```'$'\n'
  if [[ -n "$tf_top" ]]; then
    profile_md+=$'\n'"Terraform's own CPU in the same apply under \`perf record -g\` (${perf_res% *} s wall; SDK trace logging off; scripts/bench/perftop), top entries:"$'\n\n'
    profile_md+='```'$'\n'"$(head -16 <<<"$tf_top")"$'\n''```'$'\n'
  fi
  {
    echo "== RPC timings (TF_LOG=trace)"; echo "$rpc_table"
    echo; echo "== pprof -top -cum, apply-phase provider process, default logging ($biggest)"; echo "$top"
    echo; echo "== pprof -top -cum, apply-phase provider process, SDK logging off"; echo "$top_quiet"
    if [[ -n "$tf_top" ]]; then echo; echo "== Terraform's own CPU (perf record -g, scripts/bench/perftop)"; echo "$tf_top"; fi
  } >"$pdir/summary.txt"
  cat "$pdir/summary.txt" >&2
  log "profile: details in $pdir/summary.txt (pass --keep to keep them)"
fi

# ---------------------------------------------------------------------------------------------------
# Ledger benchmark.
ledger_md=""
if [[ "$do_ledger" == 1 ]]; then
  ledger_cmd=(go test ./internal/database -run '^$' -bench BenchmarkAllocate -benchtime 300x -count "$ledger_count")
  log "ledger: ${ledger_cmd[*]}"
  (cd "$src" && "${ledger_cmd[@]}") 2>&1 | tee "$work/ledger.txt" >&2
  # The table of the medians per backend and case (scripts/bench/report).
  ledger_md="$("$work/report-tool" ledger -file "$work/ledger.txt" -count "$ledger_count")"$'\n' || exit 1
fi

# ---------------------------------------------------------------------------------------------------
# Results.
load_end="$(loadavg)"
run_line="Run of $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu_model (nproc $(nproc)), $mem_total RAM, Linux $(uname -r); $go_version; $tf_version; $source_desc."
load_line="Load average (1, 5, 15 min): $load_note; $load_end at the end."
results="$(
  echo "$run_line"
  echo "$load_line"
  echo
  if [[ -n "$apply_md" ]]; then echo "$apply_md"; fi
  if [[ -n "$ledger_md" ]]; then echo "$ledger_md"; fi
  if [[ -n "$profile_md" ]]; then echo "$profile_md"; fi
)"
scale_results=""
if [[ -n "$scale_md" ]]; then
  scale_results="$(
    echo "$run_line"
    echo "$load_line"
    echo
    echo "Scale: one pool, ${scale//,/, } runtimes, one round each (\`--scale $scale\`, -parallelism=$parallelism):"
    echo
    echo "$scale_md"
  )"
fi
[[ "$main_block" == 0 ]] || echo "$results"
[[ -z "$scale_results" ]] || { echo; echo "$scale_results"; }

if [[ "$update" == 1 ]]; then
  [[ "$main_block" == 0 ]] || printf '%s\n' "$results" | write_results bench "$root/BENCHMARKS.md"
  [[ -z "$scale_results" ]] || printf '%s\n' "$scale_results" | write_results bench-scale "$root/BENCHMARKS.md"
fi
