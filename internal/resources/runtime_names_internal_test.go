package resources

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// The plan of a new named runtime that a static pool holds already says that the apply adopts it
// (another workspace's runtime of that name would then be managed by two states, and destroyed by
// either) instead of warning that no host has room, which an adoption needs none of. Before, a full
// pool warned "No host has room" and said nothing of the adoption. Once the command applies, it reads
// nothing.
func TestPlanOfANamedRuntimeAllocatedAlreadySaysTheApplyAdoptsIt(t *testing.T) {
	ctx := context.Background()
	pool := onePool(t) // one slot, taken by "web"; the real static pool, not the counting wrapper, answers ResourceExists
	if _, err := pool.Provision(ctx, &provisioner.Resource{ID: provisioner.NamedResourceID("pool", "web"), Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap(), Name: "web"}); err != nil {
		t.Fatal(err)
	}
	plan := func(r *RuntimeResource, name string) []string {
		t.Helper()
		m := runtimeModels()["fresh plan"]
		m.Name = types.StringValue(name)
		var summaries []string
		for _, d := range planRuntime(t, r, nil, m) {
			summaries = append(summaries, d.Summary())
		}
		return summaries
	}
	r := &RuntimeResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{"pool": pool.Provisioner}, Default: "pool"}}}
	for name, want := range map[string][]string{
		"web": {"Named runtime exists already: the apply adopts it"},
		"api": {"No host has room for this runtime"},
	} {
		if got := plan(r, name); !reflect.DeepEqual(got, want) {
			t.Errorf("plan of a new runtime named %q: %q, want %q", name, got, want)
		}
	}
	r.client.capacity.applying()
	if got := plan(r, "web"); len(got) != 0 {
		t.Errorf("an apply walk's plan: %q, want nothing", got)
	}
}

// planRuntime runs r's ModifyPlan for a runtime planned from state (nil: a new runtime) to plan, whose
// configuration is plan too, and returns its diagnostics.
func planRuntime(t *testing.T, r *RuntimeResource, state *runtimeModel, plan runtimeModel) diag.Diagnostics {
	t.Helper()
	_, d := modifyRuntimePlan(t, r, state, plan)
	return d
}

// modifyRuntimePlan is planRuntime, and also returns the plan ModifyPlan made.
func modifyRuntimePlan(t *testing.T, r *RuntimeResource, state *runtimeModel, plan runtimeModel) (runtimeModel, diag.Diagnostics) {
	t.Helper()
	ctx := context.Background()
	s := runtimeSchemaV0(ctx)
	var planRaw tftypes.Value
	if d := runtimeCodec.set(ctx, &planRaw, &plan); d.HasError() {
		t.Fatal(d)
	}
	stateRaw := tftypes.NewValue(s.Type().TerraformType(ctx), nil)
	if state != nil {
		if d := runtimeCodec.set(ctx, &stateRaw, state); d.HasError() {
			t.Fatal(d)
		}
	}
	req := resource.ModifyPlanRequest{Plan: tfsdk.Plan{Schema: s, Raw: planRaw}, Config: tfsdk.Config{Schema: s, Raw: planRaw},
		State: tfsdk.State{Schema: s, Raw: stateRaw}}
	resp := &resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, resp)
	var planned runtimeModel
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(runtimeCodec.get(ctx, resp.Plan.Raw, &planned)...)
	}
	return planned, resp.Diagnostics
}

// unanswering is a provisioner whose existence checks cannot be answered: each waits for the
// plan-check timeout (released here by the test) and fails, as against a Kubernetes API server whose
// packets are dropped.
type unanswering struct {
	provisioner.Provisioner
	calls   atomic.Int32
	release chan struct{}
}

func (u *unanswering) ResourceExists(ctx context.Context, _ *provisioner.Resource) (string, error) {
	u.calls.Add(1)
	<-u.release
	return "", errors.New("waited 30s for the Kubernetes API server to answer GET /apis/apps/v1, until the operation's deadline")
}

// Terraform plans at most -parallelism resources at once (10 by default). When the provisioner cannot
// tell whether a new named runtime exists (its cluster or ledger does not answer in time), the plans
// of the waves after the first do not ask it again: the adoption check is advice, and each attempt
// waits up to the plan-check timeout, saying nothing above the debug log. Before, every wave waited
// again: a plan of 100 new named Kubernetes runtimes with an unreachable API server took ten times
// 30 s before it printed anything.
func TestPlanAdoptionCheckThatCannotBeAnsweredIsNotAskedAgain(t *testing.T) {
	p := &unanswering{Provisioner: onePool(t), release: make(chan struct{})}
	reads, named := &capacityReads{}, &namedInstances{}
	for wave := range 3 {
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				var diags diag.Diagnostics
				if warnIfAdopting(context.Background(), reads, named, p, "pool", fmt.Sprintf("rt-%d-%d", wave, i), &diags) || len(diags) != 0 {
					t.Errorf("a check that could not be answered: %v", diags)
				}
			})
		}
		if wave == 0 {
			for p.calls.Load() < 10 { // the first wave's plans are all waiting
				time.Sleep(time.Millisecond)
			}
			close(p.release)
		}
		wg.Wait()
	}
	if n := p.calls.Load(); n != 10 {
		t.Errorf("3 waves of 10 plans asked %d times, want 10 (the first wave's)", n)
	}
}

// askedUntilCanceled is a provisioner that never answers CheckResource (an unreachable cluster) and
// records how its question ended.
type askedUntilCanceled struct {
	provisioner.Provisioner
	ended chan error
}

func (a askedUntilCanceled) CheckResource(ctx context.Context, _ *provisioner.Resource, _ *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	<-ctx.Done()
	a.ended <- ctx.Err()
	return nil, ctx.Err()
}

// An import through the wrong provisioner of a set that also has an unreachable one names the owner
// without waiting for the unreachable one: the set's other provisioners are asked at once, and the
// owner's answer ends the question to the unreachable one (canceled, not ended by elsewhereTimeout).
// Before, they were asked one after the other, and an unreachable provisioner first in the set cost
// the import elsewhereTimeout (30 s) before the owner was asked.
func TestAnImportAsksTheOtherProvisionersAtOnce(t *testing.T) {
	const id = "7d1f1e0a-4c55-4b8e-9a59-0c1b1e6f0a01"
	owner := onePool(t)
	if _, err := owner.Provision(context.Background(), &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}); err != nil {
		t.Fatal(err)
	}
	unreachable := askedUntilCanceled{Provisioner: onePool(t).Provisioner, ended: make(chan error, 1)}
	r := &RuntimeResource{resourceBase{client: &Client{Set: map[string]provisioner.Provisioner{
		"a-unreachable": unreachable, "b-owner": owner, "c-asked": onePool(t),
	}, Default: "c-asked"}}}
	if got, _ := r.heldElsewhere(context.Background(), "c-asked", id, nil); got != "pool" {
		t.Fatalf("heldElsewhere = %q, want the owner the ledger records, %q", got, "pool")
	}
	if err := <-unreachable.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the unreachable provisioner's question ended with %v, want it canceled once the owner answered", err)
	}
}
