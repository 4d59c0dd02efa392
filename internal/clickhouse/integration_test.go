package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap/zaptest"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chservertest"
)

// The integration tests run against a real ClickHouse server, the first of:
//   - RILL_TEST_CLICKHOUSE_DSN, an admin DSN of a server you have (a user with access_management=1 on
//     ClickHouse 20.4 or newer); RILL_TEST_CLICKHOUSE_CLUSTER, if set, names a cluster for ON CLUSTER;
//   - RILL_TEST_CLICKHOUSE_SERVER, a clickhouse-server (or clickhouse) binary: a throwaway server
//     started from it (internal/testutil/chservertest);
//   - chDB's ClickHouse (internal/testutil/chdbtest), which cannot create users by SQL.
//
// The lifecycle tests skip on a server that cannot create users by SQL, and say why.
const integrationHelp = "to run the lifecycle, point RILL_TEST_CLICKHOUSE_DSN at an admin DSN " +
	"(e.g. RILL_TEST_CLICKHOUSE_DSN=clickhouse://default:@127.0.0.1:9000 with access_management=1, ClickHouse >= 20.4), " +
	"or RILL_TEST_CLICKHOUSE_SERVER at a clickhouse-server binary of ClickHouse >= 20.4 to start a throwaway one"

// chdbProvisioner is a provisioner whose admin DSN is srv's, for the tests that run on chDB whatever
// the others use (they declare users in its users.xml).
func chdbProvisioner(t *testing.T, srv *chdbtest.Server) *Provisioner {
	t.Helper()
	pp, err := New([]byte(fmt.Sprintf(`{"dsn":%q}`, srv.AdminDSN)), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func integrationProvisioner(t *testing.T) *Provisioner {
	t.Helper()
	dsn := os.Getenv("RILL_TEST_CLICKHOUSE_DSN")
	if dsn == "" {
		cmd, err := chservertest.Command()
		if err != nil {
			t.Fatal(err)
		}
		if cmd != nil {
			dsn = chservertest.Start(t, cmd).AdminDSN
		} else {
			dsn = chdbtest.Start(t).AdminDSN
			t.Logf("neither RILL_TEST_CLICKHOUSE_DSN nor %s is set: testing against chDB's ClickHouse", chservertest.EnvServer)
		}
	}
	t.Setenv("RILL_TEST_CLICKHOUSE_DSN_FOR_SPEC", dsn)
	spec := `{"dsn_env":"RILL_TEST_CLICKHOUSE_DSN_FOR_SPEC"`
	if c := os.Getenv("RILL_TEST_CLICKHOUSE_CLUSTER"); c != "" {
		spec += fmt.Sprintf(`,"cluster":%q`, c)
	}
	pp, err := New([]byte(spec+"}"), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func integrationContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// requireSQLAccessManagement skips on servers that cannot create users by SQL; the test below covers
// those servers.
func requireSQLAccessManagement(t *testing.T, ctx context.Context, p *Provisioner) {
	t.Helper()
	if _, _, err := p.managerSession(ctx); err != nil {
		if errors.Is(err, ErrNoSQLAccessManagement) {
			t.Skipf("the server cannot manage users by SQL, so the lifecycle cannot run there: %v; %s", err, integrationHelp)
		}
		t.Fatal(err)
	}
}

// tenantExec runs a statement with a resource's own credentials.
func tenantExec(ctx context.Context, p *Provisioner, r *provisioner.Resource, sql string) error {
	s, err := p.dial(ctx, r.Config["dsn"].(string))
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	return s.Exec(ctx, sql)
}

func tenantQuery(ctx context.Context, p *Provisioner, r *provisioner.Resource, sql string) ([]string, error) {
	s, err := p.dial(ctx, r.Config["dsn"].(string))
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	return s.QueryStrings(ctx, sql)
}

func TestIntegrationLifecycleOfTwoIsolatedTenants(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	if err := p.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	requireSQLAccessManagement(t, ctx, p)

	opts := func(project string) *provisioner.ResourceOptions {
		return &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "it's `test`; org", "project_name": project}}
	}
	a0 := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse}
	b0 := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse}
	t.Cleanup(func() {
		// Best effort, should an assertion stop the test half-way.
		_ = p.Deprovision(context.Background(), a0)
		_ = p.Deprovision(context.Background(), b0)
	})

	a, err := p.Provision(ctx, a0, opts("Project A"))
	if err != nil {
		t.Fatalf("Provision A: %v", err)
	}
	b, err := p.Provision(ctx, b0, opts("Project B; DROP DATABASE system"))
	if err != nil {
		t.Fatalf("Provision B: %v", err)
	}
	for _, r := range []*provisioner.Resource{a, b} {
		if err := p.AwaitReady(ctx, r); err != nil {
			t.Fatalf("AwaitReady %s: %v", r.ID, err)
		}
	}
	dbA, dbB := a.State["database"].(string), b.State["database"].(string)

	// Provision again is a no-op returning the same resource.
	again, err := p.Provision(ctx, a, opts("Project A"))
	if err != nil || again.Config["dsn"] != a.Config["dsn"] {
		t.Fatalf("second Provision of A: %v (config changed: %v)", err, again != nil && again.Config["dsn"] != a.Config["dsn"])
	}

	// Each tenant works in its own database.
	for _, r := range []*provisioner.Resource{a, b} {
		db := quoteIdent(r.State["database"].(string))
		if err := tenantExec(ctx, p, r, "CREATE TABLE "+db+".t (x UInt32) ENGINE = MergeTree ORDER BY x"); err != nil {
			t.Fatalf("tenant %s creating a table: %v", r.ID, err)
		}
		if err := tenantExec(ctx, p, r, "INSERT INTO "+db+".t VALUES (1), (2)"); err != nil {
			t.Fatalf("tenant %s inserting: %v", r.ID, err)
		}
		if rows, err := tenantQuery(ctx, p, r, "SELECT toString(count()) FROM t"); err != nil || len(rows) != 1 || rows[0] != "2" {
			t.Fatalf("tenant %s reading its own table (default database): %v %v", r.ID, rows, err)
		}
		if _, err := tenantQuery(ctx, p, r, "SELECT toString(count()) FROM system.parts"); err != nil {
			t.Fatalf("tenant %s reading system.parts: %v", r.ID, err)
		}
	}
	// ...and cannot reach the other's, nor create databases or users: each statement is refused with
	// ACCESS_DENIED exactly (a login failure, a syntax error or an unknown table is another code), and
	// then succeeds for its owner (the other tenant, or the administrator for what no tenant may do),
	// which shows the statement was valid and its target there. The intruder goes first so that the
	// owner's DROP does not change what the intruder's meets; mutations hit A, whose data nothing
	// checks again, so that B's table keeps its two rows.
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ownerA := func(sql string) error { return tenantExec(ctx, p, a, sql) }
	ownerB := func(sql string) error { return tenantExec(ctx, p, b, sql) }
	asAdmin := func(sql string) error { return admin.Exec(ctx, sql) }
	for _, denied := range []struct {
		intruder *provisioner.Resource
		sql      string
		owner    func(string) error
		undo     string // run by the administrator after the owner's success
	}{
		{a, "SELECT count() FROM " + quoteIdent(dbB) + ".t", ownerB, ""},
		{b, "SELECT count() FROM " + quoteIdent(dbA) + ".t", ownerA, ""},
		{b, "INSERT INTO " + quoteIdent(dbA) + ".t VALUES (3)", ownerA, ""},
		{b, "DROP TABLE " + quoteIdent(dbA) + ".t", ownerA, ""},
		{a, "CREATE DATABASE rill_integration_forbidden", asAdmin, "DROP DATABASE rill_integration_forbidden"},
		{a, "CREATE USER rill_integration_forbidden", asAdmin, "DROP USER rill_integration_forbidden"},
		{a, "SELECT count() FROM system.users", asAdmin, ""},
	} {
		err := tenantExec(ctx, p, denied.intruder, denied.sql)
		if err == nil {
			t.Fatalf("tenant %s was allowed: %s", denied.intruder.ID, denied.sql)
		}
		if exceptionCode(err) != codeAccessDenied {
			t.Fatalf("tenant %s refused %q with code %d, want ACCESS_DENIED (%d): %v", denied.intruder.ID, denied.sql, exceptionCode(err), codeAccessDenied, err)
		}
		if err := denied.owner(denied.sql); err != nil {
			t.Fatalf("the owner could not run %q either, so the refusal proves nothing: %v", denied.sql, err)
		}
		if denied.undo != "" {
			if err := admin.Exec(ctx, denied.undo); err != nil {
				t.Fatal(err)
			}
		}
	}

	if got, err := p.CheckResource(ctx, a, opts("Project A")); err != nil || got != a {
		t.Fatalf("CheckResource A: %v", err)
	}

	if err := p.Deprovision(ctx, a); err != nil {
		t.Fatalf("Deprovision A: %v", err)
	}
	if _, err := tenantQuery(ctx, p, a, "SELECT 1"); err == nil {
		t.Fatal("A's DSN still logs in after Deprovision")
	} else if !isGoneError(err) {
		t.Fatalf("A's DSN after Deprovision: want a login refusal, got %v", err)
	}
	if err := p.Deprovision(ctx, a); err != nil {
		t.Fatalf("Deprovision A again: %v", err)
	}
	if _, err := p.CheckResource(ctx, a, opts("Project A")); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("CheckResource A after Deprovision: want ErrResourceNotFound, got %v", err)
	}
	if names, err := admin.QueryStrings(ctx, "SELECT name FROM system.databases WHERE name = "+quoteString(dbA)); err != nil || len(names) != 0 {
		t.Fatalf("database of A after Deprovision: %v %v", names, err)
	}

	// B is untouched by A's removal.
	if _, err := p.CheckResource(ctx, b, opts("x")); err != nil {
		t.Fatalf("CheckResource B after A was removed: %v", err)
	}
	if rows, err := tenantQuery(ctx, p, b, "SELECT toString(count()) FROM t"); err != nil || rows[0] != "2" {
		t.Fatalf("B's data after A was removed: %v %v", rows, err)
	}

	// Rotation to a chosen password (ClickhouseArgs, as from password_wo): afterwards only the new one
	// logs in. On 21.11 and newer the database comment carries the annotations and the user has its
	// default database and cannot pass its rights on.
	rotated, err := p.Provision(ctx, b, &provisioner.ResourceOptions{Annotations: opts("x").Annotations,
		Args: (&provisioner.ClickhouseArgs{Password: "Rotated-'pw'-0123456789"}).AsMap()})
	if err != nil {
		t.Fatalf("rotating B's password: %v", err)
	}
	if _, err := tenantQuery(ctx, p, rotated, "SELECT 1"); err != nil {
		t.Fatalf("B's new password: %v", err)
	}
	if _, err := tenantQuery(ctx, p, b, "SELECT 1"); !isGoneError(err) {
		t.Fatalf("B's old password after the rotation: want a login refusal, got %v", err)
	}
	if _, features, err := p.managerSession(ctx); err != nil {
		t.Fatal(err)
	} else if features.userOptions {
		want, _ := json.Marshal(opts("Project B; DROP DATABASE system").Annotations)
		if comments, err := admin.QueryStrings(ctx, "SELECT comment FROM system.databases WHERE name = "+quoteString(dbB)); err != nil || len(comments) != 1 || comments[0] != string(want) {
			t.Fatalf("B's database comment: %q (%v), want %s", comments, err, want)
		}
		created, err := admin.QueryStrings(ctx, "SHOW CREATE USER "+quoteIdent(userName(b.ID)))
		if err != nil || len(created) != 1 || !strings.Contains(created[0], "GRANTEES NONE") || !strings.Contains(created[0], "DEFAULT DATABASE") {
			t.Fatalf("B's user: %q (%v)", created, err)
		}
	}
	b = rotated

	// Dropping B's database behind the provisioner's back leaves B half present (its user is still
	// there): found, not gone, and the update's Provision re-creates the database under its name.
	if err := admin.Exec(ctx, "DROP DATABASE "+quoteIdent(dbB)+onCluster(p.cluster)); err != nil {
		t.Fatal(err)
	}
	half, err := p.CheckResource(ctx, b, opts("x"))
	if err != nil || half.Config["database"] != "" || half.Config["user"] != userName(b.ID) || half.State[stateDatabase] != dbB {
		t.Fatalf("CheckResource B without its database: want it found with its user only, got %+v, %v", half, err)
	}
	half.State = provisioner.WithoutObservations(half.State)
	repaired, err := p.Provision(ctx, half, opts("Renamed"))
	if err != nil {
		t.Fatalf("Provision B again: %v", err)
	}
	if repaired.State["database"] != dbB {
		t.Fatalf("repair moved B's database from %s to %v", dbB, repaired.State["database"])
	}
	if err := p.AwaitReady(ctx, repaired); err != nil {
		t.Fatalf("AwaitReady repaired B: %v", err)
	}
	if err := p.Deprovision(ctx, repaired); err != nil {
		t.Fatalf("Deprovision B: %v", err)
	}
}

func TestIntegrationDeprovisionWithoutStateDropsWhatProvisionCreated(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	requireSQLAccessManagement(t, ctx, p)
	r := &provisioner.Resource{ID: "Integration " + uuid.NewString(), Type: provisioner.ResourceTypeClickHouse}
	got, err := p.Provision(ctx, r, &provisioner.ResourceOptions{Annotations: map[string]string{"organization": "o", "project": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	// Terraform lost the state: only the ID is known.
	if err := p.Deprovision(ctx, &provisioner.Resource{ID: r.ID, Type: r.Type}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CheckResource(ctx, got, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("want ErrResourceNotFound, got %v", err)
	}
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := admin.QueryStrings(ctx, "SELECT name FROM system.databases WHERE name = "+quoteString(got.State["database"].(string))); err != nil || len(names) != 0 {
		t.Fatalf("database left behind: %v %v", names, err)
	}
}

// TestIntegrationServerWithoutSQLUserManagementIsRefusedClearly runs only against servers that
// cannot create users by SQL (ClickHouse before 20.4, or an admin without access_management).
func TestIntegrationServerWithoutSQLUserManagementIsRefusedClearly(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	if err := p.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if _, _, err := p.managerSession(ctx); err == nil {
		t.Skip("the server manages users by SQL; the lifecycle tests cover it")
	}
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, err := admin.QueryStrings(ctx, "SELECT name FROM system.databases")
	if err != nil {
		t.Fatal(err)
	}
	// What `terraform plan` asks (provisioner.CreateChecker): the same refusal, read-only, naming the
	// server by its address, never by its credentials.
	addr := p.adminAddress()
	err = p.CheckCreate(ctx, provisioner.ResourceTypeClickHouse)
	if !errors.Is(err, provisioner.ErrCannotCreate) || !errors.Is(err, ErrNoSQLAccessManagement) || !strings.Contains(err.Error(), " at "+addr) {
		t.Fatalf("CheckCreate: want ErrCannotCreate naming the server at %s, got %v", addr, err)
	}
	if pw := adminPassword(t, p); pw != "" && strings.Contains(err.Error(), pw) {
		t.Fatalf("CheckCreate's error reveals the admin password: %v", err)
	}
	t.Logf("CheckCreate refused as expected: %v", err)
	r := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse}
	_, err = p.Provision(ctx, r, &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "o", "project_name": "p"}})
	if !errors.Is(err, ErrNoSQLAccessManagement) || !strings.Contains(err.Error(), "access") {
		t.Fatalf("want a clear ErrNoSQLAccessManagement, got %v", err)
	}
	t.Logf("Provision refused as expected: %v", err)
	after, err := admin.QueryStrings(ctx, "SELECT name FROM system.databases")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(before, ",") != strings.Join(after, ",") {
		t.Fatalf("databases changed although Provision was refused: %v -> %v", before, after)
	}
	if err := p.Deprovision(ctx, r); !errors.Is(err, ErrNoSQLAccessManagement) {
		t.Fatalf("Deprovision: want ErrNoSQLAccessManagement, got %v", err)
	}
	// Read-only paths still answer: CheckResource of something never provisioned is "not found".
	if _, err := p.CheckResource(ctx, r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("CheckResource: %v", err)
	}
}

// adminPassword is the password of the admin DSN the integration tests use ("" when it has none).
func adminPassword(t *testing.T, p *Provisioner) string {
	t.Helper()
	opts, err := parseDSN(p.dsn)
	if err != nil {
		t.Fatal(err)
	}
	return opts.Auth.Password
}

// TestIntegrationCheckCreateTellsARefusalFromAnUnreachableServer runs the plan-time check on a server of
// any kind: on one that manages users by SQL it passes; on one that cannot, it is the refusal above.
// A server that cannot be reached is neither: the check could not be made (the plan warns).
func TestIntegrationCheckCreateTellsARefusalFromAnUnreachableServer(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	_, _, managerErr := p.managerSession(ctx)
	err := p.CheckCreate(ctx, provisioner.ResourceTypeClickHouse)
	switch {
	case managerErr == nil && err != nil:
		t.Fatalf("CheckCreate on a server that manages users by SQL: %v", err)
	case errors.Is(managerErr, ErrNoSQLAccessManagement) && !errors.Is(err, provisioner.ErrCannotCreate):
		t.Fatalf("CheckCreate on a server that cannot manage users by SQL: want ErrCannotCreate, got %v", err)
	}

	// Port 1 on the loopback refuses connections.
	down := "clickhouse://admin:Unreachable-Pa55@127.0.0.1:1/default?dial_timeout=2s"
	if strings.HasPrefix(p.dsn, "http") {
		down = "http://admin:Unreachable-Pa55@127.0.0.1:1/default?dial_timeout=2s"
	}
	pp, err := New([]byte(fmt.Sprintf(`{"dsn":%q}`, down)), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pp.Close() })
	err = pp.(*Provisioner).CheckCreate(ctx, provisioner.ResourceTypeClickHouse)
	if err == nil || errors.Is(err, provisioner.ErrCannotCreate) || strings.Contains(err.Error(), "Unreachable-Pa55") {
		t.Fatalf("unreachable server: want an error that is not ErrCannotCreate and has no password, got %v", err)
	}
}

// TestIntegrationLoginFailuresAreToldApart checks, on a real server of any version, that the
// refusals CheckResource reads as "gone" are the ones ClickHouse sends for an unknown user or database,
// and that an unreachable server is not one of them.
func TestIntegrationLoginFailuresAreToldApart(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	opts, err := parseDSN(p.dsn)
	if err != nil {
		t.Fatal(err)
	}
	unknownUser, err := withCredentials(p.dsn, "rill_integration_no_such_user", "x", opts.Auth.Database)
	if err != nil {
		t.Fatal(err)
	}
	unknownDB, err := withCredentials(p.dsn, opts.Auth.Username, opts.Auth.Password, "rill_integration_no_such_db")
	if err != nil {
		t.Fatal(err)
	}
	for name, dsn := range map[string]string{"unknown user": unknownUser, "unknown database": unknownDB} {
		err := p.selectOne(ctx, dsn)
		if !isGoneError(err) {
			t.Errorf("%s: want a login refusal read as gone, got code %d: %v", name, exceptionCode(err), err)
		}
		r := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse, Config: map[string]any{"dsn": dsn}}
		if _, err := p.CheckResource(ctx, r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
			t.Errorf("%s: CheckResource: want ErrResourceNotFound, got %v", name, err)
		}
	}
	// Port 1 on the loopback refuses connections: unreachable is not gone. The spec's address (this
	// server) is then tried with the same login, which this server refuses: that is no verdict either
	// (the spec may name another server than the one the resource was made on).
	down := "clickhouse://rill_x:pw@127.0.0.1:1/rill_db?dial_timeout=2s"
	if strings.HasPrefix(p.dsn, "http") {
		down = "http://rill_x:pw@127.0.0.1:1/rill_db?dial_timeout=2s"
	}
	r := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse, Config: map[string]any{"dsn": down}}
	if _, err := p.CheckResource(ctx, r, nil); err == nil || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Errorf("unreachable server: want an error that is not ErrResourceNotFound, got %v", err)
	} else if strings.Contains(err.Error(), ":pw@") {
		t.Errorf("error reveals the DSN: %v", err)
	}
}

// TestIntegrationChangedPasswordIsDriftNotGone runs on chDB's ClickHouse 26.7 whatever the other
// integration tests use: chDB cannot create a user by SQL, but a user declared in its users.xml under
// a resource's name stands for one provisioned earlier. A DSN with the password that user no longer has
// (what a password changed outside Terraform leaves the state holding) is refused by the real
// server, and CheckResource reads that, with the user and the database still there, as drift of the
// password (found, without a dsn), not as gone; with the user's real password it is found unchanged.
func TestIntegrationChangedPasswordIsDriftNotGone(t *testing.T) {
	id := uuid.NewString()
	user, db := userName(id), databaseName(id, map[string]string{"organization_name": "acme", "project_name": "drift"})
	const current = "Current-Pa55w0rd"
	srv := chdbtest.Start(t, chdbtest.User{Name: user, Password: current})
	ctx := integrationContext(t)
	if _, err := srv.Query(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
		t.Fatal(err)
	}
	p := chdbProvisioner(t, srv)
	resource := func(password string) *provisioner.Resource {
		dsn, err := withCredentials(p.dsn, user, password, db)
		if err != nil {
			t.Fatal(err)
		}
		return &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse,
			State:  map[string]any{stateDatabase: db, stateUser: user},
			Config: (&provisioner.ClickhouseConfig{DSN: dsn, Database: db, User: user}).AsMap()}
	}

	if got, err := p.CheckResource(ctx, resource(current), nil); err != nil || got.Config["dsn"] == "" {
		t.Fatalf("with the user's password: %+v, %v", got, err)
	}
	stale := resource("The-Old-Generated-Pa55w0rd")
	err := p.selectOne(ctx, stale.Config["dsn"].(string))
	if !isGoneError(err) {
		t.Fatalf("a login with a password the user no longer has: want a refusal CheckResource reads, got code %d: %v", exceptionCode(err), err)
	}
	t.Logf("ClickHouse answers a wrong password with code %d", exceptionCode(err))
	got, err := p.CheckResource(ctx, stale, nil)
	if err != nil {
		t.Fatalf("with a changed password: want the resource found with drift, got %v", err)
	}
	if got.Config["dsn"] != "" || got.Config["user"] != user || got.Config["database"] != db || len(provisioner.NewRuntimeObservation(got.State).Drift) != 1 {
		t.Fatalf("with a changed password: %+v; want user %s and database %s without a dsn, and the drift", got, user, db)
	}
}

// TestIntegrationHalfPresentResourceIsKeptNotGone runs on a real server of any kind (chDB and
// clickhouse-server 18.16 included: it needs no CREATE USER): a provisioned resource whose database
// is still there while its user is not (what a destroy killed between its DROP USER and DROP
// DATABASE leaves) is found, through its DSN (the server refuses the login of the unknown user) and
// without one (a write-only password), with the database alone and the drift naming the missing
// user; only once the database is gone too is it gone. On chDB, a user declared in its users.xml
// under the resource's name stands for the other half: with its database missing (the login refused
// for the unknown database) the resource is found with the user alone. Re-creating the missing half
// needs SQL user management (TestIntegrationLifecycleOfTwoIsolatedTenants on such a server, and the
// fake: TestCheckResourceOfAHalfPresentResourceKeepsItAndTheUpdateRecreatesTheMissingHalf_fake).
func TestIntegrationHalfPresentResourceIsKeptNotGone(t *testing.T) {
	ctx := integrationContext(t)
	annotations := map[string]string{"organization_name": "acme", "project_name": "half"}
	resource := func(p *Provisioner, id, password string, withDSN bool) *provisioner.Resource {
		t.Helper()
		user, db := userName(id), databaseName(id, annotations)
		cfg := &provisioner.ClickhouseConfig{Database: db, User: user}
		if withDSN {
			dsn, err := withCredentials(p.dsn, user, password, db)
			if err != nil {
				t.Fatal(err)
			}
			cfg.DSN = dsn
		}
		return &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse,
			State: map[string]any{stateDatabase: db, stateUser: user}, Config: cfg.AsMap()}
	}
	found := func(p *Provisioner, r *provisioner.Resource, user, db, missing string) {
		t.Helper()
		got, err := p.CheckResource(ctx, r, nil)
		if err != nil {
			t.Fatalf("with its %s missing (dsn %v): want it found, got %v", missing, r.Config["dsn"] != nil, err)
		}
		drift := provisioner.NewRuntimeObservation(got.State).Drift
		cfg, err := provisioner.NewClickhouseConfig(got.Config)
		if err != nil || got.ID != r.ID || cfg.DSN != "" || cfg.User != user || cfg.Database != db ||
			len(drift) != 1 || !strings.Contains(drift[0], missing+" `") || !strings.Contains(drift[0], "is missing") {
			t.Fatalf("with its %s missing: %+v; want user %q and database %q without a dsn, and the drift naming the %s", missing, got, user, db, missing)
		}
	}

	t.Run("database without its user", func(t *testing.T) {
		p := integrationProvisioner(t)
		id := uuid.NewString()
		db := databaseName(id, annotations)
		admin, err := p.adminSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+quoteIdent(db)) })
		withDSN := resource(p, id, "The-Generated-Pa55w0rd", true)
		if err := p.selectOne(ctx, withDSN.Config["dsn"].(string)); !isGoneError(err) {
			t.Fatalf("the login of a user that does not exist: want a refusal CheckResource reads, got code %d: %v", exceptionCode(err), err)
		} else {
			t.Logf("the server refuses the login of a user that does not exist with code %d", exceptionCode(err))
		}
		found(p, withDSN, "", db, "user")
		found(p, resource(p, id, "", false), "", db, "user")
		if err := admin.Exec(ctx, "DROP DATABASE "+quoteIdent(db)); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*provisioner.Resource{"with its dsn": withDSN, "without": resource(p, id, "", false)} {
			if _, err := p.CheckResource(ctx, r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
				t.Fatalf("both gone, %s: want ErrResourceNotFound, got %v", name, err)
			}
		}
	})

	t.Run("user without its database (chDB)", func(t *testing.T) {
		id := uuid.NewString()
		const password = "Current-Pa55w0rd"
		srv := chdbtest.Start(t, chdbtest.User{Name: userName(id), Password: password})
		p := chdbProvisioner(t, srv)
		withDSN := resource(p, id, password, true)
		if err := p.selectOne(ctx, withDSN.Config["dsn"].(string)); !isGoneError(err) {
			t.Fatalf("a login into a database that does not exist: want a refusal CheckResource reads, got code %d: %v", exceptionCode(err), err)
		}
		found(p, withDSN, userName(id), "", "database")
		found(p, resource(p, id, "", false), userName(id), "", "database")
	})
}

// TestIntegrationCheckResourceWithoutCredentialsLooksUpByName runs the import path on a real server
// of any kind (chDB included: it needs no CREATE USER): a resource without a DSN is gone when neither
// its user nor a database named for it exists, and found, with that database, when one does. Over
// HTTP an empty result has no columns at all, which the lookups must read as "none".
func TestIntegrationCheckResourceWithoutCredentialsLooksUpByName(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	r := &provisioner.Resource{ID: uuid.NewString(), Type: provisioner.ResourceTypeClickHouse}
	if _, err := p.CheckResource(ctx, r, nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("nothing there: want ErrResourceNotFound, got %v", err)
	}
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := databaseName(r.ID, map[string]string{"organization_name": "acme", "project_name": "import"})
	if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+quoteIdent(db)) })
	got, err := p.CheckResource(ctx, r, nil)
	if err != nil {
		t.Fatalf("with its database: %v", err)
	}
	if got.State[stateDatabase] != db || got.State[stateUser] != userName(r.ID) || got.Config["dsn"] != "" || got.Config["database"] != db || got.Config["user"] != nil {
		t.Fatalf("resource %+v", got)
	}
}

// TestIntegrationProvisionStatementsParseOnARealServer checks on a real server of any kind (chDB
// included: nothing here creates a user) what the unit tests cannot: that the server's own parser
// accepts every statement Provision sends to a current server (EXPLAIN AST: CREATE USER ... DEFAULT
// DATABASE ... GRANTEES NONE, ALTER USER ... ADD IDENTIFIED, Rill's source grants ON CLUSTER), that
// system.privileges answers the source-privilege lookup, and that the database COMMENT carries the
// annotations, hostile ones included, back unchanged as JSON.
func TestIntegrationProvisionStatementsParseOnARealServer(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := admin.QueryStrings(ctx, "SELECT version()")
	if err != nil || len(versions) != 1 {
		t.Fatalf("version: %q %v", versions, err)
	}
	if !versionAtLeast(versions[0], 24, 9) {
		t.Skipf("ClickHouse %s is older than 24.9: the statements for current servers do not apply", versions[0])
	}
	sources, err := p.knownSourcePrivileges(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sources, ",") != strings.Join(sourcePrivileges, ",") {
		t.Errorf("ClickHouse %s knows the source privileges %q, want all of %q", versions[0], sources, sourcePrivileges)
	}

	annotations := map[string]string{"organization_name": "Acme", "project_name": "it's `web`; DROP DATABASE x --", "note": "\\ back\\slash \"quoted\" é\n"}
	comment, err := json.Marshal(annotations)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	db := databaseName(id, annotations)
	features := &serverFeatures{version: versions[0], userOptions: true, addIdentified: true, sourcePrivileges: sources}
	stmts, finish := provisionStatements(db, userName(id), "Pa55'w\\rd", "some`cluster", string(comment), features)
	for _, st := range append(stmts, finish...) {
		if _, err := admin.QueryStrings(ctx, "EXPLAIN AST "+st.sql); err != nil {
			t.Errorf("ClickHouse %s does not parse the statement for %s: %v", versions[0], st.what, err)
		}
	}

	// The database statement, run for real (without ON CLUSTER: no cluster here).
	create, _ := provisionStatements(db, userName(id), "unused", "", string(comment), features)
	if err := admin.Exec(ctx, create[0].sql); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+quoteIdent(db)) })
	got, err := admin.QueryStrings(ctx, "SELECT comment FROM system.databases WHERE name = "+quoteString(db))
	if err != nil || len(got) != 1 {
		t.Fatalf("reading the comment: %q %v", got, err)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got[0]), &back); err != nil || fmt.Sprint(back) != fmt.Sprint(annotations) {
		t.Fatalf("the comment %q does not carry the annotations back (%v)", got[0], err)
	}
}

// TestIntegrationImportFindsRillsDatabaseByName runs on a real server of any kind (it creates no
// user): an import of an ID whose database Rill's admin service named (rill_<org>_<project>_<ID
// without dashes>) finds it by that name when none of ours exists, with the server's own
// startsWith and HTTP or native answers; a second database named for the same ID is an error that
// names both, not a pick.
func TestIntegrationImportFindsRillsDatabaseByName(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	id := uuid.NewString()
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := rillDatabaseName(id, map[string]string{"organization_name": "Acme", "project_name": "Rill-Import"})
	other := rillDatabaseName(id, map[string]string{"project_name": "Other"})
	for _, n := range []string{db, other} {
		t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+quoteIdent(n)) })
	}
	if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
		t.Fatal(err)
	}
	got, err := p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, nil)
	if err != nil {
		t.Fatalf("with Rill's database: %v", err)
	}
	if got.Config["database"] != db || got.Config["user"] != nil || got.State[stateUser] != rillUserName(id) || got.State[stateAdoptedFrom] != stateAdoptedFromRill {
		t.Fatalf("resource %+v; want Rill's database %s and Rill's user name recorded", got, db)
	}
	if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(other)); err != nil {
		t.Fatal(err)
	}
	_, err = p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), quoteIdent(db)) || !strings.Contains(err.Error(), quoteIdent(other)) {
		t.Fatalf("two of Rill's names for one ID: want an error naming both, got %v", err)
	}
}

// TestIntegrationImportFindsRillsUserByItsDefaultDatabase runs on chDB's ClickHouse 26.7 whatever
// the other integration tests use: chDB cannot create a user by SQL, but a user declared in its
// users.xml under Rill's name, with Rill's database as its default database, stands for one Rill's
// admin service created (CREATE USER ... DEFAULT DATABASE). Its org and project are so long that Rill
// cut the ID off the database's name entirely: only the user's default_database, read from the real
// system.users, can name it (without it the import is an error naming the candidates).
func TestIntegrationImportFindsRillsUserByItsDefaultDatabase(t *testing.T) {
	id := uuid.NewString()
	user := rillUserName(id)
	db := rillDatabaseName(id, map[string]string{"organization_name": "AcmeCorporationInternational", "project_name": "Customer-Analytics-Dashboards"})
	if rillDatabaseKind(id, db) != rillUndetermined {
		t.Fatalf("%s keeps part of the ID", db)
	}
	srv := chdbtest.Start(t, chdbtest.User{Name: user, Password: "1Rr!0123456789abcdef", DefaultDatabase: db})
	ctx := integrationContext(t)
	if _, err := srv.Query(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
		t.Fatal(err)
	}
	p := chdbProvisioner(t, srv)
	got, err := p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config["user"] != user || got.Config["database"] != db || got.Config["dsn"] != "" {
		t.Fatalf("resource %+v; want Rill's user %s and its default database %s", got, user, db)
	}

	// Another resource of the same project got the same name from Rill's rule, so the same database:
	// its user, found by the real system.users.default_database, makes the import a refusal.
	otherID := uuid.NewString()
	other := rillUserName(otherID)
	srv2 := chdbtest.Start(t, chdbtest.User{Name: user, Password: "1Rr!0123456789abcdef", DefaultDatabase: db},
		chdbtest.User{Name: other, Password: "1Rr!fedcba9876543210", DefaultDatabase: db})
	if _, err := srv2.Query(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
		t.Fatal(err)
	}
	_, err = chdbProvisioner(t, srv2).CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), quoteIdent(other)) {
		t.Fatalf("a database shared with %s: got %v, want a refusal naming that user", other, err)
	}
}

// TestIntegrationImportRestoresTheAnnotationsFromTheComment: on a real server, an import of a database
// of ours reads the annotations back from its COMMENT through system.databases (chDB's 26.7); a server
// without database comments (18.16: no COMMENT, no such column) restores none and the import still
// finds the database.
func TestIntegrationImportRestoresTheAnnotationsFromTheComment(t *testing.T) {
	p := integrationProvisioner(t)
	ctx := integrationContext(t)
	id := uuid.NewString()
	annotations := map[string]string{"organization_name": "Acme", "project_name": "It's \"quoted\""}
	db := databaseName(id, annotations)
	admin, err := p.adminSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+quoteIdent(db)) })
	comment, err := json.Marshal(annotations)
	if err != nil {
		t.Fatal(err)
	}
	commented := true
	if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(db)+" COMMENT "+quoteString(string(comment))); err != nil {
		t.Logf("this server takes no database COMMENT (%v): the import restores no annotations", err)
		commented = false
		if err := admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(db)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.CheckResource(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeClickHouse}, nil)
	if err != nil {
		t.Fatal(err)
	}
	restored := provisioner.NewRuntimeObservation(got.State).Annotations
	if got.Config["database"] != db || (commented && !maps.Equal(restored, annotations)) || (!commented && restored != nil) {
		t.Fatalf("import: database %v, annotations %v (comment accepted: %v)", got.Config["database"], restored, commented)
	}
}

// TestIntegrationAdminWithoutAccessManagementIsRefusedForThat_chDB: an admin DSN whose user lacks
// access_management is refused for that, naming it, before anything is sent. A current ClickHouse
// (26.7) answers `SHOW USERS` for any user (the probe this check used, which let such an admin
// through to a CREATE DATABASE whose CREATE USER then failed with code 497); `SHOW CREATE USER
// CURRENT_USER` needs the SHOW USERS privilege, which ACCESS MANAGEMENT includes. On chDB the server
// has no writable user directory either: the admin's lack is what the refusal must name first, as no
// change of the server's configuration would make this admin able to create users.
func TestIntegrationAdminWithoutAccessManagementIsRefusedForThat_chDB(t *testing.T) {
	const name, password = "no_access_mgmt", "NoAccessMgmt-pw1"
	srv := chdbtest.Start(t, chdbtest.User{Name: name, Password: password})
	dsn := strings.Replace(srv.AdminDSN, chdbtest.AdminUser+":"+chdbtest.AdminPassword+"@", name+":"+password+"@", 1)
	pp, err := New([]byte(fmt.Sprintf(`{"dsn":%q}`, dsn)), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provisioner)
	t.Cleanup(func() { _ = p.Close() })
	ctx := integrationContext(t)
	err = p.CheckCreate(ctx, provisioner.ResourceTypeClickHouse)
	if !errors.Is(err, provisioner.ErrCannotCreate) || !errors.Is(err, ErrNoSQLAccessManagement) ||
		!strings.Contains(err.Error(), "enable access_management for the admin user") || strings.Contains(err.Error(), password) {
		t.Fatalf("CheckCreate: want the refusal naming access_management (without the password), got %v", err)
	}
	t.Logf("CheckCreate refused as expected: %v", err)
}
