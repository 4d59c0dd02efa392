package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// session is the little the provisioner needs from a ClickHouse connection. Tests replace it.
type session interface {
	// Exec runs a statement and discards any result.
	Exec(ctx context.Context, query string) error
	// QueryStrings runs a query and returns its first column, each value formatted as text.
	QueryStrings(ctx context.Context, query string) ([]string, error)
	// Ping checks that the server answers (and, for a new connection, that login works).
	Ping(ctx context.Context) error
	Close() error
}

// dialFunc opens a session for a DSN. It must not log the DSN.
type dialFunc func(ctx context.Context, dsn string) (session, error)

// DefaultDialTimeout bounds each connection's dial and handshake when the DSN sets no `dial_timeout`
// (clickhouse-go's own default, 30 s, is not used: ParseDSN leaves the field zero).
const DefaultDialTimeout = 10 * time.Second

// dialClickHouse opens a clickhouse-go connection pool for dsn. Debug output is always off: the
// client's debug log prints statements, and ours carry passwords.
func dialClickHouse(_ context.Context, dsn string) (session, error) {
	opts, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("DSN %w", err)
	}
	// A DSN's debug=true still sets the deprecated Debug field, and with no Logger the client then logs
	// to stdout; with Debug off and no Logger it logs nothing (clickhouse-go's Options.logger).
	opts.Debug = false //nolint:staticcheck // SA1019: the replacement (Logger) does not switch off what the DSN switched on
	opts.Logger = nil
	if opts.DialTimeout == 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, err
	}
	return &chSession{conn: conn, addr: strings.Join(opts.Addr, ",")}, nil
}

// chSession is a clickhouse-go connection pool whose calls end when their context does. The client
// honours the context while a statement runs, but not while it opens a connection: the native
// protocol's dial and handshake wait out the DSN's dial_timeout (10 s by default) for each address
// whatever the context says, so a server that accepts connections and never answers would hold a
// refresh with `timeouts { read = "2s" }`, or an interrupted apply, that long.
type chSession struct {
	conn driver.Conn
	addr string // host:port, or several joined by commas: no credentials

	mu sync.Mutex
	// abandoned are the Execs whose callers returned when their context ended while the client still
	// ran them (each closed once the client's call returned): see bounded.
	abandoned []chan struct{}
}

// bounded runs call and returns its error, or returns when ctx ends, saying what it waited for and
// how long; call then finishes in the background, within the client's own dial_timeout (for the dial,
// then for the handshake, per address).
//
// A statement given up on that way may still reach the server: once the client's dial completes it
// sends the statement whatever the context says (a context cancelled by a Ctrl-C has no deadline to
// fail the write), and only then sees the context and sends a Cancel. So every call of the session
// starts only once the Execs given up on before it (write) have ended: the undo of an interrupted
// create (its DROP, and the lookup of what to drop) runs next with a context of its own, and were it
// to reach the server first, the CREATE would leave behind what the undo had just dropped, in no
// state. A call whose context ends while it waits for them returns then and sends nothing.
func (s *chSession) bounded(ctx context.Context, write bool, call func() error) error {
	start := time.Now()
	earlier := s.unfinished()
	finished := make(chan struct{})
	var err error
	go func() {
		defer close(finished)
		for _, e := range earlier {
			<-e // ends within the client's dial_timeout: no context to wait on, as above
		}
		if err = ctx.Err(); err == nil {
			err = call()
		}
	}()
	select {
	case <-finished:
		return err
	case <-ctx.Done():
		if write {
			s.mu.Lock()
			s.abandoned = append(s.abandoned, finished)
			s.mu.Unlock()
		}
		return waits.Ended(ctx, start, fmt.Sprintf("ClickHouse at %s to answer", s.addr))
	}
}

// unfinished returns the Execs given up on that the client still runs, and forgets the others.
func (s *chSession) unfinished() []chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	var left []chan struct{} // a new slice: callers range over the ones returned before, unlocked
	for _, e := range s.abandoned {
		select {
		case <-e:
		default:
			left = append(left, e)
		}
	}
	s.abandoned = left
	return left
}

func (s *chSession) Exec(ctx context.Context, query string) error {
	return s.bounded(ctx, true, func() error { return s.conn.Exec(ctx, query) })
}

func (s *chSession) QueryStrings(ctx context.Context, query string) ([]string, error) {
	var out []string
	err := s.bounded(ctx, false, func() error {
		var err error
		out, err = s.queryStrings(ctx, query)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *chSession) queryStrings(ctx context.Context, query string) ([]string, error) {
	rows, err := s.conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	types := rows.ColumnTypes()
	if len(types) == 0 {
		// Over HTTP an empty result has no block at all, so no columns either (the native protocol
		// sends a header block): no rows.
		return nil, rows.Err()
	}
	var out []string
	for rows.Next() {
		dest := make([]any, len(types))
		for i, ct := range types {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		v := reflect.ValueOf(dest[0]).Elem()
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		out = append(out, fmt.Sprint(v.Interface()))
	}
	return out, rows.Err()
}

func (s *chSession) Ping(ctx context.Context) error {
	return s.bounded(ctx, false, func() error { return s.conn.Ping(ctx) })
}
func (s *chSession) Close() error { return s.conn.Close() }

// ClickHouse exception codes that mean the login named a user, password or database that does not
// exist (any more). Everything else, notably network errors, says nothing about existence.
const (
	codeUnknownTable         = 60
	codeUnknownDatabase      = 81
	codeUnknownUser          = 192
	codeWrongPassword        = 193
	codeRequiredPassword     = 194
	codeAuthenticationFailed = 516
	codeAccessDenied         = 497
	codeSyntaxError          = 62
	codeUnknownSetting       = 115
	codeUnknownIdentifier    = 47 // a column the server does not have (Missing columns)
)

var codeInText = regexp.MustCompile(`(?:^|[^A-Za-z])[Cc]ode: (\d+)[.,]`)

// exceptionCode returns the ClickHouse exception code carried by err, or 0. Network errors (even when
// their text happens to contain a code) give 0.
func exceptionCode(err error) int {
	if err == nil {
		return 0
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return int(ex.Code)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return 0
	}
	// Some paths of the HTTP transport hand back the server's text without an Exception.
	if m := codeInText.FindStringSubmatch(err.Error()); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n
		}
	}
	return 0
}

// isGoneError reports whether a login failure means the user or database no longer exists (or the
// password no longer matches, which for a user we created means it was dropped and recreated).
func isGoneError(err error) bool {
	switch exceptionCode(err) {
	case codeUnknownDatabase, codeUnknownUser, codeWrongPassword, codeRequiredPassword, codeAuthenticationFailed:
		return true
	}
	return false
}
