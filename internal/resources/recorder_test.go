package resources_test

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func (s recordingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.ConfigureProvider(ctx, req)
	if resp != nil {
		s.rec.add(&s.rec.configures, start, resp.Diagnostics)
	}
	return resp, err
}

func (s recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	start := time.Now()
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.add(&s.rec.plans, start, resp.Diagnostics)
	}
	return resp, err
}

// add records a call that started at start.
func (r *rpcRecorder) add(kind *[]rpcCall, start time.Time, diags []*tfprotov6.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*kind = append(*kind, rpcCall{dur: time.Since(start), diags: diags})
}

// takeWarnings returns the warnings of every recorded call of one kind, and forgets those calls.
func (r *rpcRecorder) takeWarnings(kind *[]rpcCall) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range *kind {
		out = append(out, c.warnings()...)
	}
	*kind = nil
	return out
}
