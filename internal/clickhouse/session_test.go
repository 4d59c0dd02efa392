package clickhouse

import (
	"context"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

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
				// How long it says it waited is not checked: the context's second runs from end.ctx(),
				// the wait's clock from when op began, and a loaded machine puts anything between them
				// (it said 900ms once). That it ended with its context, not the 90 s dial_timeout, is
				// the 30 s bound above.
				want := regexp.MustCompile(`waited [0-9.]+m?s for ClickHouse at ` + regexp.QuoteMeta(addr+" to answer, "+end.until+": "+end.cause.Error()))
				// The provisioner's errors are scrubbed of secrets as text, so they wrap nothing: the
				// cause is in the words.
				if err == nil || !want.MatchString(err.Error()) {
					t.Fatalf("got %v; want an error that matches %q", err, want)
				}
				if strings.Contains(err.Error(), "Pa55w0rd") {
					t.Errorf("the error shows a password: %v", err)
				}
				t.Logf("error: %v", err)
			})
		}
	}
}

// slowDialConn stands in for clickhouse-go's connection pool where a real server cannot be made to
// do it on cue: its first Exec opens a connection that completes only when the test says, whatever
// the context says (the client dials and handshakes a native connection under dial_timeout alone),
// and then sends its statement, as the client does with a context cancelled without a deadline (a
// Ctrl-C): conn.exec writes the query, and only its processing sees the context and sends a Cancel
// after it. It records the statements in the order the server receives them.
type slowDialConn struct {
	driver.Conn               // the methods the session does not call
	dialing     chan struct{} // closed when the first Exec starts to connect
	connected   chan struct{} // closed by the test: that connection is open
	mu          sync.Mutex
	started     bool
	received    []string
}

func (c *slowDialConn) Exec(_ context.Context, query string, _ ...any) error {
	c.mu.Lock()
	first := !c.started
	c.started = true
	c.mu.Unlock()
	if first {
		close(c.dialing)
		<-c.connected
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.received = append(c.received, query)
	return nil
}

func (c *slowDialConn) Ping(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.received = append(c.received, "(ping)")
	return nil
}

func (c *slowDialConn) statements() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.received)
}

// A statement the session gave up on when its context ended (a Ctrl-C while the client was still
// opening a connection to a slow server) reaches the server before any later call of the session:
// the undo of the interrupted create runs next with a context of its own, and had its lookup and DROP
// gone first, the CREATE that arrived after them would have left a user (or database) in no state,
// where the guide promises that a Ctrl-C leaves nothing. A later call whose own context ends first
// returns then, and sends nothing. Before, the later calls went to the server at once, ahead of the
// statement given up on.
func TestAStatementGivenUpOnReachesTheServerBeforeLaterCalls(t *testing.T) {
	conn := &slowDialConn{dialing: make(chan struct{}), connected: make(chan struct{})}
	s := &chSession{conn: conn, addr: "127.0.0.1:9000"}
	connect := sync.OnceFunc(func() { close(conn.connected) })
	t.Cleanup(connect)

	// The create's statement, interrupted while its connection opens.
	ctx, cancel := context.WithCancel(context.Background())
	created := make(chan error, 1)
	go func() { created <- s.Exec(ctx, "CREATE USER IF NOT EXISTS `rill_x`") }()
	<-conn.dialing
	cancel()
	select {
	case err := <-created:
		if err == nil || !strings.Contains(err.Error(), "until the operation was canceled") {
			t.Fatalf("the interrupted statement returned %v, want the error of a canceled operation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted statement did not return when its context ended")
	}

	// A call whose context ends while that statement still runs.
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	if err := s.Exec(short, "DROP DATABASE IF EXISTS `rill_early`"); err == nil || !strings.Contains(err.Error(), "until the operation's deadline") {
		t.Fatalf("a call whose context ended before the statement given up on did: got %v, want the deadline's error", err)
	}

	// The undo, with a context of its own; the connection opens a moment after it starts.
	time.AfterFunc(200*time.Millisecond, connect)
	undo, cancelUndo := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelUndo()
	if err := s.Ping(undo); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(undo, "DROP USER IF EXISTS `rill_x`"); err != nil {
		t.Fatal(err)
	}
	want := []string{"CREATE USER IF NOT EXISTS `rill_x`", "(ping)", "DROP USER IF EXISTS `rill_x`"}
	if got := conn.statements(); !slices.Equal(got, want) {
		t.Fatalf("the server received %q, want %q", got, want)
	}
}

// A clickhouse:// DSN pointed at a port that answers HTTP (the server's HTTP port, 8123, is the
// usual mix-up) fails the admin connection with clickhouse-go's "[handshake] unexpected packet [72]
// from server" followed by what to change, the scheme or the port; and without the password. Before,
// the error stopped at the packet number, which names neither.
func TestAdminConnectionToAnHTTPPortSaysToUseAnHTTPDSN(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// What ClickHouse's HTTP port answers to bytes that are no HTTP request.
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"))
			_ = c.Close()
		}
	}()
	const password = "Adm1n-Pa55w0rd"
	pp, err := New([]byte(`{"dsn": "clickhouse://admin:`+password+`@`+ln.Addr().String()+`/default"}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	t.Cleanup(func() { _ = p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = p.Check(ctx)
	if err == nil {
		t.Fatal("Check against an HTTP answer succeeded")
	}
	for _, want := range []string{"unexpected packet [72]", "does not speak ClickHouse's native protocol", "write the DSN as http://"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q holds the password", err)
	}
}
