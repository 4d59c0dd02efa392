#!/usr/bin/env bash
# Smoke test of scripts/controlplane.sh: start (with chaos stages and an audit log) in a fresh
# state dir, roll out a Deployment, bind a PVC on the default StorageClass, make pods fail
# through the chaos stages, check the audit log, stop, and check that no process is left.
# Usage: scripts/controlplane/smoke.sh   (prints "N passed, N failed" at the end)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CP="$HERE/../controlplane.sh"
export RILL_CONTROLPLANE_DIR
RILL_CONTROLPLANE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rill-cp-smoke.XXXXXX")
passed=0 failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
ko() { echo "FAIL: $*"; failed=$((failed + 1)); }
eventually() { # eventually SECONDS CMD...: retry CMD until it succeeds
	local deadline=$((SECONDS + $1)); shift
	until "$@" 2>/dev/null; do ((SECONDS < deadline)) || return 1; sleep 0.2; done
}
check() { local what=$1; shift; if "$@"; then ok "$what"; else ko "$what"; fi; }

cleanup() { "$CP" stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

"$CP" build >/dev/null
cat >"$RILL_CONTROLPLANE_DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF
t0=$(date +%s.%N)
KUBECONFIG=$("$CP" start --chaos --audit-policy "$RILL_CONTROLPLANE_DIR/audit-policy.yaml" \
	--audit-log "$RILL_CONTROLPLANE_DIR/audit.log")
t1=$(date +%s.%N)
export KUBECONFIG
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "start-to-ready: %.1f s\n", b - a }'
eval "$("$CP" env)"
k() { "$RILL_CONTROLPLANE_KUBECTL" "$@"; }
"$CP" status || true

k apply --server-side -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, ports: [{containerPort: 80}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
EOF
check "deployment Available" k wait --for=condition=Available deployment/web --timeout=60s
check "pvc Bound (default StorageClass)" k wait --for=jsonpath='{.status.phase}'=Bound pvc/data --timeout=60s
check "pvc got the default StorageClass" test "$(k get pvc data -o jsonpath='{.spec.storageClassName}')" = kwok-volume
check "pod Running on the fake node" test "$(k get pods -l app=web -o jsonpath='{.items[0].status.phase}/{.items[0].spec.nodeName}')" = "Running/kwok-node-0"

# Chaos (rill stage): a Deployment whose pods wait in CrashLoopBackOff, one in ErrImagePull.
for reason in CrashLoopBackOff ErrImagePull; do
	name=$(echo "$reason" | tr '[:upper:]' '[:lower:]')
	k apply --server-side -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: $name}}
  template:
    metadata:
      labels: {app: $name, container-waiting.stage.rill.test/reason: $reason}
    spec:
      containers:
      - {name: app, image: example.invalid/app:1}
EOF
done
waiting_reason() { k get pods -l "app=$1" -o jsonpath='{.items[0].status.phase}/{.items[0].status.containerStatuses[0].state.waiting.reason}'; }
reason_is() { [[ "$(waiting_reason "$1")" == "$2" ]]; }
check "CrashLoopBackOff pod is Running/CrashLoopBackOff" eventually 30 reason_is crashloopbackoff Running/CrashLoopBackOff
check "ErrImagePull pod is Pending/ErrImagePull" eventually 30 reason_is errimagepull Pending/ErrImagePull
sleep 2
check "crash-looping Deployment not Available" test "$(k get deploy crashloopbackoff -o jsonpath='{.status.availableReplicas}')" = ""
check "crash-looping Deployment kept one pod" test "$(k get pods -l app=crashloopbackoff -o name | wc -l)" = 1

# Chaos (kwok upstream stage): a bare pod whose container terminates with a reason.
k apply --server-side -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: fails
  namespace: default
  labels: {pod-container-running-failed.stage.kwok.x-k8s.io: "true"}
  annotations: {pod-container-running-failed.stage.kwok.x-k8s.io/reason: OOMKilled}
spec:
  restartPolicy: Never
  containers:
  - {name: app, image: example.invalid/app:1}
EOF
check "kwok running-failed stage: pod Failed/OOMKilled" k wait --for=jsonpath='{.status.containerStatuses[0].state.terminated.reason}'=OOMKilled pod/fails --timeout=30s

# Audit: the writes above are in the log; reads are not.
# (kubectl apply --server-side is a PATCH; the users are admin for us and one user per controller.)
check "audit log has admin's server-side apply of the deployment" \
	grep -q '"verb":"patch","user":{"username":"admin".*"resource":"deployments"' "$RILL_CONTROLPLANE_AUDIT_LOG"
before=$(grep -c . "$RILL_CONTROLPLANE_AUDIT_LOG")
k get deploy,pods,pvc -A >/dev/null
check "reads leave no write events from admin" test "$(grep -c '"username":"admin"' <(tail -n +$((before + 1)) "$RILL_CONTROLPLANE_AUDIT_LOG"))" = 0

"$CP" stop
trap - EXIT
left=""
for d in /proc/[0-9]*; do
	if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -qF "$RILL_CONTROLPLANE_DIR/"; then left+=" ${d#/proc/}"; fi
done
check "no process left after stop" test -z "$left"
rm -rf "$RILL_CONTROLPLANE_DIR"
echo "$passed passed, $failed failed"
((failed == 0))
