#!/usr/bin/env bash
# Benchmarks of the provider (`make bench`); see BENCHMARKS.md for what each figure means.
#
#   scripts/bench.sh                 # apply + ledger benchmarks; Markdown table on stdout
#   scripts/bench.sh --update        # ... and write the results into BENCHMARKS.md
#   scripts/bench.sh --pg --profile  # also a PostgreSQL-ledger apply, and a profile of one apply
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
#      f) with --calibrate: (a) with the SDK's trace logging switched off, and the ratios (f)/(e) and
#         (f)/(d, logging off) for the applies and the refresh plans.
#    Before every timed apply the state and the ledger are reset (state file and SQLite files removed,
#    a fresh PostgreSQL database), so every round is a fresh create of all COUNT resources; each apply
#    is followed by a timed refresh plan (`terraform plan`, which must report no changes). One
#    untimed warm-up round comes first. Reported, for the applies and the plans: median, min and max
#    wall time, median CPU time (user+sys of terraform and its provider processes), median(x) /
#    median(b), and the provider processes' peak RSS and CPU time (each provider process runs under
#    scripts/bench/rsswrap, which records the kernel's rusage of it).
# 2. Ledger benchmark: `go test ./internal/database -run '^$' -bench BenchmarkAllocate -benchtime 300x
#    -count 3`, reported as the median allocs/s of the counts per backend and writers.
# 3. --profile: one more (a) apply with TF_LOG=trace (per-RPC timings from the log) and with a provider
#    built with pprof (scripts/bench/profprov), plus one with the SDK's trace logging switched off,
#    summarized on stderr and kept in the work directory (--keep).
#
# Options (environment variable in parentheses):
#   -n, --rounds N        timed rounds (BENCH_ROUNDS, 5)
#   -p, --parallelism N   terraform -parallelism (BENCH_PARALLELISM, 10)
#   -c, --count N         resources per configuration (BENCH_COUNT, 200)
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
count="${BENCH_COUNT:-200}"
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
    -c|--count) count="$2"; shift ;;
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
check_counts bench.sh rounds parallelism count ledger_count

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
prepare_update bench "$root/BENCHMARKS.md"

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

write_runtime_config() { # $1 = dir, $2 = ledger DSN
  mkdir -p "$1"
  # 100 slots per host, at least 4 hosts, enough for every runtime (count = 1,000: 10 hosts).
  local hosts=$(( count > 400 ? (count + 99) / 100 : 4 ))
  cat > "$1/main.tf" <<TF
terraform {
  required_providers {
    rill = { source = "rill-provisioner/rill" }
  }
}

provider "rill" {
  # $hosts hosts x 100 slots: room for $count one-slot runtimes.
  provisioner_set_json = jsonencode({
    pool = {
      type = "static"
      spec = {
        runtimes = [for i in range($hosts) : {
          host         = "http://runtime-\${i}.bench.invalid:9091"
          slots        = 100
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
  default   = "$2"
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
  [[ "$cmd" == apply ]] && args+=(-auto-approve)
  local TIMEFORMAT='%3R %3U %3S'
  rm -f "$logf.rusage"
  if ! t="$( { time env RILL_BENCH_RUSAGE_FILE="$logf.rusage" "$@" "$tf" -chdir="$dir" "$cmd" "${args[@]}" \
      >"$logf" 2>&1; } 2>&1 )"; then
    log "terraform $cmd failed in $dir; last lines of $logf:"
    tail -20 "$logf" >&2
    return 1
  fi
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

# provider_usage LOG: "peak_rss_mb cpu_s" of the provider processes of one timed command: the largest
# peak RSS of any of them, and the sum of their CPU time ("nan nan" without a provider, i.e.
# terraform_data).
provider_usage() {
  [[ -s "$1.rusage" ]] || { echo "nan nan"; return; }
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         if (v["maxrss_kb"] > rss) rss = v["maxrss_kb"]; cpu += v["user"] + v["sys"] }
       END { printf "%.1f %.3f\n", rss / 1024, cpu }' "$1.rusage"
}

reset_dir() { # remove state (and an SQLite ledger) so that the next apply creates everything
  rm -f "$1"/terraform.tfstate "$1"/terraform.tfstate.backup "$1"/.terraform.tfstate.lock.info \
    "$1"/ledger.db "$1"/ledger.db-wal "$1"/ledger.db-shm "$1"/ledger.db-journal
}

if [[ "$do_apply" == 1 ]]; then
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

  names=(runtime data)
  write_runtime_config "$work/runtime" "sqlite://$work/runtime/ledger.db"
  write_data_config "$work/data"
  if [[ "$calibrate" == 1 ]]; then
    log "building the no-op calibration provider (scripts/bench/noopprov)"
    (cd "$src" && go build -trimpath -o "$bindir/real/terraform-provider-noop" ./scripts/bench/noopprov)
    names+=(noop noop_quiet noop_schema runtime_quiet)
    write_noop_config "$work/noop" noop_item
    write_noop_config "$work/noop_quiet" noop_item
    write_noop_config "$work/noop_schema" noop_runtime
    write_runtime_config "$work/runtime_quiet" "sqlite://$work/runtime_quiet/ledger.db"
  fi

  pg_dsns=()
  pg_note=""
  if [[ "$with_pg" == 1 ]]; then
    log "starting a throwaway PostgreSQL cluster (internal/testutil/pgtest)"
    (cd "$src" && go build -trimpath -o "$work/pgcluster" ./scripts/bench/pgcluster)
    "$work/pgcluster" -databases "$((rounds + 1))" -out "$work/pg.dsns" 2>"$work/pgcluster.log" &
    pg_pid=$!
    for _ in $(seq 1 240); do
      [[ -s "$work/pg.dsns" ]] && break
      kill -0 "$pg_pid" 2>/dev/null || break
      sleep 0.5
    done
    if [[ -s "$work/pg.dsns" ]]; then
      mapfile -t pg_dsns < <(grep -v '^ready$' "$work/pg.dsns")
      names+=(runtime_pg)
      write_runtime_config "$work/runtime_pg" "${pg_dsns[0]}"
    else
      pg_rc=0
      wait "$pg_pid" 2>/dev/null || pg_rc=$?
      pg_pid=""
      pg_note="PostgreSQL-ledger apply skipped: the cluster did not start (exit $pg_rc: $(tail -1 "$work/pgcluster.log"))"
      log "$pg_note"
    fi
  fi

  # The dev override needs no `terraform init` (Terraform advises against it); terraform_data is built
  # in, and init is a formality, done once, untimed.
  "$tf" -chdir="$work/data" init -input=false -no-color >"$work/data.init.log" 2>&1 ||
    { log "terraform init failed for terraform_data:"; tail -20 "$work/data.init.log" >&2; exit 1; }

  describe() { echo "wall $1 s, cpu $2 s, provider peak RSS $3 MB, provider cpu $4 s"; }
  # Round 0 is the untimed warm-up (page cache, first provider start, Go runtime).
  for r in $(seq 0 "$rounds"); do
    for n in "${names[@]}"; do
      reset_dir "$work/$n"
      vars=()
      case "$n" in
        runtime_pg) vars=("TF_VAR_ledger_dsn=${pg_dsns[$r]}") ;;
        runtime_quiet|noop_quiet|noop_schema) vars=("${quiet_env[@]}") ;;
      esac
      res="$(timed_apply "$work/$n" "$work/$n.apply.$r.log" "${vars[@]}")"
      got="$(grep -c '^\(rill_runtime\|terraform_data\|noop_item\|noop_runtime\)\.bench\[[0-9]*\]: Creation complete' "$work/$n.apply.$r.log" || true)"
      if [[ "$got" != "$count" ]]; then
        log "$n round $r created $got resources, expected $count (see $work/$n.apply.$r.log)"
        exit 1
      fi
      res="$res $(provider_usage "$work/$n.apply.$r.log")"
      # A refresh plan of what was just created: what every later plan of the configuration costs.
      pres="$(timed_plan "$work/$n" "$work/$n.plan.$r.log" "${vars[@]}")"
      pres="$pres $(provider_usage "$work/$n.plan.$r.log")"
      if [[ "$r" == 0 ]]; then
        log "warm-up $n: apply $(describe $res); plan $(describe $pres)"
      else
        log "round $r/$rounds $n: apply $(describe $res); plan $(describe $pres) (load $(loadavg))"
        echo "$res" >>"$work/$n.times"
        echo "$pres" >>"$work/$n.plan.times"
      fi
    done
  done

  label() {
    case "$1" in
      runtime) echo "$count × \`rill_runtime\` (SQLite ledger)" ;;
      runtime_pg) echo "$count × \`rill_runtime\` (PostgreSQL ledger)" ;;
      data) echo "$count × \`terraform_data\`" ;;
      noop) echo "calibration: $count × \`noop_item\` (no-op framework provider)" ;;
      noop_quiet) echo "calibration: $count × \`noop_item\`, SDK trace logging off" ;;
      noop_schema) echo "calibration: $count × \`noop_runtime\` (no-op, rill_runtime's schema), SDK trace logging off" ;;
      runtime_quiet) echo "calibration: $count × \`rill_runtime\` (SQLite), SDK trace logging off" ;;
    esac
  }
  stat() { cut -d' ' -f"$2" "$work/$1.times" | grep -v nan | "$3"; }
  fmt() { awk -v v="$1" 'BEGIN { if (v == "nan") print "–"; else printf "%.2f", v }'; }
  fmt0() { awk -v v="$1" 'BEGIN { if (v == "nan") print "–"; else printf "%.0f", v }'; }
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

  # table PHASE SUFFIX: one row per configuration; SUFFIX "" = the applies, ".plan" = the refresh plans.
  table() {
    local phase="$1" sfx="$2" n med vs dmed
    dmed="$(stat "data$sfx" 1 median)"
    echo "| Configuration (\`terraform $phase\`, -parallelism=$parallelism, rounds=$rounds) | median wall (s) | min (s) | max (s) | median CPU (s) | wall vs terraform_data | provider peak RSS (MB, median) | provider CPU (s, median) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for n in "${names[@]}"; do
      med="$(stat "$n$sfx" 1 median)"
      vs="1.00"
      [[ "$n" == data ]] || vs="**$(ratio "$med" "$dmed")**"
      echo "| $(label "$n") | $(fmt "$med") | $(fmt "$(stat "$n$sfx" 1 minof)") | $(fmt "$(stat "$n$sfx" 1 maxof)") | $(fmt "$(stat "$n$sfx" 2 median)") | $vs | $(fmt0 "$(stat "$n$sfx" 3 median)") | $(fmt "$(stat "$n$sfx" 4 median)") |"
    done
  }

  data_med="$(stat data 1 median)"
  data_cpu="$(stat data 2 median)"
  apply_md+="$(table apply "")"$'\n'
  rt_ratio="$(ratio "$(stat runtime 1 median)" "$data_med")"
  verdict="meets"
  above "$rt_ratio" 1.3 && verdict="misses"
  apply_md+=$'\n'"Ratio runtime/terraform_data (median wall, SQLite ledger): **$rt_ratio** — $verdict the target of <= 1.3."
  apply_md+=" CPU ratio: $(ratio "$(stat runtime 2 median)" "$data_cpu")."$'\n'
  if [[ "$calibrate" == 1 ]]; then
    apply_md+=$'\n'"For scale: a provider that does nothing costs $(ratio "$(stat noop 1 median)" "$data_med")× terraform_data"
    apply_md+=" ($(ratio "$(stat noop_quiet 1 median)" "$data_med")× with the SDK's trace logging off);"
    apply_md+=" rill_runtime with the SDK's trace logging off is $(ratio "$(stat runtime_quiet 1 median)" "$data_med")×."$'\n'
    # The targets of issue 11: rill_runtime within 1.25x of the same-schema no-op, 1.5x of the plain one.
    for sfx in "" .plan; do
      phase=apply
      [[ "$sfx" == .plan ]] && phase="refresh plan"
      apply_md+=$'\n'"rill_runtime ($phase, median wall, SDK trace logging off as in \`main.go\`): **$(ratio "$(stat "runtime_quiet$sfx" 1 median)" "$(stat "noop_schema$sfx" 1 median)")×**"
      apply_md+=" the no-op provider with the same schema (target <= 1.25), **$(ratio "$(stat "runtime_quiet$sfx" 1 median)" "$(stat "noop_quiet$sfx" 1 median)")×** the plain no-op provider (target <= 1.5),"
      apply_md+=" $(ratio "$(stat "runtime_quiet$sfx" 1 median)" "$(stat "data$sfx" 1 median)")× terraform_data;"
      apply_md+=" provider CPU $(ratio "$(stat "runtime_quiet$sfx" 4 median)" "$(stat "noop_schema$sfx" 4 median)")× the same-schema no-op's."$'\n'
    done
  fi
  apply_md+=$'\n'"Each apply is followed by a refresh plan of what it created (\`terraform plan\`, which must report no changes):"$'\n\n'
  apply_md+="$(table plan .plan)"$'\n\n'
  apply_md+="Provider memory at $count runtimes (target: peak RSS <= 60 MB at 200, <= 120 MB at 1,000): $(fmt0 "$(stat runtime 3 median)") MB in the apply,"
  apply_md+=" $(fmt0 "$(stat runtime.plan 3 median)") MB in the refresh plan. Peak RSS counts the pages of the provider's binary that the process touched (file-backed, shared with the page cache) as well as its own memory."$'\n'
  if [[ "$with_pg" == 1 && -n "$pg_note" ]]; then
    apply_md+=$'\n'"$pg_note."$'\n'
  elif [[ "$with_pg" != 1 ]]; then
    apply_md+=$'\n'"PostgreSQL-ledger apply not run (pass \`--pg\`)."$'\n'
  fi
fi

# ---------------------------------------------------------------------------------------------------
# Profile of one rill_runtime apply (SQLite ledger).
profile_md=""
if [[ "$profile" == 1 && "$do_apply" == 1 ]]; then
  pdir="$work/profile"
  mkdir -p "$pdir/bin" "$pdir/pprof" "$pdir/pprof-quiet"
  log "profile: building the provider with pprof (scripts/bench/profprov)"
  (cd "$src" && go build -trimpath -o "$pdir/bin/terraform-provider-rill" ./scripts/bench/profprov)
  write_cli_config "$pdir/terraformrc" "$pdir/bin"
  write_runtime_config "$pdir/runtime" "sqlite://$pdir/runtime/ledger.db"
  export TF_CLI_CONFIG_FILE="$pdir/terraformrc"

  log "profile: apply with TF_LOG=trace"
  reset_dir "$pdir/runtime"
  trace_res="$(timed_apply "$pdir/runtime" "$pdir/apply.trace.log" TF_LOG=trace TF_LOG_PATH="$pdir/trace.log")"
  rpc_table="$(awk -f "$root/scripts/bench/rpctimes.awk" "$pdir/trace.log")"

  provider_cpu() { cat "$1"/rusage-*.txt | awk '{ split($2, u, "="); split($3, s, "="); t += u[2] + s[2]; n++ } END { printf "%.2f s in %d processes", t, n }'; }
  log "profile: apply with pprof"
  reset_dir "$pdir/runtime"
  prof_res="$(timed_apply "$pdir/runtime" "$pdir/apply.pprof.log" RILL_BENCH_PROFILE_DIR="$pdir/pprof")"
  log "profile: apply with pprof and the SDK's trace logging off"
  reset_dir "$pdir/runtime"
  quiet_res="$(timed_apply "$pdir/runtime" "$pdir/apply.quiet.log" RILL_BENCH_PROFILE_DIR="$pdir/pprof-quiet" "${quiet_env[@]}")"
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
  {
    echo "== RPC timings (TF_LOG=trace)"; echo "$rpc_table"
    echo; echo "== pprof -top -cum, apply-phase provider process, default logging ($biggest)"; echo "$top"
    echo; echo "== pprof -top -cum, apply-phase provider process, SDK logging off"; echo "$top_quiet"
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
  # BenchmarkAllocate/sqlite/writers=8-2   300   2325455 ns/op   430.0 allocs/s
  ledger_val() { # $1 = backend, $2 = case
    awk -v name="BenchmarkAllocate/$1/$2" '
      { n = $1; sub(/-[0-9]+$/, "", n) }
      n == name { for (i = 2; i < NF; i++) if ($(i + 1) == "allocs/s") print $i }' "$work/ledger.txt" | median
  }
  ledger_md+="| Ledger (\`Allocate\`, allocs/s, median of $ledger_count) | writers=1 | writers=8 | writers=8, handles=8 |"$'\n'
  ledger_md+="|---|---:|---:|---:|"$'\n'
  for be in sqlite postgres; do
    row="| $be"
    for c in writers=1 writers=8 'writers=8,handles=8'; do
      v="$(ledger_val "$be" "$c")"
      if [[ "$v" == nan ]]; then row+=" | skipped"; else row+=" | $(awk -v v="$v" 'BEGIN { printf "%.0f", v }')"; fi
    done
    ledger_md+="$row |"$'\n'
  done
  if grep -q 'SKIP\|skipping PostgreSQL' "$work/ledger.txt"; then
    ledger_md+=$'\n'"PostgreSQL skipped: $(grep -m1 'skipping PostgreSQL' "$work/ledger.txt" | sed 's/^ *//')"$'\n'
  fi
fi

# ---------------------------------------------------------------------------------------------------
# Results.
load_end="$(loadavg)"
results="$(
  echo "Run of $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu_model (nproc $(nproc)), $mem_total RAM, Linux $(uname -r); $go_version; $tf_version; $source_desc."
  echo "Load average (1, 5, 15 min): $load_note; $load_end at the end."
  echo
  if [[ -n "$apply_md" ]]; then echo "$apply_md"; fi
  if [[ -n "$ledger_md" ]]; then echo "$ledger_md"; fi
  if [[ -n "$profile_md" ]]; then echo "$profile_md"; fi
)"
echo "$results"

if [[ "$update" == 1 ]]; then
  printf '%s\n' "$results" | write_results bench "$root/BENCHMARKS.md"
fi
