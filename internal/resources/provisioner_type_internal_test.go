package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// keyedPrivate is private state as the framework keeps it: keys to JSON values.
type keyedPrivate map[string][]byte

func (p keyedPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

func (p keyedPrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	if len(value) == 0 {
		delete(p, key)
	} else {
		p[key] = value
	}
	return nil
}

// Every provisioner state stored for a resource (a create's, an update's, a refresh's, and what a
// failed create keeps) records the type of the provisioner it came from. Before, nothing did, and
// WithoutObservations drops the owner's name: a refresh could not tell which type made a runtime.
func TestStoredProvisionerStateRecordsItsProvisionersType(t *testing.T) {
	ctx := context.Background()
	private := keyedPrivate{}
	if diags := saveProvisionerState(ctx, private, "static", map[string]any{"ledger_id": "x"}); diags.HasError() {
		t.Fatal(diags)
	}
	if got := recordedProvisionerType(ctx, private); got != "static" {
		t.Errorf("after saveProvisionerState the recorded type is %q, want static (private state %q)", got, private)
	}
	failed := keyedPrivate{}
	partial := &provisioner.Resource{State: map[string]any{"namespace": "rill", "cluster_id": "u"}}
	if diags := keepFailedCreate(ctx, failed, "kubernetes", partial); diags.HasError() {
		t.Fatal(diags)
	}
	if got := recordedProvisionerType(ctx, failed); got != "kubernetes" {
		t.Errorf("after keepFailedCreate the recorded type is %q, want kubernetes", got)
	}
	// Nothing recorded (a state from before the key), or not a JSON string (a hand edit): no type.
	for _, p := range []keyedPrivate{{}, {provisionerTypeKey: []byte(`["static"]`)}} {
		if got := recordedProvisionerType(ctx, p); got != "" {
			t.Errorf("%q: recorded type %q, want none", p, got)
		}
	}
}

// A resource whose set entry changed type under the same name (kubernetes to static, say) is refused
// before any provisioner call, on provisioner_name, with an error that wraps ErrIdentityMismatch (never
// ErrResourceNotFound: the resource is not gone), names both types and the entry, and says what to do.
// The same type, or no type recorded (a state from before the key, left to the provisioner as before),
// goes on to the call. Before, the call was made: the static pool took the Kubernetes state for one of
// its own from before ledger identities, found no row, and the refresh reported the runtime gone.
func TestAResourceWhoseProvisionerChangedTypeIsRefusedBeforeAnyCall(t *testing.T) {
	ctx := context.Background()
	const id = "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"
	client := &Client{Set: map[string]provisioner.Provisioner{"default": onePool(t)}, Default: "default"}
	kubeMade := func() keyedPrivate {
		return keyedPrivate{privateStateKey: []byte(`{"namespace":"rill","cluster_id":"u"}`), provisionerTypeKey: []byte(`"kubernetes"`)}
	}
	timeout := operationTimeout{op: "read", d: time.Minute}

	var diags diag.Diagnostics
	if c := startCall(ctx, client, provisioner.ResourceTypeRuntime, "default", id, timeout, kubeMade(), &diags); c != nil {
		c.end()
		t.Fatal("startCall went on with a runtime that a kubernetes provisioner made, through a static one")
	}
	if len(diags) != 1 || diags[0].Summary() != "Provisioner type changed" {
		t.Fatalf("want one Provisioner type changed, got %v", diags)
	}
	if p, ok := diags[0].(diag.DiagnosticWithPath); !ok || !p.Path().Equal(path.Root("provisioner_name")) {
		t.Errorf("the error is not on provisioner_name: %v", diags[0])
	}
	for _, want := range []string{id, `"default"`, `type "kubernetes"`, `type "static"`, `"type": "kubernetes"`, "not treating the runtime as deleted",
		"add a new entry of that type", "terraform state rm"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the detail lacks %q: %s", want, diags[0].Detail())
		}
	}

	err := checkProvisionerType(ctx, kubeMade(), provisioner.ResourceTypeRuntime, id, "default", client.Set["default"])
	if !errors.Is(err, provisioner.ErrIdentityMismatch) || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Errorf("the error %v does not wrap ErrIdentityMismatch alone", err)
	}

	for what, private := range map[string]keyedPrivate{
		"made by static":   {provisionerTypeKey: []byte(`"static"`)},
		"no type recorded": {privateStateKey: []byte(`{"namespace":"rill"}`)},
	} {
		var diags diag.Diagnostics
		c := startCall(ctx, client, provisioner.ResourceTypeRuntime, "default", id, timeout, private, &diags)
		if c == nil || diags.HasError() {
			t.Errorf("%s: the call was refused: %v", what, diags)
			continue
		}
		c.end()
	}
}

// A provisioner's refusal of a state that another type wrote (a state older than provisionerTypeKey,
// which checkProvisionerType cannot judge) is reported as the recorded type change is, on
// provisioner_name, with the key that gave the other type away; any other error is left to the
// caller. Before, it was the caller's generic failure ("Reading the runtime failed").
func TestAProvisionersRefusalOfAnotherTypesStateIsReportedAsATypeChange(t *testing.T) {
	const id = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	var diags diag.Diagnostics
	if addForeignState(&diags, "pool", errors.New("unreachable")) || addForeignState(&diags, "pool", nil) || len(diags) != 0 {
		t.Fatalf("another error, or none, was reported: %v", diags)
	}
	refused := provisioner.CheckStateOwner("kubernetes", &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime,
		State: map[string]any{"ledger_id": "L"}})
	if refused == nil {
		t.Fatal("no type registered ledger_id (the static provisioner is linked into these tests: capacity_plan_internal_test.go)")
	}
	if !addForeignState(&diags, "pool", fmt.Errorf("wrapped: %w", refused)) || len(diags) != 1 {
		t.Fatalf("the refusal was not reported once: %v", diags)
	}
	d, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(path.Root("provisioner_name")) || d.Summary() != "Provisioner type changed" {
		t.Fatalf("got %v, want \"Provisioner type changed\" on provisioner_name", diags[0])
	}
	for _, want := range []string{"This runtime's state was written by a static provisioner (it records ledger_id)", id, `"pool"`,
		`type "static"`, `type "kubernetes"`, "terraform state rm"} {
		if !strings.Contains(d.Detail(), want) {
			t.Errorf("the detail lacks %q: %s", want, d.Detail())
		}
	}
}
