package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// kubernetes: the results table of scripts/bench-kubernetes.sh (report kubernetes), from its work
// directory: tf.times ("wall cpu requests" per round), kubectl.times ("wall cpu apply_wall requests"),
// plan.counts ("requests seconds load"), latency.txt (k8sbench latency), tf-plan-ROUNDS.requests
// (k8sbench audit) and ready-cN.txt (k8sbench ready) per readiness concurrency N.
type kubernetes struct {
	dir                                              string
	count, rounds, parallelism, readyCount, idleSecs int
	readyConcurrency                                 []int
	planNote                                         string
}

// A target of the kubernetes benchmark, as its table shows it.
type k8sTarget struct {
	strict bool // < rather than <=
	limit  float64
	shown  string
}

// The kubernetes benchmark's targets (BENCHMARKS-kubernetes.md).
var (
	// k8sApplyVsKubectl: terraform apply's median wall time against kubectl apply + rollout status's.
	k8sApplyVsKubectl = k8sTarget{limit: 1.0, shown: "<= 1.0"}
	// k8sPlanRequestsPerRuntime: the provider's API requests per runtime in a refresh plan.
	k8sPlanRequestsPerRuntime = k8sTarget{limit: 0.2, shown: "<= 0.2"}
	// k8sLatencyP50Ratio: the API server's p50 latency during the plans against before them.
	k8sLatencyP50Ratio = k8sTarget{limit: 1.25, shown: "<= 1.25"}
	// k8sReadyP50: readiness detection's p50 latency (ms).
	k8sReadyP50 = k8sTarget{strict: true, limit: 50, shown: "p50 < 50 ms"}
)

// verdict: "met", or "**missed**" (a missing figure misses).
func (t k8sTarget) verdict(v float64) string {
	if meets(v, t.limit) && (!t.strict || v < t.limit) {
		return "met"
	}
	return "**missed**"
}

// rows: the lines of a work file, split in fields.
func (k *kubernetes) rows(name string) ([][]string, error) {
	b, err := os.ReadFile(filepath.Join(k.dir, name))
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows, nil
}

// field: FIELD's value in the first row whose leading fields are lead ("key=value" fields); "" if none.
func field(rows [][]string, key string, lead ...string) string {
	for _, r := range rows {
		if len(r) < len(lead) || strings.Join(r[:len(lead)], " ") != strings.Join(lead, " ") {
			continue
		}
		for _, f := range r[len(lead):] {
			if k, v, ok := strings.Cut(f, "="); ok && k == key {
				return v
			}
		}
	}
	return ""
}

// col: column i of rows as numbers (a missing or unreadable figure: NaN, and left out).
func col(rows [][]string, i int) []float64 {
	var vs []float64
	for _, r := range rows {
		if i < len(r) {
			if v := parsed(r[i]); !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// at: row i's field j, "" when missing.
func at(rows [][]string, i, j int) string {
	if i < len(rows) {
		return fieldOf(rows[i], j)
	}
	return ""
}

// fieldOf: field j of a row, "" when missing.
func fieldOf(r []string, j int) string {
	if j < len(r) {
		return r[j]
	}
	return ""
}

func (k *kubernetes) render() (string, error) {
	files := map[string][][]string{}
	names := []string{"tf.times", "kubectl.times", "plan.counts", "latency.txt", fmt.Sprintf("tf-plan-%d.requests", k.rounds)}
	for _, c := range k.readyConcurrency {
		names = append(names, fmt.Sprintf("ready-c%d.txt", c))
	}
	for _, n := range names {
		rows, err := k.rows(n)
		if err != nil {
			return "", err
		}
		files[n] = rows
	}
	tf, kc, plan, lat := files["tf.times"], files["kubectl.times"], files["plan.counts"], files["latency.txt"]
	tfMed, kcMed := median(col(tf, 0)), median(col(kc, 0))
	applyRatio := ratio(tfMed, kcMed)
	planMed := median(col(plan, 0))
	perRuntime := ratio(planMed, float64(k.count))
	latRatio := func(key string) float64 {
		return ratio(parsed(field(lat, key, "server", "busy")), parsed(field(lat, key, "server", "idle")))
	}
	p50Ratio := latRatio("p50_ms")
	var b strings.Builder
	b.WriteString("| # | Figure | Result | Target | |\n|---|---|---:|---|---|\n")
	fmt.Fprintf(&b, "| 1 | `terraform apply` of %d `rill_runtime` (-parallelism=%d), median of %d | %s s | | |\n", k.count, k.parallelism, k.rounds, f2(tfMed))
	fmt.Fprintf(&b, "| 1 | `kubectl apply --server-side` of the same objects + `kubectl rollout status` × %d (%d at a time), median of %d | %s s | | |\n", k.count, k.parallelism, k.rounds, f2(kcMed))
	fmt.Fprintf(&b, "| 1 | ratio terraform / kubectl (medians) | **%s** | %s | %s |\n", f2(applyRatio), k8sApplyVsKubectl.shown, k8sApplyVsKubectl.verdict(applyRatio))
	fmt.Fprintf(&b, "| 2 | API requests per runtime, refresh `terraform plan` over %d runtimes (median of %d: %s requests) | **%s** | %s | %s |\n",
		k.count, k.rounds, strconv.FormatFloat(planMed, 'f', -1, 64), f2(perRuntime), k8sPlanRequestsPerRuntime.shown, k8sPlanRequestsPerRuntime.verdict(perRuntime))
	fmt.Fprintf(&b, "| 2 | API server latency of `GET namespaces/default` every 50 ms (audit log), %d s before the plans → during them: p50 | %s → %s ms, ratio **%s** | %s | %s |\n",
		k.idleSecs, field(lat, "p50_ms", "server", "idle"), field(lat, "p50_ms", "server", "busy"), f2(p50Ratio), k8sLatencyP50Ratio.shown, k8sLatencyP50Ratio.verdict(p50Ratio))
	fmt.Fprintf(&b, "| 2 | the same: p95 (requests: %s idle, %s during the plans) | %s → %s ms, ratio %s | | |\n",
		field(lat, "n", "server", "idle"), field(lat, "n", "server", "busy"), field(lat, "p95_ms", "server", "idle"), field(lat, "p95_ms", "server", "busy"), f2(latRatio("p95_ms")))
	for _, c := range k.readyConcurrency {
		ready := files[fmt.Sprintf("ready-c%d.txt", c)]
		p50, p95 := field(ready, "p50_ms", "summary", "audit"), field(ready, "p95_ms", "summary", "audit")
		what := "one at a time"
		if c != 1 {
			what = fmt.Sprintf("%d at a time", c)
		}
		fmt.Fprintf(&b, "| 3 | readiness detection latency, %d runtimes %s: p50 / p95 | **%s ms** / %s ms | %s | %s |\n", k.readyCount, what, p50, p95, k8sReadyP50.shown, k8sReadyP50.verdict(parsed(p50)))
	}
	b.WriteString("\nPer round (wall seconds; CPU = user + sys of the client processes; requests = the client's API requests in the audit log):\n\n")
	b.WriteString("| Round | terraform apply | CPU | requests | kubectl apply + rollout status | of which apply | CPU | requests | ratio | plan requests | plan (s) | load at the plan |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := 0; i < k.rounds; i++ {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", i+1,
			f2(parsed(at(tf, i, 0))), f2(parsed(at(tf, i, 1))), at(tf, i, 2),
			f2(parsed(at(kc, i, 0))), f2(parsed(at(kc, i, 2))), f2(parsed(at(kc, i, 1))), at(kc, i, 3),
			f2(ratio(parsed(at(tf, i, 0)), parsed(at(kc, i, 0)))), at(plan, i, 0), f2(parsed(at(plan, i, 1))), at(plan, i, 2))
	}
	fmt.Fprintf(&b, "\nterraform apply min / max: %s / %s s; kubectl min / max: %s / %s s.\n",
		f2(minOf(col(tf, 0))), f2(maxOf(col(tf, 0))), f2(minOf(col(kc, 0))), f2(maxOf(col(kc, 0))))
	var breakdown []string
	for _, r := range files[fmt.Sprintf("tf-plan-%d.requests", k.rounds)][1:] {
		breakdown = append(breakdown, fmt.Sprintf("%s × %s %s", fieldOf(r, 0), fieldOf(r, 1), fieldOf(r, 2)))
	}
	fmt.Fprintf(&b, "\nProvider requests of the last refresh plan: %s.\n", strings.Join(breakdown, ", "))
	fmt.Fprintf(&b, "\nThe probe's latency as the probe saw it (client side, including its own scheduling on the loaded machine): p50 %s → %s ms, p95 %s → %s ms.\n",
		field(lat, "p50_ms", "client", "idle"), field(lat, "p50_ms", "client", "busy"), field(lat, "p95_ms", "client", "idle"), field(lat, "p95_ms", "client", "busy"))
	if k.planNote != "" {
		fmt.Fprintf(&b, "Note: %s.\n", k.planNote)
	}
	b.WriteString("\nReadiness detection (ms; audit = from the status write that made the Deployment Available, watch = from a peer watch's event; await = AwaitReady's whole duration):\n\n")
	b.WriteString("| Runtimes at a time | reference | p50 | p95 | min | max | mean |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, c := range k.readyConcurrency {
		ready := files[fmt.Sprintf("ready-c%d.txt", c)]
		for _, n := range []string{"audit", "watch", "await"} {
			fmt.Fprintf(&b, "| %d | %s", c, n)
			for _, f := range []string{"p50_ms", "p95_ms", "min_ms", "max_ms", "mean_ms"} {
				b.WriteString(" | " + field(ready, f, "summary", n))
			}
			b.WriteString(" |\n")
		}
	}
	return b.String(), nil
}
