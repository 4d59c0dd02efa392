package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

var testAnnotations = &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "Acme", "project_name": "Web"}}

func newResource(id string) *provisioner.Resource {
	return &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}
}

func TestProvisionCreatesDatabaseUserAndGrantsAfterCheckingAccessManagement(t *testing.T) {
	fake := newFakeServer()
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`","write_dsn":"http://admin:adminsecretpw@writer.test:8123","cluster":"main"}`)
	p.newPassword = func() (string, error) { return "GeneratedPassword0123456789abcdefGHIJ", nil }

	got, err := p.Provision(context.Background(), newResource(testUUID), testAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	db := "rill_acme_web_" + idPart(testUUID)
	user := "rill_" + idPart(testUUID)
	stmts, finish := provisionStatements(db, user, "GeneratedPassword0123456789abcdefGHIJ", "main", `{"organization_name":"Acme","project_name":"Web"}`, modernServer)
	var want []string
	for _, st := range append(stmts, finish...) {
		want = append(want, st.sql)
	}
	if strings.Join(fake.statements(), "\n") != strings.Join(want, "\n") {
		t.Fatalf("statements:\n%s\nwant:\n%s", strings.Join(fake.statements(), "\n"), strings.Join(want, "\n"))
	}
	if len(fake.queries) < 4 || fake.queries[0] != versionQuery || fake.queries[1] != accessManagementProbe ||
		fake.queries[2] != userDirectoriesQuery || !strings.Contains(fake.queries[3], "FROM system.privileges") {
		t.Fatalf("the server was not checked before the first statement: %q", fake.queries)
	}
	// The old passwords went only after the new one logged in (SELECT 1 as the resource's user).
	if last := fake.queries[len(fake.queries)-1]; last != "SELECT 1" || fake.tenantDials != 1 {
		t.Fatalf("the new password was not tried before the old ones were dropped: %q, %d tenant logins", fake.queries, fake.tenantDials)
	}

	if got.ID != testUUID || got.Type != provisioner.ResourceTypeClickHouse {
		t.Fatalf("resource %+v", got)
	}
	if got.State["database"] != db || got.State["user"] != user || got.State["cluster"] != "main" {
		t.Fatalf("state %v", got.State)
	}
	if got.Config["database"] != db || got.Config["user"] != user || got.Config["cluster"] != "main" {
		t.Fatalf("config names %v", got.Config)
	}
	for key, host := range map[string]string{"dsn": "ch.test:9000", "write_dsn": "writer.test:8123"} {
		opts, err := clickhouse.ParseDSN(got.Config[key].(string))
		if err != nil {
			t.Fatalf("config %s: %v", key, err)
		}
		if opts.Auth.Username != user || opts.Auth.Password != "GeneratedPassword0123456789abcdefGHIJ" || opts.Auth.Database != db || opts.Addr[0] != host {
			t.Fatalf("config %s gives %+v at %v", key, opts.Auth, opts.Addr)
		}
	}
	if strings.Contains(got.Config["dsn"].(string), "dial_timeout=3s") == false {
		t.Fatalf("config dsn lost the admin DSN's query string: %s", got.Config["dsn"])
	}
}

func TestProvisionReturnsTheResourceUnchangedWhenItsDSNWorks(t *testing.T) {
	fake, p, first := provisionedOnFake(t)
	before := len(fake.statements())
	again, err := p.Provision(context.Background(), first, testAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || len(fake.statements()) != before {
		t.Fatalf("second Provision changed something: %d statements after %d", len(fake.statements()), before)
	}
}

func TestProvisionAgainWhenTheStoredCredentialsAreGone(t *testing.T) {
	fake, p, first := provisionedOnFake(t)
	fake.setTenant(first.Config["dsn"].(string), exception(codeAuthenticationFailed, "rill_x: Authentication failed"))
	// The project was renamed since: the database keeps its name from the state.
	renamed := &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "Acme", "project_name": "Renamed"}}
	second, err := p.Provision(context.Background(), first, renamed)
	if err != nil {
		t.Fatal(err)
	}
	if second.Config["dsn"] == first.Config["dsn"] {
		t.Fatal("re-provisioning kept the old password")
	}
	if second.State["database"] != first.State["database"] {
		t.Fatalf("database moved from %v to %v", first.State["database"], second.State["database"])
	}
}

func TestProvisionDoesNotTakeANetworkErrorForGone(t *testing.T) {
	fake, p, first := provisionedOnFake(t)
	before := len(fake.statements())
	fake.setTenant(first.Config["dsn"].(string), &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	if _, err := p.Provision(context.Background(), first, testAnnotations); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want the network error, got %v", err)
	}
	if len(fake.statements()) != before {
		t.Fatal("a network error made Provision recreate the resource")
	}
}

func TestProvisionRefusesServersThatCannotManageUsersBySQL(t *testing.T) {
	cases := map[string]func(f *fakeServer){
		"too old":               func(f *fakeServer) { f.version = "18.16.1" },
		"access_management off": func(f *fakeServer) { f.accessProbeErr = exception(codeAccessDenied, "default: Not enough privileges") },
		"probe not supported":   func(f *fakeServer) { f.accessProbeErr = exception(codeSyntaxError, "Syntax error") },
		"users.xml only":        func(f *fakeServer) { f.userDirectories = []string{"users_xml"} },
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			fake := newFakeServer()
			setup(fake)
			p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
			// The plan-time check is the same check: the same refusal, marked as one for the plan.
			err := p.CheckCreate(context.Background(), provisioner.ResourceTypeClickHouse)
			if !errors.Is(err, ErrNoSQLAccessManagement) || !errors.Is(err, provisioner.ErrCannotCreate) || !strings.Contains(err.Error(), " at ch.test:9000") ||
				strings.Contains(err.Error(), "adminsecretpw") {
				t.Fatalf("CheckCreate: want ErrNoSQLAccessManagement and ErrCannotCreate naming ch.test:9000 without the password, got %v", err)
			}
			_, err = p.Provision(context.Background(), newResource(testUUID), testAnnotations)
			if !errors.Is(err, ErrNoSQLAccessManagement) {
				t.Fatalf("want ErrNoSQLAccessManagement, got %v", err)
			}
			if len(fake.statements()) != 0 {
				t.Fatalf("statements ran anyway: %q", fake.statements())
			}
			if err := p.Deprovision(context.Background(), newResource(testUUID)); !errors.Is(err, ErrNoSQLAccessManagement) {
				t.Fatalf("Deprovision: want ErrNoSQLAccessManagement, got %v", err)
			}
		})
	}
}

func TestProvisionErrorsAndLogsNeverContainPasswordsOrDSNs(t *testing.T) {
	// A password_wo may hold a quote or a backslash, which the statement carries escaped (quoteString)
	// and ClickHouse quotes back so: the escaped form must not show either. Before, only the raw
	// password was removed, and `it\'s-...` was in the error and the logs.
	for _, password := range []string{"LeakCanaryPassword0123456789abcdefXYZ", `it's-a-Leak-Canary-0123`, `back\slash-Leak-Canary-0123`} {
		core, logs := observer.New(zapcore.DebugLevel)
		fake := newFakeServer()
		// Like ClickHouse's syntax errors, the failure quotes the statement, password included.
		fake.failOn = "CREATE USER"
		fake.failErr = func(sql string) error {
			return exception(codeSyntaxError, "Syntax error: failed at position 8: "+sql[7:]+". Expected one of: VIEW, DATABASE")
		}
		p := newTestProvisionerWithLogger(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`, zap.New(core))
		p.newPassword = func() (string, error) { return password, nil }

		_, err := p.Provision(context.Background(), newResource(testUUID), testAnnotations)
		if err == nil {
			t.Fatal("want an error")
		}
		if !strings.Contains(err.Error(), "creating user `rill_") || !strings.Contains(err.Error(), "Syntax error") {
			t.Fatalf("error does not say what failed: %v", err)
		}
		if logs.Len() == 0 {
			t.Fatal("the failure was not logged")
		}
		var logged strings.Builder
		for _, e := range logs.All() {
			logged.WriteString(e.Message)
			for k, v := range e.ContextMap() {
				logged.WriteString(" " + k + "=")
				logged.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(toString(v), "\n", " "), "\t", " ")))
			}
			logged.WriteString("\n")
		}
		for _, secret := range []string{password, strings.Trim(quoteString(password), "'"), "Leak-Canary", "adminsecretpw", fakeAdminDSN} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error reveals %q: %v", secret, err)
			}
			if strings.Contains(logged.String(), secret) {
				t.Errorf("logs reveal %q:\n%s", secret, logged.String())
			}
		}
	}

	// The admin connection failing is the other error path: its message names the DSN's role, not it.
	fake2 := newFakeServer()
	fake2.dialErr = errors.New("dial failed for clickhouse://admin:adminsecretpw@ch.test:9000: refused")
	p2 := newTestProvisionerWithLogger(t, fake2, `{"dsn":"`+fakeAdminDSN+`"}`, zap.NewNop())
	_, err := p2.Provision(context.Background(), newResource(testUUID), testAnnotations)
	if err == nil || strings.Contains(err.Error(), "adminsecretpw") || !strings.Contains(err.Error(), "admin dsn") {
		t.Fatalf("admin connection error: %v", err)
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := zapcore.NewJSONEncoder(zapcore.EncoderConfig{}).EncodeEntry(zapcore.Entry{}, []zapcore.Field{zap.Any("v", v)})
	if b == nil {
		return ""
	}
	return b.String()
}

func TestDeprovisionDropsUserThenDatabaseFromState(t *testing.T) {
	fake := newFakeServer()
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`","cluster":"new"}`)
	r := newResource(testUUID)
	db := databaseName(testUUID, testAnnotations.Annotations)
	r.State = map[string]any{"database": db, "user": userName(testUUID), "cluster": "old"}
	if err := p.Deprovision(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DROP USER IF EXISTS `" + userName(testUUID) + "` ON CLUSTER `old`",
		"DROP DATABASE IF EXISTS `" + db + "` ON CLUSTER `old`",
	}
	if strings.Join(fake.statements(), "\n") != strings.Join(want, "\n") {
		t.Fatalf("statements:\n%s\nwant:\n%s", strings.Join(fake.statements(), "\n"), strings.Join(want, "\n"))
	}
}

func TestDeprovisionWithoutStateFindsTheDatabaseByID(t *testing.T) {
	fake := newFakeServer()
	db := databaseName(testUUID, testAnnotations.Annotations)
	// The lookup may return more than asked; only names owned by the ID are dropped.
	fake.databases = []string{db, "rill_other_" + idPart("another")}
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	if err := p.Deprovision(context.Background(), newResource(testUUID)); err != nil {
		t.Fatal(err)
	}
	want := []string{"DROP USER IF EXISTS `" + userName(testUUID) + "`", "DROP DATABASE IF EXISTS `" + db + "`"}
	if strings.Join(fake.statements(), "\n") != strings.Join(want, "\n") {
		t.Fatalf("statements: %q", fake.statements())
	}
	// Nothing found: the user is still dropped and that is success.
	fake.databases = nil
	if err := p.Deprovision(context.Background(), newResource(testUUID)); err != nil {
		t.Fatal(err)
	}
}

func TestDeprovisionRefusesStateNamingSomeoneElsesObjects(t *testing.T) {
	fake, p := onFake(t)
	for _, state := range []map[string]any{
		{"database": "default"},
		{"database": "system"},
		{"database": databaseName("another-id", nil)},
		{"user": "default"},
		// Names Rill's admin service gives other resources (one cut to 63 characters before the ID, so
		// its name cannot tell whose it is): a resource of ours was never given one.
		{"database": rillDatabaseName("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", map[string]string{"organization_name": strings.Repeat("o", 28), "project_name": strings.Repeat("p", 28)})},
		{"database": rillDatabaseName(testUUID, nil)},
	} {
		r := newResource(testUUID)
		r.State = state
		if err := p.Deprovision(context.Background(), r); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Fatalf("state %v: want a refusal, got %v", state, err)
		}
	}
	// The same names in the config (the Terraform state's database attribute) are refused alike.
	r := newResource(testUUID)
	r.Config = map[string]any{"database": rillDatabaseName("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", map[string]string{"organization_name": strings.Repeat("o", 28), "project_name": strings.Repeat("p", 28)})}
	if err := p.Deprovision(context.Background(), r); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("config %v: want a refusal, got %v", r.Config, err)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("statements ran: %q", fake.statements())
	}
}

func TestCheckResourceTellsGoneFromUnreachable(t *testing.T) {
	fake, p, r := provisionedOnFake(t)
	dsn := r.Config["dsn"].(string)
	before := len(fake.statements())

	got, err := p.CheckResource(context.Background(), r, testAnnotations)
	if err != nil || got != r {
		t.Fatalf("healthy resource: %v", err)
	}
	for code, name := range map[int32]string{codeUnknownDatabase: "unknown database", codeUnknownUser: "unknown user", codeAuthenticationFailed: "authentication failed", codeWrongPassword: "wrong password"} {
		fake.setTenant(dsn, exception(code, name))
		if _, err := p.CheckResource(context.Background(), r, testAnnotations); !errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Errorf("%s: want ErrResourceNotFound, got %v", name, err)
		}
	}
	for name, cause := range map[string]error{
		"connection refused": &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")},
		"timeout":            context.DeadlineExceeded,
		"too many queries":   exception(202, "Too many simultaneous queries"),
	} {
		fake.setTenant(dsn, cause)
		_, err := p.CheckResource(context.Background(), r, testAnnotations)
		if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Errorf("%s: want an error that is not ErrResourceNotFound, got %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), strings.Split(strings.Split(dsn, ":")[2], "@")[0]) {
			t.Errorf("%s: error reveals the resource password: %v", name, err)
		}
	}
	if _, err := p.CheckResource(context.Background(), newResource(testUUID), nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Errorf("no config: want ErrResourceNotFound, got %v", err)
	}
	if len(fake.statements()) != before {
		t.Fatal("CheckResource changed something")
	}
}

func TestAwaitReadyRetriesUntilLoginWorks(t *testing.T) {
	fake, p, r := provisionedOnFake(t)
	dsn := r.Config["dsn"].(string)
	fake.setTenant(dsn, exception(codeUnknownUser, "not replicated yet"), &net.OpError{Op: "dial", Err: errors.New("refused")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.AwaitReady(ctx, r); err != nil {
		t.Fatal(err)
	}

	// Never ready: AwaitReady gives up when its context ends and says why.
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = exception(codeUnknownDatabase, "Database rill_x doesn't exist")
	}
	fake.setTenant(dsn, errs...)
	ctx, cancel = context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	err := p.AwaitReady(ctx, r)
	if err == nil || !strings.Contains(err.Error(), "not ready") || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("want a not-ready error with the cause, got %v", err)
	}
}

// A login attempt that the wait's end cuts short (the server had not answered it yet) is not what
// the error reports: the answer before it is. Before, an attempt begun shortly before the deadline
// (the backoff doubles up to 5 s) gave "context deadline exceeded" as the cause, losing the server's
// refusal.
func TestAwaitReadyCutShortByTheDeadlineSaysTheLastAnswer(t *testing.T) {
	fake, p, r := provisionedOnFake(t)
	fake.setTenant(r.Config["dsn"].(string), exception(codeUnknownDatabase, "Database rill_x doesn't exist"))
	var dials atomic.Int32
	p.dial = func(ctx context.Context, dsn string) (session, error) {
		if dials.Add(1) == 1 {
			return fake.dial(ctx, dsn) // its SELECT 1 is refused
		}
		<-ctx.Done() // no answer before the wait ends, as a server slow to accept
		return nil, fmt.Errorf("dial tcp 127.0.0.1:9000: %w", ctx.Err())
	}
	// The second attempt begins after the first refusal and a backoff of 200 ms, and hangs until this
	// deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := p.AwaitReady(ctx, r)
	if dials.Load() < 2 {
		t.Fatalf("%d logins, want the wait to end during the second: %v", dials.Load(), err)
	}
	if err == nil || !strings.Contains(err.Error(), "doesn't exist") || strings.Contains(err.Error(), "dial tcp") {
		t.Fatalf("got %v, want the last answer (the database does not exist), not the attempt that the deadline cut short", err)
	}
	t.Log(err)
}

// A context without a deadline gets AwaitReady's own (defaultAwaitTimeout); its error names that
// limit, not "the operation's deadline", which would send users to a timeout the caller never set.
func TestAwaitReadyWithoutADeadlineNamesItsOwnLimit(t *testing.T) {
	fake, p, r := provisionedOnFake(t)
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = exception(codeUnknownDatabase, "Database rill_x doesn't exist")
	}
	fake.setTenant(r.Config["dsn"].(string), errs...)
	defer func(was time.Duration) { defaultAwaitTimeout = was }(defaultAwaitTimeout)
	defaultAwaitTimeout = 500 * time.Millisecond
	err := p.AwaitReady(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "until the 500ms it waits when the operation sets no deadline") || strings.Contains(err.Error(), "operation's deadline") {
		t.Fatalf("want the wait's own limit named, got %v", err)
	}
}

func TestProvisionRejectsOtherResourceTypes(t *testing.T) {
	p := newTestProvisioner(t, newFakeServer(), `{"dsn":"`+fakeAdminDSN+`"}`)
	r := newResource(testUUID)
	r.Type = provisioner.ResourceTypeRuntime
	if _, err := p.Provision(context.Background(), r, nil); err == nil {
		t.Fatal("provisioned a runtime")
	}
	if _, err := p.Provision(context.Background(), &provisioner.Resource{}, nil); err == nil {
		t.Fatal("provisioned a resource without ID")
	}
}

// An imported resource has no DSN: CheckResource finds its user and database by name through the
// admin connection, writes nothing, and returns a config without a dsn; Provision then keeps both
// and sets a new password (ClickHouse keeps only its hash, so the old one cannot be recovered).
func TestCheckResourceWithoutCredentialsFindsTheObjectsAndProvisionSetsANewPassword_fake(t *testing.T) {
	fake := newFakeServer()
	db := databaseName(testUUID, testAnnotations.Annotations)
	user := userName(testUUID)
	fake.users = []string{"default", user}
	fake.databases = []string{db, "rill_other_" + idPart("another")}
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	p.newPassword = func() (string, error) { return "RotatedPassword0123456789abcdefGHIJK", nil }

	got, err := p.CheckResource(context.Background(), newResource(testUUID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.State[stateDatabase] != db || got.State[stateUser] != user || got.Config["dsn"] != "" || got.Config["database"] != db || got.Config["user"] != user {
		t.Fatalf("resource %+v", got)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("CheckResource wrote: %q", fake.statements())
	}

	// Renamed since: the database keeps the name it has.
	renamed := &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "Other", "project_name": "Name"}}
	out, err := p.Provision(context.Background(), got, renamed)
	if err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	if !strings.Contains(stmts, "CREATE DATABASE IF NOT EXISTS `"+db+"`") ||
		!strings.Contains(stmts, "ALTER USER `"+user+"` IDENTIFIED WITH sha256_password BY 'RotatedPassword0123456789abcdefGHIJK' DEFAULT DATABASE `"+db+"`") {
		t.Fatalf("statements:\n%s", stmts)
	}
	dsn, _ := out.Config["dsn"].(string)
	if !strings.Contains(dsn, user+":RotatedPassword0123456789abcdefGHIJK@") || !strings.Contains(dsn, "/"+db) {
		t.Fatalf("dsn %q", dsn)
	}

	// The database from the state is looked up by its exact name.
	fake.databases = []string{db}
	fake.users = nil
	got, err = p.CheckResource(context.Background(), &provisioner.Resource{ID: testUUID, Type: provisioner.ResourceTypeClickHouse, State: map[string]any{stateDatabase: db}}, nil)
	if err != nil || got.State[stateDatabase] != db {
		t.Fatalf("with the state's database: %v, %+v", err, got)
	}

	// Neither exists: gone.
	fake.databases = nil
	if _, err := p.CheckResource(context.Background(), newResource(testUUID), nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("want ErrResourceNotFound, got %v", err)
	}
	// The admin connection failing is not gone.
	fake.setDialErr(errors.New("dial tcp 10.0.0.1:9000: connect: connection refused"))
	p2 := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	if _, err := p2.CheckResource(context.Background(), newResource(testUUID), nil); err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("want an error that is not ErrResourceNotFound, got %v", err)
	}
}

// Rotation keeps the old password working until the new one logs in: a failure after the new
// password was added, or a new password that does not log in before the deadline, leaves the
// statement that removes the other passwords unrun.
func TestProvisionRemovesTheOldPasswordOnlyOnceTheNewOneLogsIn_fake(t *testing.T) {
	const newPW = "NewPassword0123456789abcdefGHIJKLMN"
	removesOthers := func(stmts []string) bool {
		for _, st := range stmts {
			if strings.HasPrefix(st, "ALTER USER") && !strings.Contains(st, " ADD ") {
				return true
			}
		}
		return false
	}

	fake := newFakeServer()
	fake.failOn = "ON system.parts"
	fake.failErr = func(string) error { return exception(codeAccessDenied, "Not enough privileges") }
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	p.newPassword = func() (string, error) { return newPW, nil }
	if _, err := p.Provision(context.Background(), newResource(testUUID), testAnnotations); err == nil || !strings.Contains(err.Error(), "SELECT on system.parts") {
		t.Fatalf("want the grant's failure, got %v", err)
	}
	if stmts := fake.statements(); !strings.Contains(strings.Join(stmts, "\n"), "ADD IDENTIFIED") || removesOthers(stmts) {
		t.Fatalf("after a failed grant: %q", stmts)
	}

	fake = newFakeServer()
	p = newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	p.newPassword = func() (string, error) { return newPW, nil }
	dsn, err := withCredentials(fakeAdminDSN, userName(testUUID), newPW, databaseName(testUUID, testAnnotations.Annotations))
	if err != nil {
		t.Fatal(err)
	}
	refused := exception(codeAuthenticationFailed, "Authentication failed")
	fake.setTenant(dsn, refused, refused, refused, refused, refused, refused, refused, refused)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = p.Provision(ctx, newResource(testUUID), testAnnotations)
	if err == nil || !strings.Contains(err.Error(), "any password the user had before still works") || strings.Contains(err.Error(), newPW) {
		t.Fatalf("want the login failure, without the password, got %v", err)
	}
	if removesOthers(fake.statements()) {
		t.Fatalf("the old passwords were removed although the new one did not log in: %q", fake.statements())
	}
}

// A password in the args (a Terraform write-only attribute) is the one set, also when the resource's
// DSN still works; args Provision does not know are refused, naming the field.
func TestProvisionSetsThePasswordFromTheArgs_fake(t *testing.T) {
	fake, p, first := provisionedOnFake(t)
	const chosen = "Chosen-By-The-User-0123456789"
	opts := &provisioner.ResourceOptions{Annotations: testAnnotations.Annotations, Args: (&provisioner.ClickhouseArgs{Password: chosen}).AsMap()}
	got, err := p.Provision(context.Background(), first, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Config["dsn"].(string), ":"+chosen+"@") {
		t.Fatalf("dsn %q does not carry the chosen password", got.Config["dsn"])
	}
	if stmts := strings.Join(fake.statements(), "\n"); !strings.Contains(stmts, "ADD IDENTIFIED WITH sha256_password BY '"+chosen+"'") {
		t.Fatalf("the chosen password was not set:\n%s", stmts)
	}
	if _, err := p.Provision(context.Background(), first, &provisioner.ResourceOptions{Args: map[string]any{"pasword": "x"}}); err == nil || !strings.Contains(err.Error(), "pasword") {
		t.Fatalf("want an error naming the unknown arg, got %v", err)
	}
}

// What the server supports decides the statements: source grants only for privileges the server lists,
// one password at a time before ClickHouse 24.9; and the admin connection goes to the write_dsn when
// the spec has one (as in Rill: read replicas may refuse DDL).
func TestProvisionAdaptsToTheServer_fake(t *testing.T) {
	fake := newFakeServer()
	fake.version = "23.8.16.40"
	fake.privileges = []string{"S3", "URL", "REMOTE"}
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`","write_dsn":"http://admin:adminsecretpw@writer.test:8123"}`)
	if _, err := p.Provision(context.Background(), newResource(testUUID), testAnnotations); err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	if !strings.Contains(stmts, "GRANT URL, REMOTE, S3 ON *.* TO") || strings.Contains(stmts, "AZURE") || strings.Contains(stmts, "ADD IDENTIFIED") {
		t.Fatalf("statements for ClickHouse 23.8 with S3, URL and REMOTE:\n%s", stmts)
	}
	if len(fake.adminDSNs) != 1 || !strings.Contains(fake.adminDSNs[0], "writer.test:8123") {
		t.Fatalf("admin connections: %q", fake.adminDSNs)
	}
}

// A resource provisioned with a write-only password has no DSN in its config but names its user and
// database: it is found when both exist, gone when neither does (one alone: see
// TestCheckResourceOfAHalfPresentResourceKeepsItAndTheUpdateRecreatesTheMissingHalf_fake); an import,
// naming neither, is found with the one that exists.
func TestCheckResourceOfAProvisionedResourceWithoutDSNNeedsOneObject_fake(t *testing.T) {
	fake := newFakeServer()
	db, user := databaseName(testUUID, testAnnotations.Annotations), userName(testUUID)
	fake.users, fake.databases = []string{user}, []string{db}
	p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
	r := &provisioner.Resource{ID: testUUID, Type: provisioner.ResourceTypeClickHouse, Config: (&provisioner.ClickhouseConfig{Database: db, User: user}).AsMap()}
	got, err := p.CheckResource(context.Background(), r, nil)
	if err != nil || got.Config["database"] != db || got.Config["user"] != user {
		t.Fatalf("both exist: %v, %+v", err, got)
	}
	fake.users, fake.databases = nil, nil
	if _, err := p.CheckResource(context.Background(), r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("both dropped: want ErrResourceNotFound, got %v", err)
	}
	fake.databases = []string{db}
	if got, err := p.CheckResource(context.Background(), newResource(testUUID), nil); err != nil || got.Config["database"] != db || got.Config["user"] != nil {
		t.Fatalf("an import with the database only: %v, %+v", err, got)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("CheckResource wrote: %q", fake.statements())
	}
}

// A create reports that it created the database and user once it sent a statement, and that it
// created nothing when it failed before (an unreachable server, a server that cannot manage users
// by SQL), so that a failed create then has nothing to undo. A call on a resource with state (an
// update) never reports a creation.
func TestProvisionReportsACreationOnceItSentAStatement_fake(t *testing.T) {
	cases := map[string]struct {
		setup   func(f *fakeServer)
		created bool
		fails   bool
	}{
		"unreachable": {func(f *fakeServer) {
			f.dialErr = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}, false, true},
		"cannot manage users": {func(f *fakeServer) { f.version = "18.16.1" }, false, true},
		"a statement refused": {func(f *fakeServer) {
			f.failOn, f.failErr = "GRANT", func(string) error { return exception(codeAccessDenied, "Not enough privileges") }
		}, true, true},
		"provisioned": {func(*fakeServer) {}, true, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			fake := newFakeServer()
			c.setup(fake)
			p := newTestProvisioner(t, fake, `{"dsn":"`+fakeAdminDSN+`"}`)
			res, created, err := p.ProvisionReportingCreation(context.Background(), newResource(testUUID), testAnnotations)
			if (err != nil) != c.fails || created != c.created {
				t.Fatalf("created %v, err %v; want created %v, failing %v", created, err, c.created, c.fails)
			}
			if err != nil {
				return
			}
			if _, created, err := p.ProvisionReportingCreation(context.Background(), res, &provisioner.ResourceOptions{
				Annotations: testAnnotations.Annotations, Args: (&provisioner.ClickhouseArgs{Password: "AnotherPassword0123456789abcdefGHIJ"}).AsMap(),
			}); err != nil || created {
				t.Fatalf("an update: created %v, err %v; want no creation", created, err)
			}
		})
	}
}

// A resource whose own login is refused while its user and database are both still on the server had
// its password changed outside Terraform (or its user dropped and created again by hand): that is
// drift of the password, not a deletion. CheckResource finds it, without a dsn (the one held no longer
// logs in) and with the drift in its state, writing nothing; the Update's Provision then sets a new
// password on the same user and keeps the database (no DROP, the same name). A lookup that fails is
// an error, never gone: gone would re-create it under a new ID and leave the database behind.
func TestCheckResourceOfAChangedPasswordIsDriftNotGone_fake(t *testing.T) {
	db, user := databaseName(testUUID, testAnnotations.Annotations), userName(testUUID)
	fake, p, r := provisionedOnFake(t)
	dsn := r.Config["dsn"].(string)
	fake.mu.Lock()
	fake.users, fake.databases = []string{user}, []string{db}
	fake.mu.Unlock()
	written := len(fake.statements())
	for code, name := range map[int32]string{codeAuthenticationFailed: "authentication failed", codeWrongPassword: "wrong password", codeRequiredPassword: "password required"} {
		fake.setTenant(dsn, exception(code, name))
		got, err := p.CheckResource(context.Background(), r, nil)
		if err != nil {
			t.Fatalf("%s: want the resource found with drift, got %v", name, err)
		}
		cfg, err := provisioner.NewClickhouseConfig(got.Config)
		if err != nil || cfg.DSN != "" || cfg.WriteDSN != "" || cfg.Database != db || cfg.User != user || got.ID != testUUID {
			t.Fatalf("%s: config %+v (%v); want user %s and database %s without a dsn", name, got.Config, err, user, db)
		}
		drift := provisioner.NewRuntimeObservation(got.State).Drift
		if len(drift) != 1 || !strings.Contains(drift[0], "no longer logs in (changed outside Terraform)") || got.State[stateDatabase] != db {
			t.Fatalf("%s: state %v; want the password's drift and the database", name, got.State)
		}
	}
	if len(fake.statements()) != written {
		t.Fatalf("CheckResource wrote: %q", fake.statements()[written:])
	}

	// The lookup fails: not gone.
	fake.mu.Lock()
	fake.usersErr = exception(202, "Too many simultaneous queries")
	fake.mu.Unlock()
	fake.setTenant(dsn, exception(codeAuthenticationFailed, "authentication failed"))
	if _, err := p.CheckResource(context.Background(), r, nil); err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "could not be read") {
		t.Fatalf("a failed lookup: want an error that is not ErrResourceNotFound, got %v", err)
	}
	fake.mu.Lock()
	fake.usersErr = nil
	fake.mu.Unlock()

	// The Update: Provision of what the refresh found (the Terraform layer keeps the state without
	// the observations) sets a new password on the same user and keeps the database.
	fake.setTenant(dsn, exception(codeAuthenticationFailed, "authentication failed"))
	found, err := p.CheckResource(context.Background(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	found.State = provisioner.WithoutObservations(found.State)
	updated, err := p.Provision(context.Background(), found, testAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Config["dsn"] == dsn || updated.State[stateDatabase] != db || updated.Config["user"] != user {
		t.Fatalf("updated %+v; want a new dsn for user %s on database %s", updated, user, db)
	}
	stmts := strings.Join(fake.statements()[written:], "\n")
	if !strings.Contains(stmts, "ALTER USER `"+user+"` IDENTIFIED") || strings.Contains(stmts, "DROP USER") || strings.Contains(stmts, "DROP DATABASE") {
		t.Fatalf("the update ran %d statements; want a new password for %s (ALTER USER ... IDENTIFIED) and no DROP USER or DATABASE", len(fake.statements())-written, user)
	}
}

// A provisioned resource of which one half is still on the server (the user alone, or the database
// alone: a destroy killed between its DROP USER and DROP DATABASE, a user dropped by hand) is not
// gone: gone would have Terraform re-create it under a new ID and leave that half, often the
// database with the user's data, on the server. CheckResource finds it, through its DSN (a generated
// password) and without one (a write-only password), writing nothing: the same ID, a config without
// a dsn whose missing name is empty, a state that keeps both names, and the drift naming what is
// missing. The update's Provision then re-creates the missing half under the same names (a missing
// user with the password of the args, when there is one) and drops nothing; a destroy's Deprovision
// drops what is left. Only both missing is gone.
func TestCheckResourceOfAHalfPresentResourceKeepsItAndTheUpdateRecreatesTheMissingHalf_fake(t *testing.T) {
	db, user := databaseName(testUUID, testAnnotations.Annotations), userName(testUUID)
	fake, p, r := provisionedOnFake(t)
	dsn := r.Config["dsn"].(string)
	withoutDSN := &provisioner.Resource{ID: testUUID, Type: provisioner.ResourceTypeClickHouse,
		State:  map[string]any{stateDatabase: db, stateUser: user, stateCluster: ""},
		Config: (&provisioner.ClickhouseConfig{Database: db, User: user}).AsMap()}
	const configured = "Configured-Pa55w0rd-0123456789abcdef"
	for _, c := range []struct {
		name       string
		r          *provisioner.Resource
		login      error
		users, dbs []string
		password   string // in the update's args
		drift      string
		recreate   string // the statement that re-creates the missing half
	}{
		{"user dropped, by login", r, exception(codeUnknownUser, "unknown user"), nil, []string{db}, "",
			"user `" + user + "` of database `" + db + "` is missing", "CREATE USER IF NOT EXISTS `" + user + "` IDENTIFIED WITH sha256_password BY '"},
		{"database dropped, by login", r, exception(codeUnknownDatabase, "unknown database"), []string{user}, nil, "",
			"database `" + db + "` of user `" + user + "` is missing", "CREATE DATABASE IF NOT EXISTS `" + db + "` COMMENT '{\"organization_name\":\"Acme\",\"project_name\":\"Web\"}'"},
		{"user dropped, by name", withoutDSN, nil, nil, []string{db}, configured,
			"user `" + user + "` of database `" + db + "` is missing", "CREATE USER IF NOT EXISTS `" + user + "` IDENTIFIED WITH sha256_password BY '" + configured + "'"},
		{"database dropped, by name", withoutDSN, nil, []string{user}, nil, configured,
			"database `" + db + "` of user `" + user + "` is missing", "CREATE DATABASE IF NOT EXISTS `" + db + "` COMMENT"},
	} {
		fake.mu.Lock()
		fake.users, fake.databases = c.users, c.dbs
		fake.mu.Unlock()
		if c.login != nil {
			fake.setTenant(dsn, c.login)
		}
		written := len(fake.statements())
		got, err := p.CheckResource(context.Background(), c.r, nil)
		if err != nil {
			t.Fatalf("%s: want the resource found, half present, got %v", c.name, err)
		}
		if len(fake.statements()) != written {
			t.Fatalf("%s: CheckResource wrote: %q", c.name, fake.statements()[written:])
		}
		cfg, err := provisioner.NewClickhouseConfig(got.Config)
		wantUser, wantDB := user, db
		if c.users == nil {
			wantUser = ""
		} else {
			wantDB = ""
		}
		if err != nil || got.ID != testUUID || cfg.DSN != "" || cfg.WriteDSN != "" || cfg.User != wantUser || cfg.Database != wantDB {
			t.Fatalf("%s: config %+v (%v); want ID %s without a dsn, user %q, database %q", c.name, got.Config, err, testUUID, wantUser, wantDB)
		}
		drift := provisioner.NewRuntimeObservation(got.State).Drift
		if len(drift) != 1 || !strings.Contains(drift[0], c.drift) || got.State[stateDatabase] != db || got.State[stateUser] != user {
			t.Fatalf("%s: state %v; want both names and the drift %q", c.name, got.State, c.drift)
		}

		// The update, given what the refresh found (the Terraform layer keeps the state without the
		// observations).
		found := &provisioner.Resource{ID: got.ID, Type: got.Type, State: provisioner.WithoutObservations(got.State), Config: got.Config}
		opts := &provisioner.ResourceOptions{Annotations: testAnnotations.Annotations, Args: (&provisioner.ClickhouseArgs{Password: c.password}).AsMap()}
		written = len(fake.statements())
		updated, err := p.Provision(context.Background(), found, opts)
		if err != nil {
			t.Fatalf("%s: the update: %v", c.name, err)
		}
		stmts := strings.Join(fake.statements()[written:], "\n")
		if !strings.Contains(stmts, c.recreate) || strings.Contains(stmts, "DROP USER") || strings.Contains(stmts, "DROP DATABASE") || updated.ID != testUUID ||
			updated.Config["user"] != user || updated.Config["database"] != db || updated.State[stateDatabase] != db {
			t.Fatalf("%s: the update returned %v %v after %d statements; want %q under the same ID and names, and no DROP",
				c.name, updated.Config["user"], updated.State, len(fake.statements())-written, c.recreate)
		}

		// A destroy instead drops what is left, under the names the state keeps.
		written = len(fake.statements())
		if err := p.Deprovision(context.Background(), found); err != nil {
			t.Fatalf("%s: Deprovision: %v", c.name, err)
		}
		want := "DROP USER IF EXISTS `" + user + "`\nDROP DATABASE IF EXISTS `" + db + "`"
		if got := strings.Join(fake.statements()[written:], "\n"); got != want {
			t.Fatalf("%s: Deprovision ran:\n%s\nwant:\n%s", c.name, got, want)
		}
	}

	// Both gone, or a lookup that fails: as before.
	fake.mu.Lock()
	fake.users, fake.databases = nil, nil
	fake.mu.Unlock()
	fake.setTenant(dsn, exception(codeUnknownUser, "unknown user"))
	if _, err := p.CheckResource(context.Background(), r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "no longer exist") {
		t.Fatalf("both dropped, by login: want ErrResourceNotFound, got %v", err)
	}
	if _, err := p.CheckResource(context.Background(), withoutDSN, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("both dropped, by name: want ErrResourceNotFound, got %v", err)
	}
	fake.mu.Lock()
	fake.databases, fake.usersErr = []string{db}, exception(202, "Too many simultaneous queries")
	fake.mu.Unlock()
	fake.setTenant(dsn, exception(codeUnknownUser, "unknown user"))
	if _, err := p.CheckResource(context.Background(), r, nil); err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("a failed lookup: want an error that is not ErrResourceNotFound, got %v", err)
	}
}

// The server moved: the spec's dsn and write_dsn now name another address, and the old one no longer
// answers. A resource's DSNs are the spec's with its own user, password and database, so the refresh
// logs in at the new address with the same credentials and reports the DSNs rebuilt on it (a
// generated password cannot be set again by bumping a version: with the old address in the state,
// every refresh failed, for ever). An update whose password still logs in hands them out too. While
// the old address answers, the spec may name another server (a new one for new resources): the DSNs
// stay. And where the old address does not answer and the new one refuses the login, that server never
// had the resource, or has lost it: an error, never gone (which would re-create it there).
func TestCheckResourceFollowsTheSpecsNewAddressWithTheSameCredentials_fake(t *testing.T) {
	fake, _, r := provisionedOnFake(t)
	oldDSN := r.Config["dsn"].(string)
	p := newTestProvisioner(t, fake, `{"dsn":"clickhouse://admin:adminsecretpw@ch-new.test:9440/default?secure=true","write_dsn":"http://admin:adminsecretpw@writer-new.test:8123"}`)
	before := len(fake.statements())

	// The old address answers: the resource is where it was made.
	got, err := p.CheckResource(context.Background(), r, testAnnotations)
	if err != nil || got.Config["dsn"] != oldDSN {
		t.Fatalf("refresh while the old address answers: %v, dsn %v, want %s", err, got, oldDSN)
	}

	down := make([]error, 50)
	for i := range down {
		down[i] = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	}
	fake.setTenant(oldDSN, down...)
	got, err = p.CheckResource(context.Background(), r, testAnnotations)
	if err != nil {
		t.Fatalf("refresh after the move: %v", err)
	}
	cfg, err := provisioner.NewClickhouseConfig(got.Config)
	if err != nil {
		t.Fatal(err)
	}
	password := strings.Split(strings.Split(oldDSN, ":")[2], "@")[0]
	user, db := "rill_"+idPart(testUUID), "rill_acme_web_"+idPart(testUUID)
	if want := "clickhouse://" + user + ":" + password + "@ch-new.test:9440/" + db + "?secure=true"; cfg.DSN != want {
		t.Errorf("dsn after the move:\n got %s\nwant %s", cfg.DSN, want)
	}
	if want := "http://" + user + ":" + password + "@writer-new.test:8123/" + db; cfg.WriteDSN != want {
		t.Errorf("write_dsn after the move:\n got %s\nwant %s", cfg.WriteDSN, want)
	}
	if cfg.User != user || cfg.Database != db || !reflect.DeepEqual(got.State, r.State) {
		t.Errorf("the move changed the names or the state: %+v %v", cfg, got.State)
	}
	if len(fake.statements()) != before {
		t.Fatal("CheckResource changed something")
	}

	// An update (an annotation changed) whose password logs in at the new address: no statement, the
	// DSNs on the new address.
	up, err := p.Provision(context.Background(), r, testAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	if up.Config["dsn"] != cfg.DSN || len(fake.statements()) != before {
		t.Errorf("update after the move: dsn %v, %d statements", up.Config["dsn"], len(fake.statements())-before)
	}

	// The new address refuses the resource's login (another server): an error naming both failures.
	fake.setTenant(cfg.DSN, exception(codeAuthenticationFailed, user+": Authentication failed"))
	_, err = p.CheckResource(context.Background(), r, testAnnotations)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), "ClickHouse refuses it (error code 516)") || strings.Contains(err.Error(), password) {
		t.Errorf("refresh when neither address logs it in: want an error with both failures, not gone, without the password; got %v", err)
	}
	if len(fake.statements()) != before {
		t.Fatal("CheckResource changed something")
	}
}

// An import restores the annotations the database was created with, from its COMMENT (the
// annotations as JSON, as Provision writes it), so that a configuration generated from the import,
// or the one it came from, plans no change of them. A database without such a comment (a server
// older than 21.11, one made by hand), or a comment that cannot be read, restores none and does not
// fail the import; a refresh of a resource that is not being imported does not ask.
func TestImportRestoresTheAnnotationsFromTheDatabasesComment_fake(t *testing.T) {
	fake, p := onFake(t)
	user, db := userName(testUUID), databaseName(testUUID, testAnnotations.Annotations)
	fake.users, fake.databases = []string{user}, []string{db}
	fake.comments = map[string]string{db: `{"organization_name":"Acme","project_name":"Web"}`}

	got, err := p.CheckResource(context.Background(), newResource(testUUID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := provisioner.NewRuntimeObservation(got.State); !reflect.DeepEqual(o.Annotations, testAnnotations.Annotations) {
		t.Errorf("annotations restored by the import: %v, want %v", o.Annotations, testAnnotations.Annotations)
	}

	for name, set := range map[string]func(){
		"no comment":        func() { fake.comments = map[string]string{db: ""} },
		"not JSON":          func() { fake.comments = map[string]string{db: "made by hand"} },
		"no comment column": func() { fake.commentErr = exception(47, "Missing columns: 'comment'") },
		"not string values": func() { fake.comments, fake.commentErr = map[string]string{db: `{"a":1}`}, nil },
	} {
		set()
		got, err := p.CheckResource(context.Background(), newResource(testUUID), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o := provisioner.NewRuntimeObservation(got.State); o.Annotations != nil || got.Config["database"] != db {
			t.Errorf("%s: annotations %v, config %v", name, o.Annotations, got.Config)
		}
	}

	// Not an import (the names are recorded): no comment is read.
	before := len(fake.queries)
	if _, err := p.CheckResource(context.Background(), got, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range fake.queries[before:] {
		if strings.Contains(q, "comment") {
			t.Errorf("a refresh that is no import read the comment: %s", q)
		}
	}
}

// The resource's own address answers and refuses its login (its password changed outside Terraform,
// say), while the spec's dsn names another address (a new server for new resources): what the admin
// connection finds there says nothing of the resource's server, so finding neither its user nor its
// database there is an error that names both addresses, never gone (which would re-create the
// resource on the new server and leave its database behind on its own).
func TestALoginRefusedAtItsOwnAddressIsNotJudgedAtTheSpecsOther_fake(t *testing.T) {
	fake, _, r := provisionedOnFake(t)
	oldDSN := r.Config["dsn"].(string)
	p := newTestProvisioner(t, fake, `{"dsn":"clickhouse://admin:adminsecretpw@ch-new.test:9440/default?secure=true"}`)
	user := "rill_" + idPart(testUUID)
	fake.setTenant(oldDSN, exception(codeAuthenticationFailed, user+": Authentication failed"))
	_, err := p.CheckResource(context.Background(), r, testAnnotations)
	password := strings.Split(strings.Split(oldDSN, ":")[2], "@")[0]
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || strings.Contains(err.Error(), password) ||
		!strings.Contains(err.Error(), "its own login at ch.test was refused") || !strings.Contains(err.Error(), "is at ch-new.test, which the provisioner's dsn names now") {
		t.Fatalf("refresh: want an error naming both addresses, not gone, without the password; got %v", err)
	}
}

// The update's side of TestALoginRefusedAtItsOwnAddressIsNotJudgedAtTheSpecsOther_fake: with no refresh
// before it (`terraform apply -refresh=false`, a saved plan), an update whose login is refused at the
// resource's own address, the spec's dsn naming another server without its user or database, fails
// and sends nothing. Before, it provisioned the resource again there: a new, empty database in the
// state, its own left behind.
func TestAnUpdateRefusedAtItsOwnAddressDoesNotProvisionAtTheSpecsOther_fake(t *testing.T) {
	fake, _, r := provisionedOnFake(t)
	oldDSN := r.Config["dsn"].(string)
	p := newTestProvisioner(t, fake, `{"dsn":"clickhouse://admin:adminsecretpw@ch-new.test:9440/default?secure=true"}`)
	fake.setTenant(oldDSN, exception(codeAuthenticationFailed, "Authentication failed"))
	before := len(fake.statements())
	_, err := p.Provision(context.Background(), r, testAnnotations)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "its own login at ch.test was refused") {
		t.Errorf("update: want an error naming the resource's address; got %v", err)
	}
	if sent := fake.statements()[before:]; len(sent) != 0 {
		t.Errorf("update sent %d statements to the spec's server, the first %.60q", len(sent), sent[0])
	}
}
