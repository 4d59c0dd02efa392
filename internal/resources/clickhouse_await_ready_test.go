package resources_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// fakeSlowToReadyProvisioner is a fake provisioner of ClickHouse databases and runtimes: Provision
// hands out a DSN or a host at once, and AwaitReady waits until its context ends unless ready is set,
// calling interrupt first when set (the interrupt then arrives while it waits); awaits counts its
// calls. CheckResource finds what Provision made and Deprovision has not removed, and reports a
// runtime as it was applied last (its slots observed, as Kubernetes' objects say them). With
// failAfterApply, a runtime's Provision applies and then fails, as a Kubernetes update refused after
// it applied some objects. No ClickHouse that can create users runs in this process (the stand-in is
// in the provider's test build only), and no real server or runtime lets a test choose when it
// becomes ready.
type fakeSlowToReadyProvisioner struct {
	provisioner.Provisioner
	mu             sync.Mutex
	made           map[string]bool
	applied        map[string]*provisioner.Resource // runtimes, as Provision applied them last
	ready          bool
	failAfterApply bool
	interrupt      context.CancelFunc
	awaits         int
}

func (f *fakeSlowToReadyProvisioner) Type() string { return "fake-slow-to-ready" }
func (f *fakeSlowToReadyProvisioner) Close() error { return nil }
func (f *fakeSlowToReadyProvisioner) Supports(rt provisioner.ResourceType) bool {
	return rt == provisioner.ResourceTypeClickHouse || rt == provisioner.ResourceTypeRuntime
}

func (f *fakeSlowToReadyProvisioner) Provision(_ context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.made[r.ID] = true
	if r.Type == provisioner.ResourceTypeRuntime {
		args, err := provisioner.NewRuntimeArgs(opts.Args)
		if err != nil {
			return nil, err
		}
		cpu, memoryGB, _ := provisioner.NewRuntimeSizes(args.Slots)
		cfg := provisioner.RuntimeConfig{Host: "http://runtime-" + r.ID + ".fake:8080", Audience: "runtime-" + r.ID, CPU: cpu, MemoryGB: memoryGB, StorageBytes: args.StorageBytes()}
		res := &provisioner.Resource{ID: r.ID, Type: r.Type, Config: cfg.AsMap(), State: map[string]any{provisioner.StateKeySlots: args.Slots}}
		f.applied[r.ID] = res
		if f.failAfterApply {
			return res, errors.New("the fake applied the runtime, then failed")
		}
		return res, nil
	}
	cfg := provisioner.ClickhouseConfig{DSN: "clickhouse://u_" + r.ID + ":pw@ch.fake:9000/db_" + r.ID, Database: "db_" + r.ID, User: "u_" + r.ID}
	return &provisioner.Resource{ID: r.ID, Type: r.Type, Config: cfg.AsMap()}, nil
}

func (f *fakeSlowToReadyProvisioner) AwaitReady(ctx context.Context, _ *provisioner.Resource) error {
	f.mu.Lock()
	f.awaits++
	ready, interrupt := f.ready, f.interrupt
	f.mu.Unlock()
	if ready {
		return nil
	}
	if interrupt != nil {
		interrupt()
	}
	<-ctx.Done()
	return fmt.Errorf("waiting for the fake to be ready: %w", ctx.Err())
}

func (f *fakeSlowToReadyProvisioner) CheckResource(_ context.Context, r *provisioner.Resource, _ *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.made[r.ID] {
		return nil, fmt.Errorf("fake resource %s: %w", r.ID, provisioner.ErrResourceNotFound)
	}
	if applied := f.applied[r.ID]; applied != nil {
		return applied, nil
	}
	return r, nil
}

func (f *fakeSlowToReadyProvisioner) Deprovision(_ context.Context, r *provisioner.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.made, r.ID)
	return nil
}

// interruptingServer is the provider as ProviderFactories serve it, with each ApplyResourceChange's
// context cancellable by the fake: what Terraform's Ctrl-C does to a request in flight (it stops the
// provider, and terraform-plugin-go cancels the requests' contexts).
type interruptingServer struct {
	tfprotov6.ProviderServer
	fake  *fakeSlowToReadyProvisioner
	on    *atomic.Bool
	diags *[]*tfprotov6.Diagnostic
}

func (s interruptingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.fake.mu.Lock()
	s.fake.interrupt = nil
	if s.on.Load() {
		s.fake.interrupt = cancel
	}
	s.fake.mu.Unlock()
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		*s.diags = append(*s.diags, resp.Diagnostics...)
	}
	return resp, err
}

// slowToReady registers a fakeSlowToReadyProvisioner (type "fake-slow-to-ready") for the test and
// returns it with the provider factories that serve it through interruptingServer: interrupting
// (initially set) says whether an apply's AwaitReady is interrupted, and diags collects the applies'
// diagnostics.
func slowToReady(t *testing.T) (fake *fakeSlowToReadyProvisioner, interrupting *atomic.Bool, diags *[]*tfprotov6.Diagnostic, factories map[string]func() (tfprotov6.ProviderServer, error)) {
	fake = &fakeSlowToReadyProvisioner{made: map[string]bool{}, applied: map[string]*provisioner.Resource{}}
	provisioner.Initializers[fake.Type()] = func([]byte, database.DB, *zap.Logger) (provisioner.Provisioner, error) { return fake, nil }
	t.Cleanup(func() { delete(provisioner.Initializers, fake.Type()) })
	interrupting, diags = new(atomic.Bool), new([]*tfprotov6.Diagnostic)
	interrupting.Store(true)
	factories = map[string]func() (tfprotov6.ProviderServer, error){
		"rill": func() (tfprotov6.ProviderServer, error) {
			srv, err := acctest.ProviderFactories["rill"]()
			return interruptingServer{ProviderServer: srv, fake: fake, on: interrupting, diags: diags}, err
		},
	}
	return fake, interrupting, diags, factories
}

// rill_clickhouse's AwaitReady, as rill_runtime's: interrupted while it waits (Ctrl-C), the database
// stays in state untainted, with a warning, and the next plan (which refreshes it) is empty; failing
// otherwise (here, its create timeout), it stays in state tainted, the error says so, and the next
// apply replaces it.
func TestAccClickHouse_awaitReadyInterruptedKeepsItUntaintedAndFailedTaintsIt(t *testing.T) {
	acctest.RequireAcc(t)
	fake, interrupting, diags, factories := slowToReady(t)
	provider := fmt.Sprintf("provider \"rill\" {\n  ledger_dsn = %q\n  provisioner_set_json = %q\n}\n",
		acctest.SQLiteLedger(t), `{"ch": {"type": "fake-slow-to-ready", "spec": {}}}`)
	one := provider + "resource \"rill_clickhouse\" \"one\" {\n  provisioner_name = \"ch\"\n}\n"
	two := one + "resource \"rill_clickhouse\" \"two\" {\n  provisioner_name = \"ch\"\n  timeouts {\n    create = \"2s\"\n  }\n}\n"
	warned := func(summary string) error {
		for _, d := range *diags {
			if d.Severity == tfprotov6.DiagnosticSeverityWarning && d.Summary == summary {
				return nil
			}
		}
		return fmt.Errorf("no warning %q among %d diagnostics", summary, len(*diags))
	}
	tainted := func(address string, want bool) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			rs := s.RootModule().Resources[address]
			if rs == nil || rs.Primary == nil || rs.Primary.ID == "" {
				return fmt.Errorf("%s is not in state", address)
			}
			if rs.Primary.Tainted != want {
				return fmt.Errorf("%s tainted: %v, want %v", address, rs.Primary.Tainted, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				// Interrupted while waiting: kept, untainted; the plan after the apply is empty.
				Config: one,
				Check:  resource.ComposeAggregateTestCheckFunc(tainted("rill_clickhouse.one", false), func(*terraform.State) error { return warned("Interrupted before the ClickHouse database was ready") }),
			},
			{
				// Never ready within its create timeout: kept, tainted, and the error says so.
				PreConfig:   func() { interrupting.Store(false) },
				Config:      two,
				ExpectError: acctest.WordsRegexp("ClickHouse database did not become ready"),
			},
			{
				// Ready now: the apply replaces the tainted one and leaves the other alone.
				PreConfig: func() {
					fake.mu.Lock()
					fake.ready = true
					fake.mu.Unlock()
				},
				Config: two,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_clickhouse.two", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("rill_clickhouse.one", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(tainted("rill_clickhouse.one", false), tainted("rill_clickhouse.two", false)),
			},
		},
	})
	failed := 0
	for _, d := range *diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError && d.Summary == "ClickHouse database did not become ready" {
			failed++
			if !strings.Contains(d.Detail, "kept in state as tainted: the next apply destroys it and creates it again") {
				t.Errorf("the error does not say what becomes of the database: %s", d.Detail)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d errors saying the database did not become ready, want 1", failed)
	}
}
