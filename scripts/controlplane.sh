#!/usr/bin/env bash
# A real Kubernetes control plane on loopback without Docker: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok (fake node, simulated pods and volumes),
# all built from the Go module proxy. See tools/controlplane/README.md.
#
#   scripts/controlplane.sh build                 build (or reuse) the binaries
#   scripts/controlplane.sh start [--chaos] [--audit-policy FILE --audit-log FILE] [--watch-pid PID]
#                                                 start everything; prints the kubeconfig path
#   scripts/controlplane.sh stop                  stop everything started from the state dir
#   scripts/controlplane.sh status                exit 0 when running and ready
#   scripts/controlplane.sh kubeconfig            print the kubeconfig path
#   scripts/controlplane.sh env                   print shell exports (KUBECONFIG, KUBECTL, ...)
#   scripts/controlplane.sh bin-dir               print the binaries' directory
#
# Environment:
#   RILL_CONTROLPLANE_DIR   state dir (default: ${TMPDIR:-/tmp}/rill-controlplane)
#   RILL_CONTROLPLANE_BIN   binaries dir (default: <repo>/.tools/controlplane/<k8s version>)
#   RILL_CONTROLPLANE_START_TIMEOUT  seconds to wait for each component's readiness (default 180: a
#                                    loaded 2-core machine can take minutes)
#   RILL_CONTROLPLANE_WATCH_PID      like --watch-pid: stop everything once that process exits
#   RILL_CONTROLPLANE_APISERVER_ARGS extra kube-apiserver flags (space-separated)
set -euo pipefail

K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.4
KWOK_VERSION=v0.8.0

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
TOOLS_MOD="$REPO_ROOT/tools/controlplane"
SUPPORT_DIR="$SCRIPT_DIR/controlplane"
BIN_DIR=${RILL_CONTROLPLANE_BIN:-"$REPO_ROOT/.tools/controlplane/$K8S_VERSION"}
STATE_DIR=${RILL_CONTROLPLANE_DIR:-"${TMPDIR:-/tmp}/rill-controlplane"}
START_TIMEOUT=${RILL_CONTROLPLANE_START_TIMEOUT:-180}
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
# Order in which processes are started; stopped in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

log() { echo "controlplane: $*" >&2; }
die() { log "error: $*"; exit 1; }

stamp() {
	# Everything that decides the binaries' content; a change triggers a rebuild.
	printf 'k8s=%s etcd=%s kwok=%s go=%s gomod=%s\n' "$K8S_VERSION" "$ETCD_VERSION" "$KWOK_VERSION" \
		"$(go env GOVERSION)" "$(cat "$TOOLS_MOD/go.mod" "$TOOLS_MOD/go.sum" | sha256sum | cut -c1-16)"
}

binaries_ok() {
	local b
	for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
	[[ -f "$BIN_DIR/.stamp" ]] || return 1
	# Without a Go toolchain (e.g. prebuilt dir handed over), trust what is there.
	command -v go >/dev/null 2>&1 || return 0
	[[ "$(cat "$BIN_DIR/.stamp")" == "$(stamp)" ]]
}

cmd_build() {
	command -v go >/dev/null 2>&1 || die "go is required to build"
	mkdir -p "$(dirname "$BIN_DIR")"
	# One build at a time per binaries dir (parallel test packages may all call build). The lock's
	# fd is closed afterwards: processes that `start` launches must not inherit (and hold) it.
	exec 9>"$BIN_DIR.lock"
	flock 9
	build_locked
	exec 9>&-
}

build_locked() {
	if binaries_ok; then
		log "binaries up to date in $BIN_DIR"
		echo "$BIN_DIR"
		return 0
	fi
	local tmp="$BIN_DIR.tmp.$$" t0=$SECONDS
	rm -rf "$tmp"
	mkdir -p "$tmp"
	local major=${K8S_VERSION#v}; major=${major%%.*}
	local minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
	local ldflags="-s -w"
	local key val
	for kv in "gitVersion=$K8S_VERSION" "gitMajor=$major" "gitMinor=$minor" "gitTreeState=clean" \
		"buildDate=1970-01-01T00:00:00Z"; do
		key=${kv%%=*}; val=${kv#*=}
		ldflags+=" -X k8s.io/client-go/pkg/version.$key=$val -X k8s.io/component-base/version.$key=$val"
	done
	export GOFLAGS="-buildvcs=false -mod=readonly" CGO_ENABLED=0
	log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $K8S_VERSION (cold: ~12 min on 2 cores)"
	(cd "$TOOLS_MOD" && go build -ldflags "$ldflags" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubectl)
	log "building etcd $ETCD_VERSION"
	(cd "$TOOLS_MOD" && go build -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
	log "building kwok $KWOK_VERSION"
	# kwok has its own dependency versions (newer k8s libraries): build it from its own module.
	(cd "$tmp" && GOFLAGS=-buildvcs=false GOBIN="$tmp" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
	stamp >"$tmp/.stamp"
	rm -rf "$BIN_DIR"
	mv "$tmp" "$BIN_DIR"
	log "built in $((SECONDS - t0))s into $BIN_DIR"
	echo "$BIN_DIR"
}

# ------------------------------------------------------------------ state dir
PID_DIR="$STATE_DIR/pids"
LOG_DIR="$STATE_DIR/logs"
PKI_DIR="$STATE_DIR/pki"
KUBECONFIG_PATH="$STATE_DIR/kubeconfig"
INFO_FILE="$STATE_DIR/controlplane.env"
MARKER="$STATE_DIR/.rill-controlplane"
NODE_NAME=kwok-node-0

ensure_cmd() { # ensure_cmd COMMAND DEBIAN_PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		log "installing $2 (apt-get)"
		apt-get install -y -q "$2" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "$2" >/dev/null 2>&1; } ||
			die "could not install $2"
	else
		die "$1 is required (Debian package $2)"
	fi
}

# argv_of PID: the process's arguments into the ARGV array (bash builtins only: no fork per pid).
argv_of() {
	ARGV=()
	{ mapfile -d '' -t ARGV <"/proc/$1/cmdline"; } 2>/dev/null
	((${#ARGV[@]} > 0))
}

# Prints the pid recorded for a component if that process is alive and still runs our binary.
component_pid() {
	local f="$PID_DIR/$1.pid" pid argv0
	[[ -f "$f" ]] || return 1
	read -r pid argv0 <"$f" || true
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	argv_of "$pid" && [[ "${ARGV[0]}" == "$argv0" ]] || return 1
	echo "$pid"
}

# Processes whose argv[0] is one of our binaries and whose arguments name this state dir.
stray_pids() {
	local d
	for d in /proc/[0-9]*; do
		argv_of "${d#/proc/}" || continue
		[[ "${ARGV[0]}" == "$BIN_DIR/"* && " ${ARGV[*]}" == *"$STATE_DIR/"* ]] && echo "${d#/proc/}"
	done
	return 0
}

# free_ports VAR...: distinct ports on 127.0.0.1 that nothing listens on, one into each VAR, picked
# by internal/testutil/freeport (below Linux' ephemeral range, so that outgoing connections do not
# take one before we bind it; a port taken anyway is retried by cmd_start).
free_ports() {
	local ports var port
	ports=$(cd "$REPO_ROOT" && go run ./internal/testutil/freeport/cmd/freeport "$#") || die "picking free ports failed"
	for var in "$@"; do
		read -r port
		[[ -n "$port" ]] || die "freeport printed too few ports: $ports"
		printf -v "$var" '%s' "$port"
	done <<<"$ports"
}

# launch NAME ARGS...: start a binary in its own session/process group, logs into logs/NAME.log,
# and return once the process runs the binary (or has died).
#
# Why wait: until execve completes, /proc/PID/cmdline still shows this shell or setsid, and
# component_pid (which checks argv[0], so that a recycled pid is never taken for ours) reports the
# component as exited. On a loaded machine that window lasts 15 to 100 ms (measured: fork to the
# binary's argv under load 30; /proc/PID/cmdline even reads empty in the middle of execve), as long
# as the first readiness probe: that was the "kube-apiserver exited" with an empty log that failed a
# start now and then, most often the first start after a build or a long idle (binaries not cached).
launch() {
	local name=$1; shift
	local bin="$BIN_DIR/$name" pid deadline=$((SECONDS + 60))
	setsid "$bin" "$@" </dev/null >"$LOG_DIR/$name.log" 2>&1 &
	pid=$!
	echo "$pid $bin" >"$PID_DIR/$name.pid"
	while ((SECONDS < deadline)); do
		argv_of "$pid" && [[ "${ARGV[0]}" == "$bin" ]] && return 0
		# Dead already (reaped, or a zombie): wait_for reports it with the log.
		kill -0 "$pid" 2>/dev/null || return 0
		[[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" == Z ]] && return 0
		sleep 0.02 # meanwhile cmdline reads as the shell, setsid, or empty (mid-execve)
	done
}

# exit_reason NAME: how the component's process ended, as far as this shell can tell.
exit_reason() {
	local f="$PID_DIR/$1.pid" pid argv0 status
	read -r pid argv0 <"$f" 2>/dev/null || { echo "no pid file"; return; }
	if kill -0 "$pid" 2>/dev/null; then
		argv_of "$pid" && echo "pid $pid is alive but runs ${ARGV[0]}, not $argv0" && return
		echo "pid $pid is a zombie"
		return
	fi
	wait "$pid" 2>/dev/null
	status=$?
	if ((status > 128)); then echo "killed by signal $((status - 128))"; else echo "exit status $status"; fi
}

tail_log() { log "last lines of $LOG_DIR/$1.log:"; tail -n 25 "$LOG_DIR/$1.log" >&2 || true; }

# wait_for NAME TIMEOUT CMD...: poll CMD until it succeeds while NAME's process is alive.
wait_for() {
	local name=$1 timeout=$2; shift 2
	local deadline=$((SECONDS + timeout))
	while ((SECONDS < deadline)); do
		"$@" >/dev/null 2>&1 && return 0
		if [[ "$name" != - ]] && ! component_pid "$name" >/dev/null; then
			log "$name exited ($(exit_reason "$name"))"
			tail_log "$name"
			return 1
		fi
		sleep 0.2
	done
	log "timed out after ${timeout}s waiting for $name: $*"
	[[ "$name" != - ]] && tail_log "$name"
	return 1
}

http_ok() { # http_ok URL EXPECTED_BODY [curl args]
	local url=$1 want=$2; shift 2
	[[ "$(curl -ksS --max-time 2 "$@" "$url" 2>/dev/null)" == *"$want"* ]]
}

kctl() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" --request-timeout=10s "$@"; }

node_schedulable() {
	[[ "$(kctl get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.spec.taints}')" == "True|" ]]
}

running_components() {
	local c n=0
	for c in "${COMPONENTS[@]}"; do component_pid "$c" >/dev/null && n=$((n + 1)); done
	echo "$n"
}

is_ready() {
	[[ -f "$INFO_FILE" && -f "$KUBECONFIG_PATH" ]] || return 1
	[[ "$(running_components)" == "${#COMPONENTS[@]}" ]] || return 1
	# shellcheck disable=SC1090
	(source "$INFO_FILE" && http_ok "$RILL_CONTROLPLANE_SERVER/readyz" ok -H "Authorization: Bearer $RILL_CONTROLPLANE_TOKEN") || return 1
	node_schedulable
}

prepare_state_dir() {
	# Refuse to reuse paths that were not made by this script (e.g. a logs/ dir of the user's).
	local p
	if [[ -d "$STATE_DIR" && ! -f "$MARKER" ]]; then
		for p in etcd-data pids logs pki kwok-config.yaml kubeconfig controlplane.env start-args; do
			[[ -e "$STATE_DIR/$p" ]] && die "$STATE_DIR/$p exists but $STATE_DIR is not a control plane state dir; set RILL_CONTROLPLANE_DIR"
		done
	fi
	mkdir -p "$STATE_DIR"
	STATE_DIR=$(cd "$STATE_DIR" && pwd -P)
	PID_DIR="$STATE_DIR/pids" LOG_DIR="$STATE_DIR/logs" PKI_DIR="$STATE_DIR/pki"
	KUBECONFIG_PATH="$STATE_DIR/kubeconfig" INFO_FILE="$STATE_DIR/controlplane.env" MARKER="$STATE_DIR/.rill-controlplane"
	# Only what this script creates is removed: the dir itself may be shared with the caller.
	rm -rf "$STATE_DIR/etcd-data" "$PID_DIR" "$LOG_DIR" "$PKI_DIR" "$STATE_DIR/kwok-config.yaml" \
		"$KUBECONFIG_PATH" "$INFO_FILE" "$STATE_DIR/start-args"
	touch "$MARKER"
	mkdir -p "$PID_DIR" "$LOG_DIR" "$PKI_DIR" "$STATE_DIR/etcd-data"
	chmod 700 "$STATE_DIR/etcd-data" "$PKI_DIR"
}

# Resolve the state dir to its physical path (pid matching compares command lines).
resolve_state_dir() {
	if [[ -d "$STATE_DIR" ]]; then
		STATE_DIR=$(cd "$STATE_DIR" && pwd -P)
		PID_DIR="$STATE_DIR/pids" LOG_DIR="$STATE_DIR/logs" PKI_DIR="$STATE_DIR/pki"
		KUBECONFIG_PATH="$STATE_DIR/kubeconfig" INFO_FILE="$STATE_DIR/controlplane.env" MARKER="$STATE_DIR/.rill-controlplane"
	fi
}

write_kubeconfig() { # write_kubeconfig PATH SERVER USER TOKEN
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rill-controlplane
  cluster:
    server: $2
    insecure-skip-tls-verify: true
users:
- name: $3
  user:
    token: $4
contexts:
- name: rill-controlplane
  context:
    cluster: rill-controlplane
    user: $3
    namespace: default
current-context: rill-controlplane
EOF
	chmod 600 "$1"
}

start_once() {
	local chaos=$1 audit_policy=$2 audit_log=$3
	local t0=$SECONDS
	prepare_state_dir

	local etcd_port etcd_peer_port api_port kcm_port sched_port kwok_port
	free_ports etcd_port etcd_peer_port api_port kcm_port sched_port kwok_port

	# Credentials: static tokens (every user in system:masters) and the service-account key pair.
	# Each component has its own user so that an audit log tells the test's calls ("admin")
	# apart from the controllers' (system:kube-controller-manager, system:kube-scheduler, kwok).
	local server="https://127.0.0.1:$api_port" token user
	: >"$PKI_DIR/tokens.csv"
	for user in admin system:kube-controller-manager system:kube-scheduler kwok; do
		token=$(openssl rand -hex 24)
		echo "$token,$user,$user,\"system:masters\"" >>"$PKI_DIR/tokens.csv"
		case "$user" in
		admin) write_kubeconfig "$KUBECONFIG_PATH" "$server" admin "$token" ;;
		system:kube-*) write_kubeconfig "$PKI_DIR/${user#system:}.kubeconfig" "$server" "$user" "$token" ;;
		*) write_kubeconfig "$PKI_DIR/$user.kubeconfig" "$server" "$user" "$token" ;;
		esac
	done
	token=$(awk -F, '$2 == "admin" {print $1}' "$PKI_DIR/tokens.csv")
	chmod 600 "$PKI_DIR/tokens.csv"
	openssl genrsa -out "$PKI_DIR/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
	cat >"$INFO_FILE" <<EOF
RILL_CONTROLPLANE_DIR=$STATE_DIR
RILL_CONTROLPLANE_BIN=$BIN_DIR
KUBECONFIG=$KUBECONFIG_PATH
RILL_CONTROLPLANE_KUBECTL=$BIN_DIR/kubectl
RILL_CONTROLPLANE_SERVER=$server
RILL_CONTROLPLANE_TOKEN=$token
RILL_CONTROLPLANE_NODE=$NODE_NAME
RILL_CONTROLPLANE_ETCD=http://127.0.0.1:$etcd_port
RILL_CONTROLPLANE_KWOK=http://127.0.0.1:$kwok_port
RILL_CONTROLPLANE_CHAOS=$chaos
RILL_CONTROLPLANE_AUDIT_LOG=$audit_log
EOF

	# kwok configuration: the Stage documents (plus the opt-in chaos stages).
	local f first=1
	{
		for f in "$SUPPORT_DIR"/kwok/stages/*.yaml $([[ $chaos == 1 ]] && echo "$SUPPORT_DIR"/kwok/chaos/*.yaml); do
			((first)) || echo '---'
			first=0
			cat "$f"
		done
	} >"$STATE_DIR/kwok-config.yaml"

	launch etcd --name=rill --data-dir="$STATE_DIR/etcd-data" \
		--listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
		--listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
		--initial-cluster="rill=http://127.0.0.1:$etcd_peer_port" --initial-cluster-state=new \
		--unsafe-no-fsync --log-level=warn
	wait_for etcd "$START_TIMEOUT" http_ok "http://127.0.0.1:$etcd_port/health" '"health":"true"' || return 1

	local audit_args=()
	[[ -n "$audit_policy" ]] && audit_args+=(--audit-policy-file="$audit_policy")
	[[ -n "$audit_log" ]] && audit_args+=(--audit-log-path="$audit_log" --audit-log-mode=blocking)
	local extra_api=()
	# shellcheck disable=SC2206
	[[ -n "${RILL_CONTROLPLANE_APISERVER_ARGS:-}" ]] && extra_api=(${RILL_CONTROLPLANE_APISERVER_ARGS})
	launch kube-apiserver --etcd-servers="http://127.0.0.1:$etcd_port" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
		--cert-dir="$PKI_DIR/apiserver" --token-auth-file="$PKI_DIR/tokens.csv" \
		--authorization-mode=RBAC --allow-privileged=true \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI_DIR/sa.pub" --service-account-signing-key-file="$PKI_DIR/sa.key" \
		--service-cluster-ip-range=10.96.0.0/16 --profiling=false --v=1 \
		"${audit_args[@]}" "${extra_api[@]}"
	wait_for kube-apiserver "$START_TIMEOUT" http_ok "$server/readyz" ok -H "Authorization: Bearer $token" || return 1
	local t_api=$((SECONDS - t0))

	local kc
	common_args() {
		kc="$PKI_DIR/$1.kubeconfig"
		echo --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
			--authentication-skip-lookup=true --leader-elect=false --bind-address=127.0.0.1 --profiling=false
	}
	# shellcheck disable=SC2046
	launch kube-controller-manager $(common_args kube-controller-manager) --secure-port="$kcm_port" --cert-dir="$PKI_DIR/kcm" \
		--service-account-private-key-file="$PKI_DIR/sa.key" --use-service-account-credentials=false \
		--root-ca-file="$PKI_DIR/apiserver/apiserver.crt" --cluster-name=rill \
		--controllers='*,-nodeipam,-cloud-node-lifecycle,-service,-route' \
		--node-monitor-grace-period=2m
	# shellcheck disable=SC2046
	launch kube-scheduler $(common_args kube-scheduler) --secure-port="$sched_port" --cert-dir="$PKI_DIR/scheduler"
	launch kwok --kubeconfig="$PKI_DIR/kwok.kubeconfig" --config="$STATE_DIR/kwok-config.yaml" \
		--manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		--node-ip=127.0.0.1 --node-port="$kwok_port" --server-address="127.0.0.1:$kwok_port" \
		--cidr=10.244.0.0/16

	# Cluster objects: the fake node, the kwok volume StorageClass (default) and its RBAC.
	kctl apply -f "$SUPPORT_DIR/kwok/manifests/" -f "$SUPPORT_DIR/node.yaml" >"$LOG_DIR/setup.log" 2>&1 ||
		{ cat "$LOG_DIR/setup.log" >&2; return 1; }
	wait_for kube-controller-manager "$START_TIMEOUT" http_ok "https://127.0.0.1:$kcm_port/healthz" ok || return 1
	wait_for kube-scheduler "$START_TIMEOUT" http_ok "https://127.0.0.1:$sched_port/healthz" ok || return 1
	wait_for kwok "$START_TIMEOUT" http_ok "http://127.0.0.1:$kwok_port/healthz" ok || return 1
	# Ready and without the not-ready taint (removed by the node lifecycle controller).
	wait_for kwok "$START_TIMEOUT" node_schedulable || return 1
	# Pods cannot be created before the service account controller made "default".
	wait_for kube-controller-manager "$START_TIMEOUT" kctl get serviceaccount default -n default || return 1
	# Published by a controller once the controller manager's informers have synced.
	wait_for kube-controller-manager "$START_TIMEOUT" kctl get configmap kube-root-ca.crt -n default || return 1
	log "ready in $((SECONDS - t0))s (API server after ${t_api}s); kubeconfig: $KUBECONFIG_PATH"
}

cmd_start() {
	local chaos=0 audit_policy="" audit_log="" watch_pid=${RILL_CONTROLPLANE_WATCH_PID:-}
	while (($#)); do
		case "$1" in
		--chaos) chaos=1 ;;
		--watch-pid) watch_pid=${2:?--watch-pid PID}; shift ;;
		--watch-pid=*) watch_pid=${1#*=} ;;
		--audit-policy) audit_policy=$(realpath -m "${2:?--audit-policy FILE}"); shift ;;
		--audit-policy=*) audit_policy=$(realpath -m "${1#*=}") ;;
		--audit-log) audit_log=$(realpath -m "${2:?--audit-log FILE}"); shift ;;
		--audit-log=*) audit_log=$(realpath -m "${1#*=}") ;;
		*) die "start: unknown argument $1" ;;
		esac
		shift
	done
	[[ -z "$watch_pid" ]] || kill -0 "$watch_pid" 2>/dev/null || die "--watch-pid $watch_pid: no such process"
	[[ -n "$audit_log" && -z "$audit_policy" ]] && die "--audit-log needs --audit-policy"
	[[ -z "$audit_policy" || -f "$audit_policy" ]] || die "audit policy $audit_policy not found"
	[[ -n "$audit_log" ]] && mkdir -p "$(dirname "$audit_log")"
	ensure_cmd openssl openssl
	ensure_cmd curl curl
	ensure_cmd setsid util-linux
	command -v go >/dev/null 2>&1 || die "go is required (internal/testutil/freeport picks the ports)"
	binaries_ok || cmd_build >/dev/null

	resolve_state_dir
	local args="chaos=$chaos audit_policy=$audit_policy audit_log=$audit_log watch=$watch_pid bin=$BIN_DIR"
	if [[ -f "$STATE_DIR/start-args" && "$(cat "$STATE_DIR/start-args")" == "$args" ]] && is_ready; then
		log "already running in $STATE_DIR"
		echo "$KUBECONFIG_PATH"
		return 0
	fi
	cmd_stop 2>/dev/null || true

	local attempt
	for attempt in 1 2 3; do
		if start_once "$chaos" "$audit_policy" "$audit_log"; then
			[[ -n "$watch_pid" ]] && start_watchdog "$watch_pid"
			echo "$args" >"$STATE_DIR/start-args"
			echo "$KUBECONFIG_PATH"
			return 0
		fi
		cmd_stop >/dev/null 2>&1 || true
		# A port taken between choosing and binding it is worth another try; anything else is not.
		grep -qs 'address already in use' "$LOG_DIR"/*.log || break
		log "a port was taken meanwhile; retrying (attempt $((attempt + 1)))"
	done
	die "start failed; logs in $LOG_DIR"
}

# start_watchdog PID: stop the control plane when process PID (e.g. a `go test` binary) exits,
# so that a test killed by a timeout or a panic leaves nothing running.
start_watchdog() {
	# shellcheck disable=SC2016 # $1..$3 are expanded by the watchdog's shell
	RILL_CONTROLPLANE_DIR="$STATE_DIR" RILL_CONTROLPLANE_BIN="$BIN_DIR" setsid bash -c '
		while kill -0 "$1" 2>/dev/null; do sleep 1; done
		echo "watched process $1 is gone: stopping"
		rm -f "$2"
		exec "$3" stop' watchdog "$1" "$PID_DIR/watchdog.pid" "$SCRIPT_DIR/controlplane.sh" \
		</dev/null >>"$LOG_DIR/watchdog.log" 2>&1 &
	echo "$! bash" >"$PID_DIR/watchdog.pid"
}

cmd_stop() {
	resolve_state_dir
	# The state is thrown away at the next start, so there is no point in a long graceful
	# shutdown: SIGTERM, 1 s of grace (the API server takes longer), then SIGKILL. The API server writes audit
	# events synchronously (--audit-log-mode=blocking), so none is lost.
	local c pid pids=() etcd_pid=""
	if pid=$(component_pid watchdog); then signal_and_wait "$pid"; fi
	rm -f "$PID_DIR/watchdog.pid"
	for c in "${COMPONENTS[@]}"; do
		pid=$(component_pid "$c") || { rm -f "$PID_DIR/$c.pid"; continue; }
		if [[ "$c" == etcd ]]; then etcd_pid=$pid; else pids+=("$pid"); fi
	done
	signal_and_wait "${pids[@]}"
	# etcd last, after the API server let go of it.
	[[ -n "$etcd_pid" ]] && { signal_and_wait "$etcd_pid"; pids+=("$etcd_pid"); }
	# Anything of ours left over (e.g. pid files lost): our binaries naming this state dir.
	local strays
	strays=$(stray_pids)
	if [[ -n "$strays" ]]; then
		log "killing leftover processes: $strays"
		# shellcheck disable=SC2086
		kill -KILL $strays 2>/dev/null || true
	fi
	rm -f "$PID_DIR"/*.pid "$STATE_DIR/start-args" 2>/dev/null || true
	if ((${#pids[@]} > 0)); then log "stopped ${#pids[@]} processes"; else log "nothing was running"; fi
	return 0
}

signal_and_wait() { # signal_and_wait PID...: TERM each process group, KILL what is left after 1 s
	(($#)) || return 0
	local pid
	# Each component leads its own process group (setsid); signal the group.
	for pid in "$@"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
	wait_gone 1 "$@" && return 0
	for pid in "$@"; do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
	wait_gone 5 "$@" || log "warning: processes $* still alive after SIGKILL"
}

wait_gone() { # wait_gone TIMEOUT PID...
	local timeout=$1; shift
	local deadline=$((SECONDS + timeout)) p alive
	while :; do
		alive=0
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		((alive)) || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

cmd_status() {
	resolve_state_dir
	local c pid rss total=0
	for c in "${COMPONENTS[@]}"; do
		if pid=$(component_pid "$c"); then
			rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
			total=$((total + rss))
			printf '%-24s running  pid %-8s rss %6d MiB\n' "$c" "$pid" $((rss / 1024)) >&2
		else
			printf '%-24s stopped\n' "$c" >&2
		fi
	done
	printf '%-24s %d MiB\n' "total rss" $((total / 1024)) >&2
	if is_ready; then
		log "ready; kubeconfig: $KUBECONFIG_PATH"
		return 0
	fi
	log "not ready (state dir $STATE_DIR)"
	return 1
}

cmd_kubeconfig() {
	resolve_state_dir
	[[ -f "$KUBECONFIG_PATH" && -f "$INFO_FILE" ]] || die "not started (no kubeconfig in $STATE_DIR)"
	component_pid kube-apiserver >/dev/null || die "not running (state dir $STATE_DIR)"
	echo "$KUBECONFIG_PATH"
}

cmd_env() {
	resolve_state_dir
	[[ -f "$INFO_FILE" ]] || die "not started (no $INFO_FILE)"
	sed -e 's/^\([A-Z_]*\)=\(.*\)$/export \1='"'"'\2'"'"'/' "$INFO_FILE"
}

main() {
	case "${1:-}" in
	build) shift; cmd_build "$@" ;;
	start) shift; cmd_start "$@" ;;
	stop) shift; cmd_stop ;;
	status) shift; cmd_status ;;
	kubeconfig) shift; cmd_kubeconfig ;;
	env) shift; cmd_env ;;
	bin-dir) echo "$BIN_DIR" ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
}

# On one line: bash reads it whole before running it, so editing this file during a long build
# cannot make the running script read the edited text.
main "$@"; exit $?
