// Command k8sbench is the Go half of scripts/bench-kubernetes.sh. It uses the real kubernetes
// provisioner (internal/kubernetes, through the provisioner contract, exactly as the provider
// does) and has these subcommands:
//
//	k8sbench render -namespace NS -count N -out FILE
//	    Renders the objects of N one-slot runtimes (fresh UUIDs) as the provider would apply them in
//	    namespace NS, and writes them as one YAML stream (in apply order: per runtime the PVC, the
//	    Deployment, the Service and the two Ingresses) for `kubectl apply --server-side -f FILE`.
//	    The provisioner's Provision is pointed at an in-process fake API server that answers the
//	    claim GET with 404 and records the body of every server-side-apply PATCH: no cluster is
//	    touched, and the objects are byte for byte what the provider sends.
//	    The Deployment names go to FILE.deployments, one a line.
//
//	k8sbench ready -kubeconfig K -namespace NS -count N [-concurrency C] [-audit-log F] [-timeout 5m]
//	    Readiness detection latency. For each of N runtimes: Provision, then AwaitReady (ping_path ""),
//	    C runtimes at a time, with the real provisioner against the cluster. The latency of a runtime
//	    is the instant AwaitReady returned minus the instant its Deployment became Available, taken
//	    two ways:
//	      - audit (with -audit-log, the primary figure): the requestReceivedTimestamp (µs) of the
//	        controller manager's first successful Deployment status write whose body shows the
//	        Deployment rolled out by AwaitReady's own criterion (kubernetes.RolledOut: observedGeneration
//	        >= generation, updated = available = total = spec.replicas); the audit policy must log
//	        that write at level Request (see audit-policy.yaml). The API server stored the write
//	        after it received it, so this overstates the latency by the write's own duration
//	        (a few ms; its stageTimestamp would understate it: watchers may get the event before
//	        the response is complete). Compared with AwaitReady's return on the same machine's
//	        wall clock;
//	      - watch: when a second watch on the namespace's Deployments (its own client and
//	        connection, in this process) first saw it rolled out; a peer of the provisioner's own
//	        watch, so this one is about zero, and negative when the provisioner's event came first.
//	    Prints one line per runtime and summary lines (percentiles are nearest-rank):
//	      summary audit n=20 p50_ms=... p95_ms=... min_ms=... max_ms=... mean_ms=...
//	      summary watch n=20 p50_ms=... ...
//	      summary await n=20 p50_ms=... ...   (AwaitReady's duration)
//
//	k8sbench audit -log FILE -user-agent PREFIX -from UNIXNANO -to UNIXNANO
//	    Counts the audit events (ResponseComplete stage) of requests received in [from, to] whose
//	    user agent starts with PREFIX, and breaks them down by verb and resource. Prints
//	      total N
//	      <count> <verb> <resource>[/<subresource>]
//
//	k8sbench tflog -log TF_LOG_FILE [-audit-log F -namespace NS]
//	    Summarizes a `terraform apply` of rill_runtime run with TF_LOG=debug: per Create, the time of
//	    Provision ("provisioning runtime" to "waiting for the runtime to be ready") and of AwaitReady
//	    (to "runtime ready"), from the provider's own timestamps (ms); how many Creates ran at once;
//	    and, with the audit log, the detection latency of each ("runtime ready" minus the status
//	    write that made its Deployment Available, as in ready).
//
//	k8sbench probe -kubeconfig K -out FILE [-interval 50ms]
//	    Until SIGTERM: GET /api/v1/namespaces/default every interval, one at a time (user agent
//	    k8sbench-probe); appends "<start Unix ns> <latency µs> <HTTP code>" per request to FILE.
//
//	k8sbench latency -audit-log F -probe FILE -window LABEL:FROM:TO [-window ...]
//	    The probe's latencies in the windows (Unix ns), pooled per label: as the API server measured
//	    them (audit log: stageTimestamp of ResponseComplete minus requestReceivedTimestamp) and as the
//	    probe did. Prints "server|client LABEL n=N p50_ms=X p95_ms=Y" per label.
//
// An ordinary package, so `go build ./...` and `go vet ./...` keep it compiling with the provisioner:
//
//	go build -o /tmp/k8sbench ./scripts/bench/kubernetes/k8sbench
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8sbench render|ready|audit|tflog|probe|latency [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "render":
		err = cmdRender(os.Args[2:])
	case "ready":
		err = cmdReady(os.Args[2:])
	case "audit":
		err = cmdAudit(os.Args[2:])
	case "tflog":
		err = cmdTFLog(os.Args[2:])
	case "probe":
		err = cmdProbe(os.Args[2:])
	case "latency":
		err = cmdLatency(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sbench:", err)
		os.Exit(1)
	}
}

// specJSON is the provisioner spec of the benchmark; it matches the Terraform configuration that
// scripts/bench-kubernetes.sh writes.
func specJSON(namespace, kubeconfig string, timeoutSeconds int) []byte {
	b, _ := json.Marshal(map[string]any{
		"host":            "http://*.rill.bench.invalid",
		"namespace":       namespace,
		"kubeconfig_path": kubeconfig,
		"timeout_seconds": timeoutSeconds,
		"ping_path":       "",
		// See scripts/bench-kubernetes.sh: a pod the scheduler tries before its cache has the
		// claim's volume must be waited for.
		"unschedulable_grace_seconds": 60,
	})
	return b
}

// runtimeOptions are the options the provider passes for `rill_runtime { slots = 1 }`.
func runtimeOptions() *provisioner.ResourceOptions {
	return &provisioner.ResourceOptions{
		Args:        (&provisioner.RuntimeArgs{Slots: 1}).AsMap(),
		Annotations: map[string]string{},
	}
}

// ----------------------------------------------------------------------------------------- render

func cmdRender(args []string) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	ns := fs.String("namespace", "", "namespace of the objects")
	count := fs.Int("count", 50, "runtimes")
	out := fs.String("out", "", "output YAML file")
	_ = fs.Parse(args)
	if *ns == "" || *out == "" {
		return errors.New("render needs -namespace and -out")
	}

	rec := &recorder{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rec}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	dir, err := os.MkdirTemp("", "k8sbench-render-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: rec, cluster: {server: "http://%s"}}]
users: [{name: rec, user: {}}]
contexts: [{name: rec, context: {cluster: rec, user: rec}}]
current-context: rec
`, ln.Addr())), 0o600); err != nil {
		return err
	}

	p, err := kubernetes.New(specJSON(*ns, kc, 60), nil, zap.NewNop())
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()
	ctx := context.Background()
	var deployments []string
	for i := 0; i < *count; i++ {
		id := uuid.NewString()
		if _, err := p.Provision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, runtimeOptions()); err != nil {
			return fmt.Errorf("provision %s against the recording server: %w", id, err)
		}
		deployments = append(deployments, kubernetes.NamesFor(strings.ReplaceAll(id, "-", "")).Deployment)
	}

	var buf bytes.Buffer
	for i, body := range rec.bodies {
		y, err := yaml.JSONToYAML(body)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	if len(rec.bodies) != 5**count {
		return fmt.Errorf("recorded %d applied objects, want %d", len(rec.bodies), 5**count)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(*out+".deployments", []byte(strings.Join(deployments, "\n")+"\n"), 0o644)
}

// recorder is a fake API server: GETs are 404, server-side-apply PATCHes are recorded and echoed.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	switch {
	case req.Method == http.MethodPatch && strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch"):
		// The dynamic client sends the object as JSON (which YAML accepts).
		obj := map[string]any{}
		if err := json.Unmarshal(body, &obj); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	case req.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
			"message": "not found",
		})
	default:
		http.Error(w, "unexpected "+req.Method+" "+req.URL.Path, http.StatusBadRequest)
	}
}

// ------------------------------------------------------------------------------------------ ready

type runtimeResult struct {
	deployment  string
	start       time.Time // before Provision
	provisioned time.Time // Provision returned
	ready       time.Time // AwaitReady returned
	err         error
}

func cmdReady(args []string) error {
	fs := flag.NewFlagSet("ready", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	ns := fs.String("namespace", "", "namespace (must exist and be empty)")
	count := fs.Int("count", 20, "runtimes")
	concurrency := fs.Int("concurrency", 1, "runtimes provisioned and awaited at a time")
	timeout := fs.Duration("timeout", 5*time.Minute, "overall timeout")
	auditLog := fs.String("audit-log", "", "the API server's audit log (see audit-policy.yaml)")
	_ = fs.Parse(args)
	if *kubeconfig == "" || *ns == "" || *count < 1 || *concurrency < 1 {
		return errors.New("ready needs -kubeconfig, -namespace, -count >= 1, -concurrency >= 1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	// The observer: its own client (own connection and rate limiter), watching every Deployment of
	// the namespace from an empty list on.
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.UserAgent = "k8sbench-observer"
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		return err
	}
	list, err := cs.AppsV1().Deployments(*ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(list.Items) != 0 {
		return fmt.Errorf("namespace %s already has %d deployments", *ns, len(list.Items))
	}
	wi, err := cs.AppsV1().Deployments(*ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return err
	}
	defer wi.Stop()
	var obsMu sync.Mutex
	available := map[string]time.Time{}
	obsErr := make(chan error, 1)
	go func() {
		for ev := range wi.ResultChan() {
			now := time.Now()
			if ev.Type == watch.Error {
				obsErr <- fmt.Errorf("observer watch error: %v", ev.Object)
				return
			}
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			if kubernetes.RolledOut(d, false) {
				obsMu.Lock()
				if _, seen := available[d.Name]; !seen {
					available[d.Name] = now
				}
				obsMu.Unlock()
			}
		}
		obsErr <- errors.New("observer watch closed")
	}()

	p, err := kubernetes.New(specJSON(*ns, *kubeconfig, int(timeout.Seconds())), nil, zap.NewNop())
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()

	results := make([]*runtimeResult, *count)
	sem := make(chan struct{}, *concurrency)
	var wg sync.WaitGroup
	for i := range results {
		id := uuid.NewString()
		rr := &runtimeResult{deployment: kubernetes.NamesFor(strings.ReplaceAll(id, "-", "")).Deployment}
		results[i] = rr
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rr.start = time.Now()
			res, err := p.Provision(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, runtimeOptions())
			rr.provisioned = time.Now()
			if err != nil {
				rr.err = fmt.Errorf("calling Provision: %w", err)
				return
			}
			if err := p.AwaitReady(ctx, res); err != nil {
				rr.err = fmt.Errorf("AwaitReady: %w", err)
				return
			}
			rr.ready = time.Now()
		}()
	}
	wg.Wait()

	// The observer may lag behind the provisioner's watch by a moment: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		obsMu.Lock()
		missing := 0
		for _, rr := range results {
			if _, ok := available[rr.deployment]; !ok && rr.err == nil {
				missing++
			}
		}
		obsMu.Unlock()
		if missing == 0 {
			break
		}
		select {
		case err := <-obsErr:
			return err
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the observer never saw %d deployments rolled out", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var committed map[string]time.Time
	if *auditLog != "" {
		// Blocking audit mode: the events are in the file before the responses were sent.
		committed, err = auditRolledOut(*auditLog, *ns)
		if err != nil {
			return err
		}
	}

	var latAudit, latWatch, await []float64
	fmt.Println("# deployment provision_ms await_ms available_after_start_ms(audit) latency_ms(audit) latency_ms(watch)")
	obsMu.Lock()
	defer obsMu.Unlock()
	for _, rr := range results {
		if rr.err != nil {
			return fmt.Errorf("runtime %s: %w", rr.deployment, rr.err)
		}
		lw := ms(rr.ready.Sub(available[rr.deployment]))
		latWatch = append(latWatch, lw)
		await = append(await, ms(rr.ready.Sub(rr.provisioned)))
		la, after := math.NaN(), math.NaN()
		if committed != nil {
			c, ok := committed[rr.deployment]
			if !ok {
				return fmt.Errorf("no status write in %s shows deployment %s rolled out", *auditLog, rr.deployment)
			}
			// Wall clock on both sides (the audit log has no monotonic reading).
			la = float64(rr.ready.UnixMicro()-c.UnixMicro()) / 1000
			after = float64(c.UnixMicro()-rr.start.UnixMicro()) / 1000
			latAudit = append(latAudit, la)
		}
		fmt.Printf("%s %.1f %.1f %.1f %.1f %.1f\n", rr.deployment, ms(rr.provisioned.Sub(rr.start)), ms(rr.ready.Sub(rr.provisioned)), after, la, lw)
	}
	summary := func(name string, v []float64) {
		if len(v) == 0 {
			return
		}
		fmt.Printf("summary %s n=%d p50_ms=%.1f p95_ms=%.1f min_ms=%.1f max_ms=%.1f mean_ms=%.1f\n",
			name, len(v), percentile(v, 50), percentile(v, 95), percentile(v, 0), percentile(v, 100), mean(v))
	}
	summary("audit", latAudit)
	summary("watch", latWatch)
	summary("await", await)
	return nil
}

// auditRolledOut reads the audit log and returns, per Deployment of namespace ns, the
// requestReceivedTimestamp of the first successful status write (update or patch of deployments/status, logged at level
// Request) whose body shows it rolled out.
func auditRolledOut(path, ns string) (map[string]time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			auditEvent
			RequestObject *appsv1.Deployment `json:"requestObject"`
		}
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"subresource":"status"`)) {
			continue
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			continue
		}
		r := ev.ObjectRef
		if ev.Stage != "ResponseComplete" || r == nil || r.Resource != "deployments" || r.Subresource != "status" || r.Namespace != ns ||
			ev.RequestObject == nil || ev.ResponseStatus == nil || ev.ResponseStatus.Code >= 300 {
			continue
		}
		if _, seen := out[r.Name]; seen || !kubernetes.RolledOut(ev.RequestObject, false) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ev.RequestReceivedTimestamp)
		if err != nil {
			continue
		}
		out[r.Name] = t
	}
	return out, sc.Err()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the nearest-rank percentile (0 = min, 100 = max).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if p <= 0 {
		return s[0]
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// ------------------------------------------------------------------------------------------ audit

type auditEvent struct {
	Stage                    string `json:"stage"`
	Verb                     string `json:"verb"`
	UserAgent                string `json:"userAgent"`
	RequestReceivedTimestamp string `json:"requestReceivedTimestamp"`
	StageTimestamp           string `json:"stageTimestamp"`
	RequestURI               string `json:"requestURI"`
	ObjectRef                *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

func cmdAudit(args []string) error {
	fs := flag.NewFlagSet("audit", flag.ExitOnError)
	logPath := fs.String("log", "", "audit log (JSON lines)")
	ua := fs.String("user-agent", "", "user agent prefix")
	from := fs.Int64("from", 0, "window start, Unix nanoseconds")
	to := fs.Int64("to", math.MaxInt64, "window end, Unix nanoseconds")
	_ = fs.Parse(args)
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	counts := map[string]int{}
	total := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		if ev.Stage != "ResponseComplete" || !strings.HasPrefix(ev.UserAgent, *ua) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ev.RequestReceivedTimestamp)
		if err != nil || t.UnixNano() < *from || t.UnixNano() > *to {
			continue
		}
		key := ev.Verb + " " + ev.RequestURI
		if ev.ObjectRef != nil {
			key = ev.Verb + " " + ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				key += "/" + ev.ObjectRef.Subresource
			}
		} else if i := strings.IndexByte(key, '?'); i >= 0 {
			key = key[:i]
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
			key += fmt.Sprintf(" (HTTP %d)", ev.ResponseStatus.Code)
		}
		counts[key]++
		total++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("total %d\n", total)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Printf("%d %s\n", counts[k], k)
	}
	return nil
}

// ------------------------------------------------------------------------------------------ tflog

func cmdTFLog(args []string) error {
	fs := flag.NewFlagSet("tflog", flag.ExitOnError)
	logPath := fs.String("log", "", "TF_LOG_PATH file of the apply (TF_LOG=debug or trace)")
	auditLog := fs.String("audit-log", "", "the API server's audit log (optional)")
	ns := fs.String("namespace", "", "the runtimes' namespace (with -audit-log)")
	_ = fs.Parse(args)
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	type create struct{ prov, wait, ready time.Time }
	creates := map[string]*create{}
	var first, last time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		// Terraform's own timestamp starts the line; provider lines carry the provider's as timestamp=.
		if t, err := time.Parse("2006-01-02T15:04:05.000Z0700", strings.SplitN(line, " ", 2)[0]); err == nil {
			if first.IsZero() {
				first = t
			}
			last = t
		}
		if !strings.Contains(line, "provider.terraform-provider-rill: ") {
			continue
		}
		var kind int
		switch {
		case strings.Contains(line, ": provisioning runtime: "):
			kind = 0
		case strings.Contains(line, ": waiting for the runtime to be ready: "):
			kind = 1
		case strings.Contains(line, ": runtime ready: "):
			kind = 2
		default:
			continue
		}
		id, ts := field(line, "runtime_id"), field(line, "timestamp")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if id == "" || err != nil {
			continue
		}
		c := creates[id]
		if c == nil {
			c = &create{}
			creates[id] = c
		}
		switch kind {
		case 0:
			c.prov = t
		case 1:
			c.wait = t
		case 2:
			c.ready = t
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var committed map[string]time.Time
	if *auditLog != "" {
		if committed, err = auditRolledOut(*auditLog, *ns); err != nil {
			return err
		}
	}
	var prov, await, total, lat []float64
	var firstStart, lastEnd time.Time
	var busy time.Duration
	for id, c := range creates {
		if c.prov.IsZero() || c.wait.IsZero() || c.ready.IsZero() {
			continue
		}
		prov = append(prov, ms(c.wait.Sub(c.prov)))
		await = append(await, ms(c.ready.Sub(c.wait)))
		total = append(total, ms(c.ready.Sub(c.prov)))
		busy += c.ready.Sub(c.prov)
		if firstStart.IsZero() || c.prov.Before(firstStart) {
			firstStart = c.prov
		}
		if c.ready.After(lastEnd) {
			lastEnd = c.ready
		}
		if committed != nil {
			if a, ok := committed[kubernetes.NamesFor(strings.ReplaceAll(id, "-", "")).Deployment]; ok {
				lat = append(lat, float64(c.ready.UnixMicro()-a.UnixMicro())/1000)
			}
		}
	}
	if len(total) == 0 {
		return fmt.Errorf("no complete Create (provisioning runtime / waiting / runtime ready) in %s", *logPath)
	}
	row := func(name string, v []float64) {
		fmt.Printf("%-48s p50 %7.0f  p95 %7.0f  max %7.0f  mean %7.0f\n", name, percentile(v, 50), percentile(v, 95), percentile(v, 100), mean(v))
	}
	fmt.Printf("%d Creates; terraform ran %.2f s: %.2f s before the first Create began, Creates from %.2f s to %.2f s (%.1f running on average), %.2f s after the last ended\n",
		len(total), last.Sub(first).Seconds(), firstStart.Sub(first).Seconds(), firstStart.Sub(first).Seconds(), lastEnd.Sub(first).Seconds(),
		busy.Seconds()/lastEnd.Sub(firstStart).Seconds(), last.Sub(lastEnd).Seconds())
	fmt.Println("per Create (ms, provider timestamps):")
	row("  Provision (render, reads, 5 applies)", prov)
	row("  AwaitReady", await)
	row("  Create", total)
	if len(lat) > 0 {
		row("  detection latency (runtime ready - Available)", lat)
	}
	return nil
}

// field returns the value of key=value in an hclog line ("" when absent).
func field(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}
