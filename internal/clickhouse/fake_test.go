package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

const fakeAdminDSN = "clickhouse://admin:adminsecretpw@ch.test:9000/default?dial_timeout=3s"

// fakeServer stands in for ClickHouse in unit tests: it records the statements the admin connection
// runs and answers tenant logins as told.
type fakeServer struct {
	mu             sync.Mutex
	version        string
	accessProbeErr error
	// userDirectories answers system.user_directories (nil: users_xml and local_directory).
	userDirectories []string
	failOn          string // an admin statement containing this fails...
	failErr         func(sql string) error
	dialErr         error
	dials           int
	execs           []string
	queries         []string
	databases       []string           // answer to the system.databases lookup
	comments        map[string]string  // the databases' COMMENTs, for system.databases.comment
	commentErr      error              // when set, the system.databases.comment lookup fails with it
	users           []string           // users that exist, for the system.users lookup
	defaultDBs      map[string]string  // users' default_database in system.users ("" when unset)
	usersErr        error              // when set, the system.users lookup fails with it
	defaultDBErr    error              // when set, the system.users.default_database lookup fails with it
	adminDSNs       []string           // DSNs the admin connections were opened with
	privileges      []string           // answer to the system.privileges lookup (nil: all of sourcePrivileges)
	tenant          map[string][]error // per DSN, errors returned by successive SELECT 1 (then success)
	tenantDials     int
}

func newFakeServer() *fakeServer {
	return &fakeServer{version: "25.8.1.1", tenant: map[string][]error{}}
}

func (f *fakeServer) dial(_ context.Context, dsn string) (session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dials++
	if f.dialErr != nil {
		return nil, f.dialErr
	}
	if opts, err := parseDSN(dsn); err == nil && opts.Auth.Username == "admin" {
		f.adminDSNs = append(f.adminDSNs, dsn)
		return &fakeSession{f: f, admin: true}, nil // the dsn or the write_dsn of a spec
	}
	f.tenantDials++
	return &fakeSession{f: f, dsn: dsn}, nil
}

func (f *fakeServer) dialCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials
}

func (f *fakeServer) setDialErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dialErr = err
}

func (f *fakeServer) statements() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.execs...)
}

func (f *fakeServer) setTenant(dsn string, errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenant[dsn] = errs
}

type fakeSession struct {
	f     *fakeServer
	admin bool
	dsn   string
}

func (s *fakeSession) Exec(_ context.Context, sql string) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if !s.admin {
		return errors.New("tenant exec not faked")
	}
	if s.f.failOn != "" && strings.Contains(sql, s.f.failOn) {
		return s.f.failErr(sql)
	}
	s.f.execs = append(s.f.execs, sql)
	return nil
}

func (s *fakeSession) QueryStrings(_ context.Context, q string) ([]string, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.queries = append(s.f.queries, q)
	if !s.admin {
		if q != "SELECT 1" {
			return nil, fmt.Errorf("tenant query %q not faked", q)
		}
		if errs := s.f.tenant[s.dsn]; len(errs) > 0 {
			s.f.tenant[s.dsn] = errs[1:]
			if errs[0] != nil {
				return nil, errs[0]
			}
		}
		return []string{"1"}, nil
	}
	switch {
	case q == versionQuery:
		return []string{s.f.version}, nil
	case q == accessManagementProbe:
		if s.f.accessProbeErr != nil {
			return nil, s.f.accessProbeErr
		}
		return []string{"CREATE USER default"}, nil
	case q == userDirectoriesQuery:
		if s.f.userDirectories == nil {
			return []string{"users_xml", "local_directory"}, nil
		}
		return s.f.userDirectories, nil
	case q == "SELECT 1":
		return []string{"1"}, nil
	case strings.Contains(q, "FROM system.privileges"):
		if s.f.privileges == nil {
			return named(sourcePrivileges, q), nil
		}
		return named(s.f.privileges, q), nil
	case strings.HasPrefix(q, "SELECT default_database FROM system.users WHERE"):
		if s.f.defaultDBErr != nil {
			return nil, s.f.defaultDBErr
		}
		var out []string
		for _, u := range named(s.f.users, q) {
			out = append(out, s.f.defaultDBs[u])
		}
		return out, nil
	case strings.Contains(q, "system.users WHERE default_database = "):
		var out []string
		for _, u := range s.f.users {
			if db, ok := s.f.defaultDBs[u]; ok && strings.Contains(q, "default_database = "+quoteString(db)) && !strings.Contains(q, "name != "+quoteString(u)) {
				out = append(out, u)
			}
		}
		return out, nil
	case strings.Contains(q, "system.users WHERE"):
		if s.f.usersErr != nil {
			return nil, s.f.usersErr
		}
		return named(s.f.users, q), nil
	case strings.HasPrefix(q, "SELECT comment FROM system.databases WHERE"):
		if s.f.commentErr != nil {
			return nil, s.f.commentErr
		}
		var out []string
		for _, db := range named(s.f.databases, q) {
			out = append(out, s.f.comments[db])
		}
		return out, nil
	case strings.Contains(q, "system.databases") && (strings.Contains(q, " OR (") || !strings.Contains(q, "name = ")):
		return s.f.databases, nil // the lookup by ID suffix may return more than asked
	case strings.Contains(q, "system.databases"):
		return named(s.f.databases, q), nil
	}
	return nil, fmt.Errorf("admin query %q not faked", q)
}

func (s *fakeSession) Ping(context.Context) error { return nil }
func (s *fakeSession) Close() error               { return nil }

// newTestProvisioner builds a provisioner from spec that talks to fake instead of a server.
// onFake is a provisioner with the plain spec (the admin DSN only) on a fresh fake server.
func onFake(t *testing.T) (*fakeServer, *Provisioner) {
	t.Helper()
	fake := newFakeServer()
	return fake, newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
}

// provisionedOnFake is onFake with one database provisioned (testUUID, testAnnotations).
func provisionedOnFake(t *testing.T) (*fakeServer, *Provisioner, *provisioner.Resource) {
	t.Helper()
	fake, p := onFake(t)
	r, err := p.Provision(context.Background(), newResource(testUUID), testAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	return fake, p, r
}

func newTestProvisioner(t *testing.T, fake *fakeServer, spec string) *Provisioner {
	return newTestProvisionerWithLogger(t, fake, spec, zap.NewNop())
}

func newTestProvisionerWithLogger(t *testing.T, fake *fakeServer, spec string, logger *zap.Logger) *Provisioner {
	t.Helper()
	pp, err := New([]byte(spec), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	p.dial = fake.dial
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func exception(code int32, msg string) error {
	return &clickhouse.Exception{Code: code, Message: msg}
}

// named returns the names that the query quotes as string literals.
func named(names []string, q string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(q, quoteString(n)) {
			out = append(out, n)
		}
	}
	return out
}

// A caller waiting while another opens the admin connection stops at its own deadline, with an error
// that says what it waited for, instead of waiting out the first caller's dial.
func TestAdminSessionWaiterHonoursItsOwnDeadline(t *testing.T) {
	fake, p := onFake(t)
	entered, release := make(chan struct{}), make(chan struct{})
	p.dial = func(ctx context.Context, dsn string) (session, error) {
		close(entered)
		<-release
		return fake.dial(ctx, dsn)
	}
	first := make(chan error, 1)
	go func() { _, err := p.adminSession(context.Background()); first <- err }()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // time to begin the wait: a deadline passed before it is no wait (waits.Ended)
	defer cancel()
	_, err := p.adminSession(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "for another operation of this run to connect to ClickHouse, until the operation's deadline") ||
		!strings.HasPrefix(err.Error(), "waited ") {
		t.Fatalf("got %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// A call whose deadline had passed before it began blames no other operation for the admin connection
// (`timeouts { read = "1ns" }` with no other operation running was "did not wait for another operation
// of this run to connect to ClickHouse" about half the time: a select between the free lock and the
// ended context).
func TestAdminSessionAfterItsDeadlineBlamesNoOtherOperation(t *testing.T) {
	_, p := onFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	for range 20 {
		_, err := p.adminSession(ctx)
		want := "did not wait for ClickHouse's admin connection: the operation's deadline had passed before the wait began"
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want an error saying %q", err, want)
		}
	}
}
