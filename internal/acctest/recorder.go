package acctest

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// RPC is a kind of provider call a Recorder records.
type RPC int

// The calls a Recorder records.
const (
	ConfigureProvider RPC = iota
	PlanResourceChange
	ApplyResourceChange
	ReadResource
)

// Recorder serves the provider in-process like ProviderFactories, and records the diagnostics and
// durations of some of its calls, which the testing framework does not expose (warnings in
// particular).
type Recorder struct {
	mu    sync.Mutex
	calls map[RPC][]Call
}

// Call is one recorded call.
type Call struct {
	Dur   time.Duration
	Diags []*tfprotov6.Diagnostic
}

// Warnings returns the call's warnings as "summary: detail".
func (c Call) Warnings() []string {
	var out []string
	for _, d := range c.Diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning {
			out = append(out, d.Summary+": "+d.Detail)
		}
	}
	return out
}

// Factories are ProviderFactories whose provider records into r.
func (r *Recorder) Factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"rill": func() (tfprotov6.ProviderServer, error) {
			srv, err := ProviderFactories["rill"]()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: srv, rec: r}, nil
		},
	}
}

// Take returns the calls of one kind recorded since the last Take of that kind.
func (r *Recorder) Take(kind RPC) []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls[kind]
	delete(r.calls, kind)
	return out
}

// TakeWarnings returns the warnings of the calls Take would return.
func (r *Recorder) TakeWarnings(kind RPC) []string {
	var out []string
	for _, c := range r.Take(kind) {
		out = append(out, c.Warnings()...)
	}
	return out
}

// add records a call that started at start.
func (r *Recorder) add(kind RPC, start time.Time, diags []*tfprotov6.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[RPC][]Call{}
	}
	r.calls[kind] = append(r.calls[kind], Call{Dur: time.Since(start), Diags: diags})
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *Recorder
}

func (s recordingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ConfigureProvider(ctx, req)
	if resp != nil {
		s.rec.add(ConfigureProvider, start, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.add(PlanResourceChange, start, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.add(ApplyResourceChange, start, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if resp != nil {
		s.rec.add(ReadResource, start, resp.Diagnostics)
	}
	return resp, err
}
