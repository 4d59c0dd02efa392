# rpctimes.awk: per-RPC timings of a provider from a Terraform TF_LOG=trace log (used by
# scripts/bench.sh --profile). For each RPC type (tf_rpc) it prints the number of calls, the sum and
# the median and max of the time between the provider's "Received request" and "Served request"
# lines (ms resolution, from the log's timestamps), and the span from the first call's start to the
# last call's end. It also counts the provider's log lines by @module, the volume Terraform has to
# parse from the plugin's stderr.
#
#   awk -f scripts/bench/rpctimes.awk trace.log
function ms(ts,    d, t, h, m, s) {
  # 2026-11-29T18:04:31.386Z -> ms since midnight (runs do not cross midnight in practice)
  t = substr(ts, 12, 12); h = substr(t, 1, 2); m = substr(t, 4, 2); s = substr(t, 7, 6)
  return ((h * 60 + m) * 60 + s) * 1000
}
/@module=/ { if (match($0, /@module=[A-Za-z0-9_.]+/)) mods[substr($0, RSTART + 8, RLENGTH - 8)]++ }
/Received request:|Served request:/ {
  if (!match($0, /tf_req_id=[^ ]+/)) next
  id = substr($0, RSTART + 10, RLENGTH - 10)
  if (!match($0, /tf_rpc=[A-Za-z]+/)) next
  rpc = substr($0, RSTART + 7, RLENGTH - 7)
  t = ms($1)
  if ($0 ~ /Received request:/) { start[id] = t; next }
  if (!(id in start)) next
  d = t - start[id]
  n[rpc]++; sum[rpc] += d; if (d > max[rpc]) max[rpc] = d
  durs[rpc, n[rpc]] = d
  if (!(rpc in first) || start[id] < first[rpc]) first[rpc] = start[id]
  if (t > last[rpc]) last[rpc] = t
  delete start[id]
}
END {
  printf "%-26s %6s %10s %9s %9s %10s\n", "rpc", "calls", "sum_ms", "p50_ms", "max_ms", "span_ms"
  for (r in n) {
    k = n[r]
    for (i = 1; i <= k; i++) a[i] = durs[r, i]
    # insertion sort (a few hundred values)
    for (i = 2; i <= k; i++) { v = a[i]; j = i - 1; while (j > 0 && a[j] > v) { a[j + 1] = a[j]; j-- }; a[j + 1] = v }
    med = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    printf "%-26s %6d %10d %9.1f %9d %10d\n", r, k, sum[r], med, max[r], last[r] - first[r]
    delete a
  }
  printf "\nprovider log lines by @module:"
  for (m in mods) printf " %s=%d", m, mods[m]
  printf "\n"
}
