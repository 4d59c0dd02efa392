//go:build rill_fake_clickhouse

// This file is compiled only into test builds of the provider (`go build -tags rill_fake_clickhouse`;
// the acceptance tests' dev-override binary). It registers "clickhouse-static-fake": the real
// clickhouse-static provisioner (the same SQL, naming, DSNs, scrubbing and logging) talking to a
// stand-in for ClickHouse, because no ClickHouse that can create users by SQL runs on the project's
// machines (see README.md). The stand-in keeps its users (with passwords) and databases in the JSON
// file named by FakeStateEnv, so that they outlive one provider process, as a server's would across
// terraform commands. Its names (the tag, the type, the variable) are in fake_names.go.

package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

func init() {
	provisioner.Register(FakeType, func(spec []byte, db database.DB, logger *zap.Logger) (provisioner.Provisioner, error) {
		pp, err := New(spec, db, logger)
		if err != nil {
			return nil, err
		}
		p := pp.(*Provisioner)
		admin, err := parseDSN(p.dsn)
		if err != nil {
			return nil, err
		}
		path := os.Getenv(FakeStateEnv)
		if path == "" {
			return nil, fmt.Errorf("%s: set %s to the stand-in's state file", FakeType, FakeStateEnv)
		}
		srv := &fileServer{path: path, adminUser: admin.Auth.Username, adminPassword: admin.Auth.Password}
		p.dial = srv.dial
		return p, nil
	})
}

// fileServer is the stand-in: it understands exactly the statements this package sends.
type fileServer struct {
	mu                       sync.Mutex
	path                     string
	adminUser, adminPassword string
}

type fileServerState struct {
	Users     map[string][]string `json:"users"` // name -> its passwords (ClickHouse 24.9+ allows several)
	Databases map[string]bool     `json:"databases"`
	// DefaultDatabases are the users' DEFAULT DATABASE, as system.users has them (default_database).
	DefaultDatabases map[string]string `json:"default_databases,omitempty"`
	// Comments are the databases' COMMENTs (the annotations as JSON), as system.databases has them.
	Comments map[string]string `json:"comments,omitempty"`
	// Faults are failures a test injects: a statement that starts with a key fails as its value says,
	// faultRefuse or faultHang.
	Faults map[string]string `json:"faults,omitempty"`
	// Down are addresses (host:port) that a test says no longer answer (a server that moved away):
	// a dial of a DSN that names one is refused as a network error.
	Down []string `json:"down,omitempty"`
}

// The faults a test can inject (fileServerState.Faults).
const (
	faultRefuse = "refuse" // the statement fails with a ClickHouse error
	faultHang   = "hang"   // no answer until the statement's context ends
)

func (s *fileServer) load() (*fileServerState, error) {
	st := &fileServerState{Users: map[string][]string{}, Databases: map[string]bool{"default": true}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	return st, json.Unmarshal(b, st)
}

// save replaces the state file by a rename, so that a test reading it while a statement runs (it
// polls the file during a destroy) never reads it half written.
func (s *fileServer) save(st *fileServerState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", s.path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

func (s *fileServer) dial(_ context.Context, dsn string) (session, error) {
	opts, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load()
	if err != nil {
		return nil, err
	}
	for _, addr := range opts.Addr {
		if slices.Contains(st.Down, addr) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
		}
	}
	user, password, db := opts.Auth.Username, opts.Auth.Password, opts.Auth.Database
	if user == s.adminUser {
		if password != s.adminPassword {
			return nil, exceptionf(codeAuthenticationFailed, "%s: Authentication failed", user)
		}
		return &fileSession{s: s, admin: true}, nil
	}
	if !slices.Contains(st.Users[user], password) {
		return nil, exceptionf(codeAuthenticationFailed, "%s: Authentication failed: password is incorrect, or there is no user with such name", user)
	}
	if db != "" && !st.Databases[db] {
		return nil, exceptionf(codeUnknownDatabase, "Database %s does not exist", db)
	}
	return &fileSession{s: s}, nil
}

type fileSession struct {
	s     *fileServer
	admin bool
}

var (
	createDatabaseRE = regexp.MustCompile("^CREATE DATABASE IF NOT EXISTS `([^`]+)`(?: ON CLUSTER `[^`]+`)?(?: COMMENT '((?:[^'\\\\]|\\\\.)*)')?")
	dropDatabaseRE   = regexp.MustCompile("^DROP DATABASE IF EXISTS `([^`]+)`")
	// A password is a string literal as quoteString writes it: ' and \ escaped with a backslash.
	setUserRE  = regexp.MustCompile("^(CREATE USER IF NOT EXISTS|ALTER USER) `([^`]+)`(?: ON CLUSTER `[^`]+`)?( ADD)? IDENTIFIED WITH sha256_password BY '((?:[^'\\\\]|\\\\.)*)'")
	dropUserRE = regexp.MustCompile("^DROP USER IF EXISTS `([^`]+)`")
	// The user option DEFAULT DATABASE, after the password literal (which the lazy match skips).
	defaultDatabaseRE = regexp.MustCompile("' DEFAULT DATABASE `([^`]+)`")
	quotedRE          = regexp.MustCompile(`'([^']*)'`)
)

func (f *fileSession) Exec(ctx context.Context, sql string) error {
	if err := ctx.Err(); err != nil {
		return err // as a driver does: nothing is sent once the context has ended
	}
	if !f.admin {
		return exceptionf(codeAccessDenied, "Not enough privileges")
	}
	switch fault, err := f.s.fault(sql); {
	case err != nil:
		return err
	case fault == faultRefuse:
		return exceptionf(codeAccessDenied, "the stand-in refuses this statement (a fault the test injected)")
	case fault == faultHang:
		<-ctx.Done()
		return ctx.Err()
	case fault != "":
		return fmt.Errorf("the stand-in knows no fault %q", fault)
	}
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	st, err := f.s.load()
	if err != nil {
		return err
	}
	switch {
	case createDatabaseRE.MatchString(sql):
		m := createDatabaseRE.FindStringSubmatch(sql)
		if !st.Databases[m[1]] && m[2] != "" { // IF NOT EXISTS: an existing database keeps its comment
			if st.Comments == nil {
				st.Comments = map[string]string{}
			}
			st.Comments[m[1]] = unquoteString(m[2])
		}
		st.Databases[m[1]] = true
	case dropDatabaseRE.MatchString(sql):
		name := dropDatabaseRE.FindStringSubmatch(sql)[1]
		delete(st.Databases, name)
		delete(st.Comments, name)
	case setUserRE.MatchString(sql):
		m := setUserRE.FindStringSubmatch(sql)
		verb, user, add, password := m[1], m[2], m[3] != "", unquoteString(m[4])
		_, exists := st.Users[user]
		switch {
		case verb == "CREATE USER IF NOT EXISTS" && exists:
			return nil
		case verb == "ALTER USER" && !exists:
			return exceptionf(codeUnknownUser, "There is no user `%s` in local_directory", user)
		case add:
			st.Users[user] = append(st.Users[user], password)
		default: // CREATE, or ALTER USER ... IDENTIFIED: this password only
			st.Users[user] = []string{password}
		}
		if dd := defaultDatabaseRE.FindStringSubmatch(sql[len(m[0])-1:]); dd != nil {
			if st.DefaultDatabases == nil {
				st.DefaultDatabases = map[string]string{}
			}
			st.DefaultDatabases[user] = dd[1]
		}
	case dropUserRE.MatchString(sql):
		name := dropUserRE.FindStringSubmatch(sql)[1]
		delete(st.Users, name)
		delete(st.DefaultDatabases, name)
	case strings.HasPrefix(sql, "GRANT "):
	default:
		return exceptionf(codeSyntaxError, "the stand-in does not understand this statement")
	}
	return f.s.save(st)
}

// fault is the fault injected for sql, or "".
func (s *fileServer) fault(sql string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load()
	if err != nil {
		return "", err
	}
	for prefix, fault := range st.Faults {
		if strings.HasPrefix(sql, prefix) {
			return fault, nil
		}
	}
	return "", nil
}

func (f *fileSession) QueryStrings(_ context.Context, q string) ([]string, error) {
	if q == "SELECT 1" {
		return []string{"1"}, nil
	}
	if !f.admin {
		return nil, exceptionf(codeAccessDenied, "Not enough privileges")
	}
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	st, err := f.s.load()
	if err != nil {
		return nil, err
	}
	literals := map[string]bool{}
	for _, m := range quotedRE.FindAllStringSubmatch(q, -1) {
		literals[m[1]] = true
	}
	pick := func(names map[string]bool) []string {
		var out []string
		for n := range names {
			if literals[n] || strings.Contains(q, " OR (") || strings.Contains(q, "startsWith(") {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	switch {
	case q == versionQuery:
		return []string{"25.8.1.1"}, nil
	case strings.Contains(q, "FROM system.privileges"):
		var known []string
		for _, priv := range sourcePrivileges {
			if literals[priv] {
				known = append(known, priv)
			}
		}
		return known, nil
	case q == accessManagementProbe:
		return []string{"CREATE USER " + quoteIdent(f.s.adminUser)}, nil
	case q == userDirectoriesQuery:
		return []string{"users_xml", "local_directory"}, nil
	case strings.HasPrefix(q, "SELECT default_database FROM system.users WHERE"):
		var out []string
		for n := range st.Users {
			if literals[n] {
				out = append(out, st.DefaultDatabases[n])
			}
		}
		return out, nil
	case strings.Contains(q, "FROM system.users WHERE default_database = "):
		var out []string
		for n := range st.Users {
			if db, ok := st.DefaultDatabases[n]; ok && strings.Contains(q, "default_database = "+quoteString(db)) && !strings.Contains(q, "name != "+quoteString(n)) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out, nil
	case strings.Contains(q, "FROM system.users WHERE"):
		users := map[string]bool{}
		for n := range st.Users {
			users[n] = true
		}
		return pick(users), nil
	case strings.HasPrefix(q, "SELECT comment FROM system.databases WHERE name = "):
		var out []string
		for _, db := range pick(st.Databases) {
			out = append(out, st.Comments[db])
		}
		return out, nil
	case strings.Contains(q, "FROM system.databases WHERE"):
		return pick(st.Databases), nil
	}
	return nil, exceptionf(codeSyntaxError, "the stand-in does not understand this query")
}

func unquoteString(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\'`, `'`).Replace(s)
}

func (f *fileSession) Ping(context.Context) error { return nil }
func (f *fileSession) Close() error               { return nil }

func exceptionf(code int32, format string, args ...any) error {
	return &clickhouse.Exception{Code: code, Message: fmt.Sprintf(format, args...)}
}
