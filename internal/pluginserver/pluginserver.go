// Package pluginserver serves the provider to Terraform, as providerserver.Serve does, with one
// difference: each resource and data source RPC reaches the framework with a context that lets go of
// the request once the RPC has returned.
//
// terraform-plugin-framework (v1.19, internal/proto6server/serve.go, registerContext) derives a
// cancellable context from every RPC's context and appends its cancel function to a slice that is
// emptied only by StopProvider, so that StopProvider can cancel what is in flight. Each cancel function
// keeps its context alive, and with it every parent: terraform-plugin-go's per-request loggers, the
// gRPC stream and whatever the request put there, about 11.5 KB per RPC that the process holds until
// it exits. Terraform makes four or five RPCs per resource, so a refresh of 1,000 runtimes held
// about 70 MB of dead requests at its end (measured in BENCHMARKS.md, "Memory"; the no-op provider
// of scripts/bench/noopprov shows the same growth), and the garbage collector marks it again in every
// cycle.
//
// Here the framework gets a requestContext instead: while the RPC runs it answers exactly as the
// RPC's own context (values, deadline, cancellation, which reaches the framework's context without a
// goroutine); once the RPC has returned it is a cancelled context with no values, and the framework's
// slice keeps a few hundred bytes per RPC instead of the request. StopProvider still cancels what is
// in flight.
package pluginserver

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve serves the provider over protocol 6 until Terraform stops it, as providerserver.Serve does
// (debug: tf6server's managed debug mode, for delve).
func Serve(address string, newProvider func() provider.Provider, debug bool) error {
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	return tf6server.Serve(address, func() tfprotov6.ProviderServer {
		return Wrap(providerserver.NewProtocol6(newProvider())())
	}, opts...)
}

// Wrap returns s with the resource and data source RPCs, the ones Terraform makes per resource,
// given a requestContext. The provider-level RPCs are passed through: each runs once or twice per
// process, and ConfigureProvider's context must stay whole, because the provisioners log through it
// (internal/logging's Bridge).
//
// The wrapper implements tfprotov6.ProviderServer only: a provider with list resources, actions or
// state stores (tf6server finds those by type assertion) would need them forwarded too; this one has
// none.
func Wrap(s tfprotov6.ProviderServer) tfprotov6.ProviderServer { return server{s} }

type server struct{ tfprotov6.ProviderServer }

// call runs one RPC of the framework with a requestContext that ends with it.
func call[Req, Resp any](ctx context.Context, req Req, rpc func(context.Context, Req) (Resp, error)) (Resp, error) {
	rc := attach(ctx)
	defer rc.detach()
	return rpc(rc, req)
}

func (s server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.ValidateResourceConfig)
}

func (s server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(ctx, req, s.ProviderServer.UpgradeResourceState)
}

func (s server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(ctx, req, s.ProviderServer.ReadResource)
}

func (s server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(ctx, req, s.ProviderServer.PlanResourceChange)
}

func (s server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(ctx, req, s.ProviderServer.ApplyResourceChange)
}

func (s server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(ctx, req, s.ProviderServer.ImportResourceState)
}

func (s server) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return call(ctx, req, s.ProviderServer.MoveResourceState)
}

func (s server) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return call(ctx, req, s.ProviderServer.UpgradeResourceIdentity)
}

func (s server) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.GenerateResourceConfig)
}

func (s server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.ValidateDataResourceConfig)
}

func (s server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(ctx, req, s.ProviderServer.ReadDataSource)
}

// requestContext is one RPC's context until detach, then ended.
type requestContext struct {
	rpc atomic.Pointer[context.Context]
}

// ended is what a requestContext answers as once its RPC has returned: cancelled (so is the RPC's
// own context by then: gRPC cancels it when the call ends), and without values.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func attach(ctx context.Context) *requestContext {
	rc := &requestContext{}
	rc.rpc.Store(&ctx)
	return rc
}

func (c *requestContext) detach() { c.rpc.Store(nil) }

func (c *requestContext) current() context.Context {
	if ctx := c.rpc.Load(); ctx != nil {
		return *ctx
	}
	return ended
}

func (c *requestContext) Deadline() (time.Time, bool) { return c.current().Deadline() }
func (c *requestContext) Done() <-chan struct{}       { return c.current().Done() }
func (c *requestContext) Err() error                  { return c.current().Err() }
func (c *requestContext) Value(key any) any           { return c.current().Value(key) }
