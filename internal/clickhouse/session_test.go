package clickhouse

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// silentServer listens on loopback and accepts connections but never answers: a ClickHouse server
// that hangs, or a proxy in front of one that is down. It returns host:port.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// Every call to a server that accepts connections and never answers ends when its context does (the
// operation's timeout, or Ctrl-C), not after the client's dial_timeout, which the client applies to
// the dial and handshake whatever the context says; and its error says what it waited for, where,
// how long and why it stopped. The admin connection (Check, Provision, Deprovision) and a resource's
// own login (CheckResource, AwaitReady) alike. Before, each waited out dial_timeout (here 90 s).
func TestCallsToAServerThatNeverAnswersEndWithTheirContext(t *testing.T) {
	addr := silentServer(t)
	const password = "Adm1n-Pa55w0rd"
	dsn := "clickhouse://admin:" + password + "@" + addr + "?dial_timeout=90s"
	pp, err := New([]byte(`{"dsn": "`+dsn+`"}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	t.Cleanup(func() { _ = p.Close() })
	tenant := &provisioner.Resource{ID: "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11", Type: provisioner.ResourceTypeClickHouse,
		Config: (&provisioner.ClickhouseConfig{DSN: "clickhouse://rill_x:Tenant-Pa55w0rd@" + addr + "/db?dial_timeout=90s"}).AsMap()}

	ops := map[string]func(ctx context.Context) error{
		"admin connection": p.Check,
		"resource login": func(ctx context.Context) error {
			_, err := p.CheckResource(ctx, tenant, nil)
			return err
		},
	}
	endings := map[string]struct {
		ctx   func() (context.Context, context.CancelFunc)
		until string
		cause error
	}{
		"deadline": {func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		},
			"until the operation's deadline", context.DeadlineExceeded},
		"interrupt": {func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			return ctx, cancel
		}, "until the operation was canceled", context.Canceled},
	}
	for opName, op := range ops {
		for endName, end := range endings {
			t.Run(opName+"/"+endName, func(t *testing.T) {
				ctx, cancel := end.ctx()
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- op(ctx) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(30 * time.Second):
					t.Fatalf("still waiting 30 s after the context ended at 1 s (dial_timeout is 90 s)")
				}
				want := "waited 1s for ClickHouse at " + addr + " to answer, " + end.until
				// The provisioner's errors are scrubbed of secrets as text, so they wrap nothing: the
				// cause is in the words.
				if err == nil || !strings.Contains(err.Error(), want+": "+end.cause.Error()) {
					t.Fatalf("got %v; want an error that says %q", err, want)
				}
				if strings.Contains(err.Error(), "Pa55w0rd") {
					t.Errorf("the error shows a password: %v", err)
				}
				t.Logf("error: %v", err)
			})
		}
	}
}
