package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// probeUserAgent tells the probe's requests apart in the audit log.
const probeUserAgent = "k8sbench-probe"

// cmdProbe issues one cheap request (GET /api/v1/namespaces/default) every interval until SIGTERM
// or SIGINT, one at a time, and appends "<start Unix ns> <client latency µs> <HTTP code>" per
// request to -out. The API server's own latency of the same requests is in the audit log.
func cmdProbe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	interval := fs.Duration("interval", 50*time.Millisecond, "time between request starts")
	out := fs.String("out", "", "file to append samples to")
	_ = fs.Parse(args)
	if *kubeconfig == "" || *out == "" || *interval <= 0 {
		return errors.New("probe needs -kubeconfig, -out and -interval > 0")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.UserAgent = probeUserAgent
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	url := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/default"
	f, err := os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", probeUserAgent)
		start := time.Now()
		code := 0
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			code = resp.StatusCode
		}
		lat := time.Since(start)
		if ctx.Err() != nil {
			return nil
		}
		if _, err := fmt.Fprintf(f, "%d %d %d\n", start.UnixNano(), lat.Microseconds(), code); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// latencySample is one probe request: when it started (client) or was received (server), and how
// long it took.
type latencySample struct {
	at      time.Time
	latency time.Duration
}

// window is a labelled time range [from, to].
type window struct {
	label    string
	from, to time.Time
}

// parseWindow parses "LABEL:FROM:TO" with Unix nanoseconds.
func parseWindow(s string) (window, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[0] == "" {
		return window{}, fmt.Errorf("window %q: want LABEL:FROM:TO (Unix nanoseconds)", s)
	}
	from, err1 := strconv.ParseInt(parts[1], 10, 64)
	to, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || to < from {
		return window{}, fmt.Errorf("window %q: want LABEL:FROM:TO (Unix nanoseconds, FROM <= TO)", s)
	}
	return window{label: parts[0], from: time.Unix(0, from), to: time.Unix(0, to)}, nil
}

// serverLatencies reads the audit events (ResponseComplete) of requests with the given user agent:
// received at requestReceivedTimestamp, latency stageTimestamp minus that (the API server's own
// time for the request, µs resolution).
func serverLatencies(r io.Reader, userAgent string) ([]latencySample, error) {
	var out []latencySample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Stage != "ResponseComplete" || ev.UserAgent != userAgent {
			continue
		}
		received, err1 := time.Parse(time.RFC3339Nano, ev.RequestReceivedTimestamp)
		done, err2 := time.Parse(time.RFC3339Nano, ev.StageTimestamp)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, latencySample{at: received, latency: done.Sub(received)})
	}
	return out, sc.Err()
}

// clientLatencies reads cmdProbe's output; failed requests (code not 200) are left out.
func clientLatencies(r io.Reader) ([]latencySample, error) {
	var out []latencySample
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var at, us int64
		var code int
		if _, err := fmt.Sscanf(sc.Text(), "%d %d %d", &at, &us, &code); err != nil {
			return nil, fmt.Errorf("probe line %q: %w", sc.Text(), err)
		}
		if code == 200 {
			out = append(out, latencySample{at: time.Unix(0, at), latency: time.Duration(us) * time.Microsecond})
		}
	}
	return out, sc.Err()
}

// latencyStats pools the samples that fall in the windows of each label and returns, per label in
// the order first seen, n, p50 and p95 (ms, nearest rank).
func latencyStats(samples []latencySample, windows []window) []string {
	var labels []string
	pooled := map[string][]float64{}
	for _, w := range windows {
		if _, ok := pooled[w.label]; !ok {
			labels = append(labels, w.label)
			pooled[w.label] = []float64{}
		}
		for _, s := range samples {
			if !s.at.Before(w.from) && !s.at.After(w.to) {
				pooled[w.label] = append(pooled[w.label], ms(s.latency))
			}
		}
	}
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		v := pooled[l]
		out = append(out, fmt.Sprintf("%s n=%d p50_ms=%.2f p95_ms=%.2f", l, len(v), percentile(v, 50), percentile(v, 95)))
	}
	return out
}

// cmdLatency summarizes the probe's latencies in labelled windows (e.g. idle and busy), pooled per
// label over all the windows given, as the API server measured them (audit log) and as the probe did:
//
//	server <label> n=N p50_ms=X p95_ms=Y
//	client <label> n=N p50_ms=X p95_ms=Y
func cmdLatency(args []string) error {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	auditLog := fs.String("audit-log", "", "the API server's audit log")
	probeOut := fs.String("probe", "", "the probe's output")
	var windows []window
	fs.Func("window", "LABEL:FROM:TO (Unix nanoseconds), repeatable", func(s string) error {
		w, err := parseWindow(s)
		if err == nil {
			windows = append(windows, w)
		}
		return err
	})
	_ = fs.Parse(args)
	if *auditLog == "" || *probeOut == "" || len(windows) == 0 {
		return errors.New("latency needs -audit-log, -probe and at least one -window")
	}
	for _, src := range []struct {
		name string
		path string
		read func(io.Reader) ([]latencySample, error)
	}{
		{"server", *auditLog, func(r io.Reader) ([]latencySample, error) { return serverLatencies(r, probeUserAgent) }},
		{"client", *probeOut, clientLatencies},
	} {
		f, err := os.Open(src.path)
		if err != nil {
			return err
		}
		samples, err := src.read(f)
		_ = f.Close()
		if err != nil {
			return err
		}
		for _, line := range latencyStats(samples, windows) {
			fmt.Println(src.name, line)
		}
	}
	return nil
}
