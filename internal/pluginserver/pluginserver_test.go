package pluginserver

import (
	"context"
	"reflect"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
)

type requestKey struct{}

// request stands for what an RPC's context carries (terraform-plugin-go's loggers, the gRPC stream).
type request struct{ _ [64 << 10]byte }

// retainedAfter reports whether s still holds what an RPC's context carried after the RPC (the
// method of that name, for a resource type that does not exist) returned and its context was
// cancelled, as gRPC cancels a call's context when it ends.
func retainedAfter(t *testing.T, s tfprotov6.ProviderServer, method string) bool {
	t.Helper()
	req := &request{}
	held := weak.Make(req)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), requestKey{}, req))
	rpc := reflect.ValueOf(s).MethodByName(method)
	in := reflect.New(rpc.Type().In(1).Elem())
	if f := in.Elem().FieldByName("TypeName"); f.IsValid() {
		f.SetString("rill_nothing")
	}
	out := rpc.Call([]reflect.Value{reflect.ValueOf(ctx), in})
	cancel()
	if err, _ := out[1].Interface().(error); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for range 3 {
		runtime.GC()
	}
	return held.Value() != nil
}

// TestWrappedFrameworkLetsGoOfEachRequest calls every RPC of tfprotov6.ResourceServer and
// DataSourceServer on the framework's server, wrapped: none may keep the request once it returned.
func TestWrappedFrameworkLetsGoOfEachRequest(t *testing.T) {
	framework := providerserver.NewProtocol6(provider.New("test")())()
	if !retainedAfter(t, framework, "ReadResource") {
		// Then the framework was fixed upstream, and Wrap is no longer needed.
		t.Fatal("terraform-plugin-framework no longer keeps each RPC's context until StopProvider; pluginserver's wrapper can go")
	}
	wrapped := Wrap(framework)
	for _, iface := range []reflect.Type{reflect.TypeFor[tfprotov6.ResourceServer](), reflect.TypeFor[tfprotov6.DataSourceServer]()} {
		for i := range iface.NumMethod() {
			if method := iface.Method(i).Name; retainedAfter(t, wrapped, method) {
				t.Errorf("%s: the wrapped framework still holds the request after the RPC returned", method)
			}
		}
	}
}

func TestRequestContextIsTheRPCsUntilItReturns(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), requestKey{}, "req-1"), deadline)
	defer cancel()
	rc := attach(parent)

	if got := rc.Value(requestKey{}); got != "req-1" {
		t.Errorf("Value = %v, want the RPC's", got)
	}
	if d, ok := rc.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline = %v, %v; want the RPC's %v", d, ok, deadline)
	}
	// What the framework derives (registerContext's WithCancel) ends with the RPC.
	child, childCancel := context.WithCancel(rc)
	defer childCancel()
	cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived from the requestContext was not cancelled with the RPC")
	}

	rc.detach()
	if rc.Value(requestKey{}) != nil {
		t.Error("Value after the RPC returned: want nil")
	}
	if rc.Err() != context.Canceled {
		t.Errorf("Err after the RPC returned = %v, want context.Canceled", rc.Err())
	}
	select {
	case <-rc.Done():
	default:
		t.Error("Done after the RPC returned: want a closed channel")
	}
}
