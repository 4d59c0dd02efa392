#!/usr/bin/env bash
# Benchmarks of the kubernetes provisioner against a real local control plane; see
# BENCHMARKS-kubernetes.md for what each figure means.
#
#   scripts/bench-kubernetes.sh            # all three figures; Markdown table on stdout
#   scripts/bench-kubernetes.sh --update   # ... and write them into BENCHMARKS-kubernetes.md
#   scripts/bench-kubernetes.sh --trace    # ... plus one traced apply (TF_LOG=debug) explained
#
# It starts its own control plane (scripts/controlplane.sh, etcd + kube-apiserver + controller
# manager + scheduler + kwok) in a temporary state dir, with the audit policy
# scripts/bench/kubernetes/audit-policy.yaml (request metadata of the kubeconfig's user: verb,
# resource, user agent, µs timestamps), adds a big fake node (scripts/bench/kubernetes/node.yaml),
# and stops it at the end, whatever happens.
#
# 1. Apply: COUNT (50) `rill_runtime` (kubernetes provisioner, slots = 1, ping_path "",
#    unschedulable_grace_seconds = 60, a fresh namespace per round) with `terraform apply -auto-approve -parallelism=P` (P = 10, Terraform's
#    default), against the same objects applied by hand into another fresh namespace:
#    `kubectl apply --server-side -f <objects>` then `kubectl rollout status deployment/<name>` for
#    each Deployment, P at a time (xargs -P). The objects are rendered by the real provisioner
#    (`k8sbench render`, scripts/bench/kubernetes/k8sbench: Provision against an in-process fake
#    API server that records the server-side-apply bodies), with other UUIDs. One untimed warm-up
#    round, then ROUNDS (3) timed rounds, each timing both (which one goes first alternates).
#    Reported: median, min and max wall time of each, and the ratio of the medians (target <= 1.0).
#    Earlier rounds' runtimes stay in place (the node has room); both sides see the same cluster.
# 2. API requests per runtime of a refresh: after each round's apply, `terraform plan` over the
#    COUNT existing runtimes; the audit log's requests with user agent terraform-provider-rill
#    received during the plan, divided by COUNT (target <= 0.2), with the breakdown by verb and
#    resource. The plan must find no changes. Meanwhile `k8sbench probe` GETs a namespace every 50 ms,
#    for IDLE_SECS (5) before the plan and during it: the API server's own latency of those requests
#    (audit log), p50 and p95 during the plans against the quiet seconds before them (target: p50
#    ratio <= 1.25, i.e. unchanged within this machine's noise).
# 3. Readiness detection latency: `k8sbench ready` provisions READY_COUNT (20) runtimes with the
#    real provisioner (Provision, then AwaitReady) one at a time, then again P at a time, each in a
#    fresh namespace; latency = when AwaitReady returned minus when the controller manager's status
#    write that made the Deployment Available reached the API server (audit log, µs). p50 and p95
#    (target p50 < 50 ms). A second watch in the same process gives a peer reference too.
#
# Options (environment variable in parentheses):
#   -n, --rounds N            timed rounds (BENCH_K8S_ROUNDS, 3)
#   -c, --count N             runtimes per apply (BENCH_K8S_COUNT, 50)
#   -p, --parallelism N       terraform -parallelism, kubectl rollout status processes at a time, and
#                             the second readiness run's concurrency (BENCH_K8S_PARALLELISM, 10)
#       --ready-count N       runtimes of the readiness benchmark (BENCH_K8S_READY_COUNT, 20)
#       --no-warmup           skip the untimed warm-up round
#       --trace               one more apply (untimed) with TF_LOG=debug: where a Create's time goes
#       --src DIR             build the provider and k8sbench from DIR instead of this checkout
#                             (e.g. a worktree with a candidate fix) (BENCH_K8S_SRC)
#       --max-load L          wait while the 1-minute load average is above L (BENCH_K8S_MAX_LOAD, 3) ...
#       --max-wait S          ... for at most S seconds, then run anyway and say so (BENCH_K8S_MAX_WAIT, 120)
#       --update              write the results into BENCHMARKS-kubernetes.md (between its markers)
#       --keep                keep the work directory (audit log, apply logs, rendered objects)
#
# Progress goes to stderr; only the Markdown results go to stdout. Needs Go, bash, curl, openssl;
# Terraform is whatever scripts/terraform-cli.sh picks; the control plane binaries are built by
# scripts/controlplane.sh build when missing (about 12 minutes cold). A run takes about 5 minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

rounds="${BENCH_K8S_ROUNDS:-3}"
count="${BENCH_K8S_COUNT:-50}"
parallelism="${BENCH_K8S_PARALLELISM:-10}"
ready_count="${BENCH_K8S_READY_COUNT:-20}"
src="${BENCH_K8S_SRC:-$root}"
max_load="${BENCH_K8S_MAX_LOAD:-3}"
max_wait="${BENCH_K8S_MAX_WAIT:-120}"
warmup=1 trace=0 update=0 keep=0

source "$root/scripts/lib-bench.sh"
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n|--rounds) rounds="$2"; shift ;;
    -c|--count) count="$2"; shift ;;
    -p|--parallelism) parallelism="$2"; shift ;;
    --ready-count) ready_count="$2"; shift ;;
    --no-warmup) warmup=0 ;;
    --trace) trace=1 ;;
    --src) src="$2"; shift ;;
    --max-load) max_load="$2"; shift ;;
    --max-wait) max_wait="$2"; shift ;;
    --update) update=1 ;;
    --keep) keep=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-kubernetes.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
check_counts bench-kubernetes.sh rounds count parallelism ready_count
src="$(cd "$src" && pwd -P)"
[[ -f "$src/go.mod" ]] || { echo "bench-kubernetes.sh: --src $src has no go.mod" >&2; exit 2; }

log() { printf 'bench-k8s: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
t_start=$SECONDS
export CGO_ENABLED=0 CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
# Nothing from the caller's environment may change what is measured.
unset_measurement_env
unset KUBECONFIG RILL_CONTROLPLANE_DIR RILL_CONTROLPLANE_APISERVER_ARGS RILL_CONTROLPLANE_WATCH_PID

work="$(mktemp -d "${TMPDIR:-/tmp}/rill-bench-k8s.XXXXXX")"
cp_dir="$work/controlplane"
cp_started=0
probe_pid=""
cleanup() {
  local rc=$?
  [[ -z "$probe_pid" ]] || kill -TERM "$probe_pid" 2>/dev/null || true
  if [[ "$cp_started" == 1 ]]; then
    log "stopping the control plane"
    RILL_CONTROLPLANE_DIR="$cp_dir" RILL_CONTROLPLANE_BIN="$work/cpbin" "$root/scripts/controlplane.sh" stop >/dev/null 2>&1 || true
  fi
  if [[ "$keep" == 1 || $rc -ne 0 ]]; then log "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
prepare_update bench-kubernetes "$root/BENCHMARKS-kubernetes.md"
# The results' tables, statistics and verdicts against the targets (scripts/bench/report), from the
# raw figures this script records; built from this checkout (with --src too).
(cd "$root" && go build -trimpath -o "$work/report-tool" ./scripts/bench/report)

# Room on the nodes: every runtime asks for 1 CPU; earlier rounds' runtimes stay.
node_cpus="$(awk '$1 == "cpu:" { gsub(/"/, "", $2); print $2; exit }' "$root/scripts/bench/kubernetes/node.yaml")"
needed=$(((rounds + warmup) * 2 * count + trace * count + 2 * ready_count))
((needed <= node_cpus + 32)) ||
  { echo "bench-kubernetes.sh: $needed one-slot runtimes would not fit on the nodes ($node_cpus + 32 CPUs; scripts/bench/kubernetes/node.yaml)" >&2; exit 2; }

# ---------------------------------------------------------------------------------------------------
# Machine and load.
wait_for_quiet 15
cpu_model="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
mem_total="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
go_version="$(go env GOVERSION)"
head_rev="$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty=""
[[ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]] || dirty=" + uncommitted changes"
source_desc="$src at $head_rev$dirty"
[[ "$src" == "$root" ]] && source_desc="working tree at $head_rev$dirty"

# ---------------------------------------------------------------------------------------------------
# Builds: control plane binaries (reused), provider, k8sbench; Terraform CLI.
log "control plane binaries: scripts/controlplane.sh build"
cp_bin="$("$root/scripts/controlplane.sh" build)"
# Hard links (a copy when that fails): another checkout's rebuild replaces the directory, not the
# files, so this run keeps working binaries whatever happens to the shared one.
cp -al "$cp_bin" "$work/cpbin" 2>/dev/null || cp -a "$cp_bin" "$work/cpbin"
kubectl_bin="$work/cpbin/kubectl"
k8s_version="$("$kubectl_bin" version --client -o json 2>/dev/null | awk -F'"' '/gitVersion/ { print $4; exit }')"

mkdir -p "$work/bin"
log "building the provider and k8sbench from $src"
(cd "$src" && go build -trimpath -o "$work/bin/terraform-provider-rill" .)
if [[ "$src" == "$root" ]]; then
  go build -trimpath -o "$work/k8sbench" ./scripts/bench/kubernetes/k8sbench
else
  # This checkout's helper, built inside --src (the internal/ import rule) so that it links that
  # tree's provisioner; the temporary copy is removed at once.
  helper_tmp="$src/scripts/bench/kubernetes/k8sbench-build-$$"
  mkdir -p "$helper_tmp"
  cp scripts/bench/kubernetes/k8sbench/*.go "$helper_tmp/"
  rc=0
  (cd "$src" && go build -trimpath -o "$work/k8sbench" "./scripts/bench/kubernetes/$(basename "$helper_tmp")") || rc=$?
  rm -rf "$helper_tmp"
  ((rc == 0)) || die "building k8sbench in $src failed"
fi
k8sbench="$work/k8sbench"

tf="$(scripts/terraform-cli.sh)"
: >"$work/empty.tfrc"
tf_version="$(TF_CLI_CONFIG_FILE="$work/empty.tfrc" "$tf" version)"
tf_version="${tf_version%%$'\n'*}"
cat >"$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "rill-provisioner/rill" = "$work/bin"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc"

# ---------------------------------------------------------------------------------------------------
# Control plane.
audit_log="$work/audit.log"
log "starting the control plane in $cp_dir (audit log $audit_log)"
cp_started=1
export RILL_CONTROLPLANE_BIN="$work/cpbin"
kubeconfig="$(RILL_CONTROLPLANE_DIR="$cp_dir" "$root/scripts/controlplane.sh" start \
  --audit-policy "$root/scripts/bench/kubernetes/audit-policy.yaml" --audit-log "$audit_log" --watch-pid $$)"
[[ -f "$kubeconfig" ]] || die "no kubeconfig from scripts/controlplane.sh start"
kc() { "$kubectl_bin" --kubeconfig "$kubeconfig" --cache-dir "$work/kube-cache" "$@"; }
kc apply -f "$root/scripts/bench/kubernetes/node.yaml" >/dev/null
for _ in $(seq 1 300); do
  [[ "$(kc get node kwok-bench-node-0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.spec.taints}' 2>/dev/null)" == "True|" ]] && break
  sleep 0.2
done
[[ "$(kc get node kwok-bench-node-0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.spec.taints}')" == "True|" ]] ||
  die "node kwok-bench-node-0 did not become Ready and untainted"

# ---------------------------------------------------------------------------------------------------
# Helpers.
now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

write_tf_config() { # $1 = dir
  mkdir -p "$1"
  cat >"$1/main.tf" <<TF
terraform {
  required_providers {
    rill = { source = "rill-provisioner/rill" }
  }
}

variable "namespace" {
  type = string
}

provider "rill" {
  provisioner_set_json = jsonencode({
    k8s = {
      type = "kubernetes"
      spec = {
        host            = "http://*.rill.bench.invalid"
        namespace       = var.namespace
        kubeconfig_path = "$kubeconfig"
        timeout_seconds = 300
        ping_path       = "" # no Service networking: kwok runs no containers
        # Under load the scheduler may try a pod before its cache has the volume kwok just made for
        # the claim ('persistentvolume "pvc-..." not found'), which AwaitReady takes for a final
        # "cannot be scheduled" (see BENCHMARKS-kubernetes.md); the grace lets it wait, as kubectl
        # rollout status does.
        unschedulable_grace_seconds = 60
      }
    }
  })
  default_provisioner = "k8s"
}

resource "rill_runtime" "bench" {
  count = $count
  slots = 1
}
TF
}

# tf_apply DIR NS LOG [VAR=VALUE...]: prints "wall cpu" (seconds; cpu = user + sys of terraform and
# its provider processes, which bash's time counts since terraform waits for them).
tf_apply() {
  local dir="$1" ns="$2" logf="$3" t
  shift 3
  local TIMEFORMAT='%3R %3U %3S'
  if ! t="$( { time env "$@" "$tf" -chdir="$dir" apply -auto-approve -input=false -no-color \
      -parallelism="$parallelism" -var "namespace=$ns" >"$logf" 2>&1; } 2>&1 )"; then
    log "terraform apply failed in $dir; last lines of $logf:"
    tail -20 "$logf" >&2
    return 1
  fi
  local got
  got="$(grep -c '^rill_runtime\.bench\[[0-9]*\]: Creation complete' "$logf" || true)"
  [[ "$got" == "$count" ]] || { log "apply in $dir created $got runtimes, expected $count (see $logf)"; return 1; }
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}

# kubectl_apply NS OBJECTS LOG: server-side apply of the rendered objects, then rollout status of each
# Deployment, $parallelism at a time. Prints "wall cpu apply_wall".
kubectl_apply() {
  local ns="$1" objs="$2" logf="$3" t0 t1 t2 t
  local TIMEFORMAT='%3U %3S'
  t="$( { time {
      t0=$(now_ns)
      kc apply --server-side --field-manager=kubectl-bench -f "$objs" >"$logf" 2>&1 || exit 1
      t1=$(now_ns)
      xargs -P "$parallelism" -I{} "$kubectl_bin" --kubeconfig "$kubeconfig" --cache-dir "$work/kube-cache" \
        rollout status -n "$ns" "deployment/{}" --timeout=300s <"$objs.deployments" >>"$logf" 2>&1 || exit 1
      t2=$(now_ns)
      echo "$t0 $t1 $t2" >"$logf.times"
    }; } 2>&1 )" || { log "kubectl apply or rollout status failed; last lines of $logf:"; tail -20 "$logf" >&2; return 1; }
  local ok
  ok="$(grep -c 'successfully rolled out' "$logf" || true)"
  [[ "$ok" == "$count" ]] || { log "kubectl: $ok of $count deployments rolled out (see $logf)"; return 1; }
  read -r t0 t1 t2 <"$logf.times"
  awk -v w="$(secs "$t0" "$t2")" -v a="$(secs "$t0" "$t1")" -v c="$t" 'BEGIN { split(c, x, " "); printf "%.3f %.3f %.3f\n", w, x[1] + x[2], a }'
}

# audit_count UA FROM TO OUT: the provider's (or kubectl's) requests in the window; prints the total.
audit_count() {
  "$k8sbench" audit -log "$audit_log" -user-agent "$1" -from "$2" -to "$3" >"$4"
  awk '$1 == "total" { print $2 }' "$4"
}

# ---------------------------------------------------------------------------------------------------
# 1 + 2: apply rounds, each followed by a refresh plan. The runtimes of earlier rounds stay (deleting
# a namespace of 50 runtimes takes the controllers about 30 s, and doing it in the background would
# load the rounds that follow); the node has room for all of them.
start_round=$((warmup ? 0 : 1))
plan_note=""
idle_secs=5
latency_windows=()
for r in $(seq "$start_round" "$rounds"); do
  tf_ns="bench-tf-$r" kc_ns="bench-kc-$r"
  kc create namespace "$tf_ns" >/dev/null
  kc create namespace "$kc_ns" >/dev/null
  tf_dir="$work/tf-$r"
  write_tf_config "$tf_dir"
  "$k8sbench" render -namespace "$kc_ns" -count "$count" -out "$work/objects-$r.yaml"
  label="round $r/$rounds"
  ((r == 0)) && label="warm-up"

  order=(tf kubectl)
  ((r % 2 == 0)) && order=(kubectl tf)
  for what in "${order[@]}"; do
    if [[ "$what" == tf ]]; then
      s=$(now_ns)
      res="$(tf_apply "$tf_dir" "$tf_ns" "$work/tf-apply-$r.log")"
      e=$(now_ns)
      n="$(audit_count terraform-provider-rill "$s" "$e" "$work/tf-apply-$r.requests")"
      log "$label terraform: wall ${res% *}s cpu ${res#* }s, $n API requests (load $(loadavg))"
      ((r > 0)) && echo "$res $n" >>"$work/tf.times"
    else
      s=$(now_ns)
      res="$(kubectl_apply "$kc_ns" "$work/objects-$r.yaml" "$work/kubectl-$r.log")"
      e=$(now_ns)
      n="$(audit_count kubectl "$s" "$e" "$work/kubectl-$r.requests")"
      read -r w c a <<<"$res"
      log "$label kubectl:   wall ${w}s (apply ${a}s) cpu ${c}s, $n API requests (load $(loadavg))"
      ((r > 0)) && echo "$res $n" >>"$work/kubectl.times"
    fi
  done

  # 2. Refresh plan over the runtimes just applied, with the latency probe running from idle_secs
  # before it (the quiet reference) to its end.
  "$k8sbench" probe -kubeconfig "$kubeconfig" -interval 50ms -out "$work/probe.txt" &
  probe_pid=$!
  i=$(now_ns)
  sleep "$idle_secs"
  s=$(now_ns)
  plan_load="$(load1)"
  plan_rc=0
  "$tf" -chdir="$tf_dir" plan -input=false -no-color -detailed-exitcode -parallelism="$parallelism" \
    -var "namespace=$tf_ns" >"$work/tf-plan-$r.log" 2>&1 || plan_rc=$?
  e=$(now_ns)
  kill -TERM "$probe_pid"
  wait "$probe_pid" || die "the latency probe failed"
  probe_pid=""
  ((r > 0)) && latency_windows+=(-window "idle:$i:$s" -window "busy:$s:$e")
  case "$plan_rc" in
    0) ;;
    2) plan_note="the plan of $label found changes (see tf-plan-$r.log)"; log "warning: $plan_note" ;;
    *) log "terraform plan failed:"; tail -20 "$work/tf-plan-$r.log" >&2; exit 1 ;;
  esac
  n="$(audit_count terraform-provider-rill "$s" "$e" "$work/tf-plan-$r.requests")"
  log "$label plan: $(secs "$s" "$e")s, $n API requests ($(awk -v n="$n" -v c="$count" 'BEGIN { printf "%.2f", n / c }') per runtime)"
  ((r > 0)) && echo "$n $(secs "$s" "$e") $plan_load" >>"$work/plan.counts"
done

# Optional: one traced apply, to see where a Create's time goes.
trace_md=""
if [[ "$trace" == 1 ]]; then
  kc create namespace bench-tf-trace >/dev/null
  write_tf_config "$work/tf-trace"
  s=$(now_ns)
  res="$(tf_apply "$work/tf-trace" bench-tf-trace "$work/tf-apply-trace.log" TF_LOG=debug TF_LOG_PATH="$work/tf-trace.log")"
  e=$(now_ns)
  log "traced apply (TF_LOG=debug): wall ${res% *}s"
  "$k8sbench" tflog -log "$work/tf-trace.log" -audit-log "$audit_log" -namespace bench-tf-trace >"$work/tf-trace.summary"
  cat "$work/tf-trace.summary" >&2
  trace_md="$(cat "$work/tf-trace.summary")"
fi

# ---------------------------------------------------------------------------------------------------
# 3. Readiness detection latency.
ready_rows=()
for conc in 1 "$parallelism"; do
  ns="bench-ready-c$conc"
  kc create namespace "$ns" >/dev/null
  "$k8sbench" ready -kubeconfig "$kubeconfig" -namespace "$ns" -count "$ready_count" -concurrency "$conc" \
    -audit-log "$audit_log" >"$work/ready-c$conc.txt" || { cat "$work/ready-c$conc.txt" >&2; exit 1; }
  grep '^summary' "$work/ready-c$conc.txt" | sed "s/^/  concurrency $conc: /" >&2
  ready_rows+=("$conc")
  [[ "$parallelism" == 1 ]] && break
done

# ---------------------------------------------------------------------------------------------------
# Results.
"$k8sbench" latency -audit-log "$audit_log" -probe "$work/probe.txt" "${latency_windows[@]}" >"$work/latency.txt"
report_args=(-dir "$work" -count "$count" -rounds "$rounds" -parallelism "$parallelism" -ready-count "$ready_count")
report_args+=(-idle-secs "$idle_secs" -ready-concurrency "$(IFS=,; echo "${ready_rows[*]}")" -plan-note "$plan_note")
tables="$("$work/report-tool" kubernetes "${report_args[@]}")" || exit 1
load_end="$(loadavg)"
elapsed=$((SECONDS - t_start))

results="$(
  echo "Run of $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) × $cpu_model, $mem_total RAM; $go_version; $tf_version;"
  echo "Kubernetes $k8s_version (scripts/controlplane.sh: etcd, kube-apiserver, controller manager, scheduler, kwok); $source_desc."
  echo "Load average (1/5/15 min): $load_note; at the end: $load_end. The run took ${elapsed}s."
  echo
  echo "$tables"
  if [[ -n "$trace_md" ]]; then
    echo
    echo "Traced apply (TF_LOG=debug, untimed):"
    echo
    echo '```'
    echo "$trace_md"
    echo '```'
  fi
)"
echo "$results"

if [[ "$update" == 1 ]]; then
  printf '%s\n' "$results" | write_results bench-kubernetes "$root/BENCHMARKS-kubernetes.md"
fi
log "done in ${elapsed}s"
