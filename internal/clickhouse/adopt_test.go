package clickhouse

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// rillID is a resource ID as Rill's admin service makes them (a UUID from PostgreSQL).
const rillID = "0b7e6c5a-3f1d-4c2b-9a8e-7d6c5b4a3f2e"

const rillIDAlnum = "0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e"

// Rill's names, as admin/provisioner/clickhousestatic makes them (Rill commit e2f71cb): the user keeps
// the ID's case, the database is cut to 63 characters, trimmed of '_' and lowercased.
func TestRillNamesFollowRillsRule(t *testing.T) {
	if got := rillUserName("AbC-1_2.x"); got != "rill_AbC12x" {
		t.Errorf("rillUserName keeps the case and drops non-alphanumerics: got %q", got)
	}
	for _, c := range []struct {
		annotations map[string]string
		want        string
	}{
		{nil, "rill_" + rillIDAlnum},
		{map[string]string{"organization_name": "Acme Inc.", "project_name": "Web-App"}, "rill_acmeinc_webapp_" + rillIDAlnum},
		{map[string]string{"project_name": "Web"}, "rill_web_" + rillIDAlnum},
		{map[string]string{"organization_name": "", "project_name": "Web"}, "rill__web_" + rillIDAlnum},
		{map[string]string{"organization": "ignored", "project": "ignored"}, "rill_" + rillIDAlnum},
		// 5+11+1+11+1+32 = 61 characters: whole.
		{map[string]string{"organization_name": "abcdefghijk", "project_name": "abcdefghijk"}, "rill_abcdefghijk_abcdefghijk_" + rillIDAlnum},
		// Cut inside the ID: 63 characters.
		{map[string]string{"organization_name": "Organization", "project_name": "Project-Names1"}, ("rill_organization_projectnames1_" + rillIDAlnum)[:63]},
		// Cut right after the project's separator: the ID is gone and the '_' trimmed.
		{map[string]string{"organization_name": strings.Repeat("o", 28), "project_name": strings.Repeat("P", 28)}, "rill_" + strings.Repeat("o", 28) + "_" + strings.Repeat("p", 28)},
	} {
		if got := rillDatabaseName(rillID, c.annotations); got != c.want {
			t.Errorf("rillDatabaseName(%v) = %q, want %q", c.annotations, got, c.want)
		}
	}
}

// rillDatabaseKind knows every name rillDatabaseName makes for an ID, and how sure it can be.
func TestRillDatabaseKindKnowsEveryNameOfRillsRule(t *testing.T) {
	for org := 0; org <= 60; org++ {
		for project := 0; project <= 60; project += 3 {
			ann := map[string]string{"organization_name": strings.Repeat("o", org), "project_name": strings.Repeat("p", project)}
			name := rillDatabaseName(rillID, ann)
			kept := 63 - (5 + org + 1 + project + 1)
			want := rillWhole
			switch {
			case kept >= len(rillIDAlnum):
			case kept >= minRillIDChars:
				want = rillCut
			default:
				want = rillUndetermined
			}
			if got := rillDatabaseKind(rillID, name); got != want {
				t.Fatalf("org %d, project %d: rillDatabaseKind(%q) = %d, want %d", org, project, name, got, want)
			}
		}
	}
	other := "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	for _, name := range []string{
		"default", "rill", "rill_", "rill_acme_web",
		rillDatabaseName(other, map[string]string{"organization_name": "acme", "project_name": "web"}),                    // another ID's
		rillDatabaseName(other, map[string]string{"organization_name": "Organization", "project_name": "Project-Names1"}), // another's, cut
		databaseName(rillID, map[string]string{"organization_name": "acme", "project_name": "web"}),                       // ours
		"rill_a_b_c_" + rillIDAlnum,                          // more parts than Rill makes
		"RILL_" + rillIDAlnum, "rill_x_" + rillIDAlnum + "_", // not Rill's characters
	} {
		if got := rillDatabaseKind(rillID, name); got != rillNone {
			t.Errorf("rillDatabaseKind(%q) = %d, want none", name, got)
		}
	}
	if !isUserOf(rillID, rillUserName(rillID)) || !isUserOf(rillID, userName(rillID)) || isUserOf(rillID, rillUserName(other)) {
		t.Error("isUserOf must accept our user and Rill's for the ID, and no other")
	}
}

// An import of a resource Rill's admin service made (its names, not ours) finds Rill's user and the
// user's default database, read-only, records them, and warns what the apply does to the password
// of Rill's deployment; the update after it, a later refresh and the destroy use Rill's names, never
// ours.
func TestImportOfARillMadeResourceAdoptsRillsNamesAndEveryLaterCallUsesThem_fake(t *testing.T) {
	ann := map[string]string{"organization_name": "Acme", "project_name": "Web"}
	user, db := "rill_"+rillIDAlnum, "rill_acme_web_"+rillIDAlnum
	fake, p := onFake(t)
	fake.users = []string{"default", user}
	fake.defaultDBs = map[string]string{user: db}
	fake.databases = []string{"default", db, "rill_acme_web_" + strings.ReplaceAll("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "-", "")}
	p.newPassword = func() (string, error) { return "Generated0123456789abcdefGHIJKLMNOPQR", nil }

	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the import wrote: %q", fake.statements())
	}
	cfg, _ := provisioner.NewClickhouseConfig(got.Config)
	if cfg.User != user || cfg.Database != db || cfg.DSN != "" || got.State[stateUser] != user || got.State[stateDatabase] != db {
		t.Fatalf("adopted config %+v, state %v; want Rill's user %s and database %s, no dsn", cfg, got.State, user, db)
	}
	warnings := provisioner.NewRuntimeObservation(got.State).Warnings
	if len(warnings) != 1 || !strings.Contains(warnings[0], "what Rill's admin service made") || !strings.Contains(warnings[0], "password_wo") ||
		!strings.Contains(warnings[0], "running Rill deployment") {
		t.Fatalf("warnings %q; want one saying what happens to the password of Rill's deployment", warnings)
	}

	// The plan's refresh (the Terraform layer passes the recorded names and the state without the
	// observations) keeps the names and repeats the warning until an apply.
	kept := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: provisioner.WithoutObservations(got.State), Config: got.Config}
	again, err := p.CheckResource(context.Background(), kept, nil)
	if err != nil || again.Config["user"] != user || again.Config["database"] != db || len(provisioner.NewRuntimeObservation(again.State).Warnings) != 1 {
		t.Fatalf("refresh after the import: %v, %+v", err, again)
	}

	// The update after the import, with Rill's password kept (password_wo).
	const rillPassword = "1Rr!0123456789abcdef0123456789abcdef"
	kept.State = provisioner.WithoutObservations(again.State)
	opts := &provisioner.ResourceOptions{Annotations: ann, Args: (&provisioner.ClickhouseArgs{Password: rillPassword}).AsMap()}
	updated, err := p.Provision(context.Background(), kept, opts)
	if err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	for _, want := range []string{
		"CREATE DATABASE IF NOT EXISTS `" + db + "`",
		"CREATE USER IF NOT EXISTS `" + user + "` IDENTIFIED WITH sha256_password BY '1Rr!",
		"ALTER USER `" + user + "` IDENTIFIED WITH sha256_password BY '" + rillPassword + "' DEFAULT DATABASE `" + db + "`",
	} {
		if !strings.Contains(stmts, want) {
			t.Errorf("the update lacks %q:\n%s", want, stmts)
		}
	}
	if strings.Contains(stmts, userName(rillID)) || strings.Contains(stmts, databaseName(rillID, ann)) {
		t.Fatalf("the update used our names:\n%s", stmts)
	}
	if updated.State[stateAdoptedFrom] != nil || updated.State[stateUser] != user || updated.State[stateDatabase] != db ||
		!strings.Contains(updated.Config["dsn"].(string), user+":") || !strings.HasSuffix(strings.Split(updated.Config["dsn"].(string), "?")[0], "/"+db) {
		t.Fatalf("after the update: state %v, dsn user/database not Rill's", updated.State)
	}

	// Half present later (its database dropped by hand): kept under Rill's names, and recreated so.
	fake.mu.Lock()
	fake.databases = []string{"default"}
	fake.mu.Unlock()
	noDSN := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: updated.State,
		Config: (&provisioner.ClickhouseConfig{User: user, Database: db}).AsMap()}
	half, err := p.CheckResource(context.Background(), noDSN, nil)
	if err != nil || half.State[stateDatabase] != db || half.State[stateUser] != user || half.Config["user"] != user {
		t.Fatalf("half present: %v, %+v", err, half)
	}

	// The destroy drops Rill's names, not ours.
	written := len(fake.statements())
	if err := p.Deprovision(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	drops := strings.Join(fake.statements()[written:], "\n")
	if drops != "DROP USER IF EXISTS `"+user+"`\nDROP DATABASE IF EXISTS `"+db+"`" {
		t.Fatalf("destroy ran:\n%s", drops)
	}
	// Also from the Terraform state's names alone (no private state).
	written = len(fake.statements())
	if err := p.Deprovision(context.Background(), &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, Config: kept.Config}); err != nil {
		t.Fatal(err)
	}
	if drops := strings.Join(fake.statements()[written:], "\n"); drops != "DROP USER IF EXISTS `"+user+"`\nDROP DATABASE IF EXISTS `"+db+"`" {
		t.Fatalf("destroy from the config's names ran:\n%s", drops)
	}
}

// Without Rill's user (or with one whose default database is unset), the database is the one whose
// name Rill's rule gives the ID; several, or names cut too short to say whose they are, are an error
// naming them and what to do, never gone; nothing at all is gone.
func TestImportFindsRillsDatabaseByNameOrSaysWhyNot_fake(t *testing.T) {
	user := "rill_" + rillIDAlnum
	cutName := ("rill_organization_projectnames1_" + rillIDAlnum)[:63]
	short := rillDatabaseName(rillID, map[string]string{"organization_name": strings.Repeat("o", 25), "project_name": strings.Repeat("p", 25)})
	lost := rillDatabaseName(rillID, map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)})
	for _, c := range []struct {
		name      string
		users     []string
		defaultDB string
		dbs       []string
		wantDB    string
		wantUser  string
		wantErr   []string
		wantGone  bool
	}{
		{"whole name, no user", nil, "", []string{"default", "rill_acme_web_" + rillIDAlnum}, "rill_acme_web_" + rillIDAlnum, "", nil, false},
		{"whole name, user without a default database", []string{user}, "", []string{"rill_" + rillIDAlnum}, "rill_" + rillIDAlnum, user, nil, false},
		{"cut name", nil, "", []string{cutName, "rill_x"}, cutName, "", nil, false},
		{"whole beats cut", nil, "", []string{cutName, "rill_web_" + rillIDAlnum}, "rill_web_" + rillIDAlnum, "", nil, false},
		{"user alone", []string{user}, "", []string{"default"}, "", user, nil, false},
		{"user whose default database is gone", []string{user}, "rill_acme_web_" + rillIDAlnum, []string{"default"}, "", user, nil, false},
		{"user whose default database is cut before the ID", []string{user}, lost, []string{lost}, lost, user, nil, false},
		{"two whole names", nil, "", []string{"rill_a_" + rillIDAlnum, "rill_b_" + rillIDAlnum},
			"", "", []string{"several databases", "`rill_a_" + rillIDAlnum + "`, `rill_b_" + rillIDAlnum + "`", "DEFAULT DATABASE"}, false},
		{"two cut names", nil, "", []string{cutName, ("rill_organizatio_projectnamesx1_" + rillIDAlnum)[:63]}, "", "", []string{"several databases could be", cutName}, false},
		{"a name cut too short", nil, "", []string{short}, "", "", []string{"cannot be told from its name", short, "DEFAULT DATABASE"}, false},
		{"a name cut before the ID", nil, "", []string{lost}, "", "", []string{"cannot be told from its name", lost}, false},
		{"a default database that is not Rill's", []string{user}, "default", []string{"default"}, "", "", []string{"default database `default`", "refusing to adopt it"}, false},
		{"nothing", nil, "", []string{"default", "rill_other"}, "", "", []string{"nor user `" + user + "`"}, true},
	} {
		fake, p := onFake(t)
		fake.users, fake.databases, fake.defaultDBs = c.users, c.dbs, map[string]string{user: c.defaultDB}
		got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
		if len(fake.statements()) != 0 {
			t.Fatalf("%s: the import wrote: %q", c.name, fake.statements())
		}
		if c.wantErr != nil {
			if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) != c.wantGone {
				t.Fatalf("%s: got %v, want an error (gone: %v)", c.name, err, c.wantGone)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q lacks %q", c.name, err, w)
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg, _ := provisioner.NewClickhouseConfig(got.Config); cfg.Database != c.wantDB || cfg.User != c.wantUser || got.State[stateUser] != user {
			t.Errorf("%s: config %v, state %v; want database %q, user %q", c.name, got.Config, got.State, c.wantDB, c.wantUser)
		}
	}
}

// A user adopted alone gets, from the update, the database Rill's rule names for it.
func TestUpdateOfARillUserAdoptedAloneCreatesRillsDatabase_fake(t *testing.T) {
	user := "rill_" + rillIDAlnum
	fake, p := onFake(t)
	fake.users = []string{user}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]string{"organization_name": "Acme", "project_name": "Web"}
	r := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: provisioner.WithoutObservations(got.State), Config: got.Config}
	if _, err := p.Provision(context.Background(), r, &provisioner.ResourceOptions{Annotations: ann}); err != nil {
		t.Fatal(err)
	}
	if stmts := strings.Join(fake.statements(), "\n"); !strings.Contains(stmts, "CREATE DATABASE IF NOT EXISTS `rill_acme_web_"+rillIDAlnum+"`") {
		t.Fatalf("statements:\n%s", stmts)
	}
}

// Rill's admin service gives two resources of one project the same database when it cuts their
// names to 63 characters before their IDs differ (a long org and project name): CREATE DATABASE IF
// NOT EXISTS makes them share it, and both users have it as their DEFAULT DATABASE. An import of one
// refuses to adopt it, naming the other user, since its destroy would drop the other's data.
func TestImportRefusesADatabaseRillGaveTwoResources_fake(t *testing.T) {
	user, other := "rill_"+rillIDAlnum, "rill_1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f"
	long := map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)}
	shared := rillDatabaseName(rillID, long)
	if shared != rillDatabaseName("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", long) {
		t.Fatal("the two resources must get one name from Rill's rule")
	}
	fake, p := onFake(t)
	fake.users, fake.databases = []string{"default", user, other}, []string{"default", shared}
	fake.defaultDBs = map[string]string{user: shared, other: shared}
	_, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), "`"+other+"`") || !strings.Contains(err.Error(), "`"+shared+"`") ||
		!strings.Contains(err.Error(), "`rill_"+rillIDAlnum+"`") {
		t.Fatalf("got %v; want a refusal naming database %s, the other user %s and a database name of its own", err, shared, other)
	}
	// Given the database the refusal suggests, the import adopts it.
	fake.databases = append(fake.databases, "rill_"+rillIDAlnum)
	fake.defaultDBs = map[string]string{user: "rill_" + rillIDAlnum, other: shared}
	if got, err := p.CheckResource(context.Background(), newResource(rillID), nil); err != nil || got.Config["database"] != "rill_"+rillIDAlnum {
		t.Fatalf("with a database of its own: %v, %+v", err, got)
	}
	fake.databases = fake.databases[:len(fake.databases)-1]
	// Alone, it is adopted.
	fake.defaultDBs = map[string]string{user: shared}
	if got, err := p.CheckResource(context.Background(), newResource(rillID), nil); err != nil || got.Config["database"] != shared {
		t.Fatalf("database of this user only: %v, %+v", err, got)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the import wrote: %q", fake.statements())
	}
}

// A user adopted alone whose database Rill's rule would cut before the ID (a long org and project
// name) does not get that name from the update: it may be another resource's database (Rill gives
// one to all the resources of such a project), which the update would grant it and its destroy
// drop. It gets ours, which keeps the whole ID.
func TestUpdateOfARillUserAdoptedAloneNeverCreatesAnotherResourcesDatabase_fake(t *testing.T) {
	user := "rill_" + rillIDAlnum
	long := map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)}
	fake, p := onFake(t)
	fake.users = []string{user}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: provisioner.WithoutObservations(got.State), Config: got.Config}
	updated, err := p.Provision(context.Background(), r, &provisioner.ResourceOptions{Annotations: long})
	if err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	if strings.Contains(stmts, "`"+rillDatabaseName(rillID, long)+"`") || !strings.Contains(stmts, "CREATE DATABASE IF NOT EXISTS `"+databaseName(rillID, long)+"`") ||
		updated.Config["database"] != databaseName(rillID, long) || updated.Config["user"] != user {
		t.Fatalf("config %v, statements:\n%s", updated.Config, stmts)
	}
}

// Rill names the user after the ID as given (rill_<alnum>, case kept) and the database after its
// lowercase. Rill's IDs are lowercase UUIDs (PostgreSQL's), so an import by the same ID in capitals
// found Rill's database but not its user: it adopted the database alone, said the user was missing,
// and the update created a second user rill_<ID in capitals> on it, leaving Rill's user (its password
// working) to nobody once a destroy dropped the database. It is an error that gives the ID to import.
func TestImportOfARillIDInCapitalsSaysToUseItsLowercase_fake(t *testing.T) {
	user, db := "rill_"+rillIDAlnum, "rill_acme_web_"+rillIDAlnum
	fake, p := onFake(t)
	fake.users, fake.databases, fake.defaultDBs = []string{"default", user}, []string{"default", db}, map[string]string{user: db}
	_, err := p.CheckResource(context.Background(), newResource(strings.ToUpper(rillID)), nil)
	if err == nil || errors.Is(err, provisioner.ErrResourceNotFound) || !strings.Contains(err.Error(), rillID) {
		t.Fatalf("got %v; want an error that names the ID in lowercase, %s", err, rillID)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the import wrote: %q", fake.statements())
	}
}

// A server from 20.4 to 21.8 has system.users but no default_database column (ClickHouse 21.9 added
// it; Rill's admin service needs 24.9): an import whose ID has nothing on it is "does not exist", as
// before the lookup of Rill's names, not ClickHouse's "Missing columns" error; a database under
// Rill's name is still found by its name.
func TestImportOnAServerWithoutDefaultDatabaseColumn_fake(t *testing.T) {
	fake, p := onFake(t)
	fake.defaultDBErr = exception(47, "Missing columns: 'default_database' while processing query")
	fake.users, fake.databases = []string{"default"}, []string{"default"}
	if _, err := p.CheckResource(context.Background(), newResource(rillID), nil); !errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("nothing there: got %v, want gone", err)
	}
	db := "rill_acme_web_" + rillIDAlnum
	fake.databases = []string{"default", db}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if u, _ := got.Config["user"].(string); err != nil || got.Config["database"] != db || u != "" {
		t.Fatalf("Rill's database by name: %v, %+v", err, got)
	}
	fake.users = []string{"default", "rill_" + rillIDAlnum}
	if got, err = p.CheckResource(context.Background(), newResource(rillID), nil); err != nil || got.Config["database"] != db || got.Config["user"] != "rill_"+rillIDAlnum {
		t.Fatalf("Rill's user and database: %v, %+v", err, got)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the import wrote: %q", fake.statements())
	}
}

// The database of an adopted resource whose name Rill cut before the ID is the one Rill's rule gives
// every resource of its project: Rill gives a deployment it creates there after the import the same
// database. A destroy then refuses to drop it, naming the other user, instead of dropping its data.
func TestDestroyOfAnAdoptedDatabaseRillGaveAnotherResourceSinceRefuses_fake(t *testing.T) {
	user, other := "rill_"+rillIDAlnum, "rill_1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f"
	shared := rillDatabaseName(rillID, map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)})
	fake, p := onFake(t)
	fake.users, fake.databases = []string{"default", user, other}, []string{"default", shared}
	fake.defaultDBs = map[string]string{user: shared, other: shared}
	adopted := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse,
		State:  map[string]any{stateUser: user, stateDatabase: shared, stateCluster: ""},
		Config: (&provisioner.ClickhouseConfig{User: user, Database: shared}).AsMap()}
	err := p.Deprovision(context.Background(), adopted)
	if err == nil || !strings.Contains(err.Error(), "`"+other+"`") || !strings.Contains(err.Error(), "`"+shared+"`") {
		t.Fatalf("got %v; want a refusal naming database %s and user %s", err, shared, other)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the refused destroy ran: %q", fake.statements())
	}
	// Its own alone, it goes.
	fake.defaultDBs = map[string]string{user: shared}
	if err := p.Deprovision(context.Background(), adopted); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fake.statements(), "\n"); got != "DROP USER IF EXISTS `"+user+"`\nDROP DATABASE IF EXISTS `"+shared+"`" {
		t.Fatalf("destroy ran:\n%s", got)
	}
}

// A user whose default database is gone while a database Rill's rule gives the ID is on the server
// (renamed by hand, say after a project rename: ClickHouse keeps the user's default_database as it
// was) is adopted with that database. The import adopted the user alone, the apply created an empty
// database under the old name, and the renamed one, with the data, was left to nobody, a destroy
// included. A renamed database that keeps too little of the ID to say whose it is is not taken.
func TestImportOfARillUserWhoseDatabaseWasRenamedAdoptsTheRenamedDatabase_fake(t *testing.T) {
	user := "rill_" + rillIDAlnum
	renamed := "rill_acme_webapp_" + rillIDAlnum
	lostOther := rillDatabaseName("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)})
	fake, p := onFake(t)
	fake.users, fake.databases = []string{"default", user}, []string{"default", renamed, lostOther}
	fake.defaultDBs = map[string]string{user: "rill_acme_web_" + rillIDAlnum}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config["database"] != renamed || got.Config["user"] != user || got.State[stateDatabase] != renamed {
		t.Fatalf("config %v, state %v; want user %s with the renamed database %s", got.Config, got.State, user, renamed)
	}
	if len(fake.statements()) != 0 {
		t.Fatalf("the import wrote: %q", fake.statements())
	}
	// The apply makes it the user's default database, and creates no other.
	r := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: provisioner.WithoutObservations(got.State), Config: got.Config}
	if _, err := p.Provision(context.Background(), r, &provisioner.ResourceOptions{Annotations: map[string]string{"organization_name": "acme", "project_name": "web"}}); err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	if strings.Contains(stmts, "rill_acme_web_") || !strings.Contains(stmts, "DEFAULT DATABASE `"+renamed+"`") {
		t.Fatalf("statements:\n%s", stmts)
	}

	// Only a database cut too short to say whose it is: the user alone, as before.
	fake, p = onFake(t)
	fake.users, fake.databases = []string{"default", user}, []string{"default", lostOther}
	fake.defaultDBs = map[string]string{user: "rill_acme_web_" + rillIDAlnum}
	got, err = p.CheckResource(context.Background(), newResource(rillID), nil)
	if cfg, _ := provisioner.NewClickhouseConfig(got.Config); err != nil || cfg.Database != "" || cfg.User != user {
		t.Fatalf("only another project's shared database: %v, %+v", err, got)
	}
	// Two renamed databases: an error naming them, never one picked.
	fake.databases = []string{"default", renamed, "rill_acme_site_" + rillIDAlnum}
	if _, err = p.CheckResource(context.Background(), newResource(rillID), nil); err == nil || !strings.Contains(err.Error(), renamed) || errors.Is(err, provisioner.ErrResourceNotFound) {
		t.Fatalf("two candidates: %v", err)
	}
}

// A user adopted without a database (its default database gone, none renamed to another name Rill's
// rule gives the ID) gets a database from the apply, empty. The warning said "Adopting ... user X and
// database Y" as if Y, with the deployment's tables, were there, and the plan's diff shows only an
// unknown name: it says that the database is missing and the apply creates it empty.
func TestImportOfARillUserWithoutItsDatabaseWarnsThatTheApplyCreatesItEmpty_fake(t *testing.T) {
	user, gone := "rill_"+rillIDAlnum, "rill_acme_web_"+rillIDAlnum
	fake, p := onFake(t)
	fake.users, fake.databases, fake.defaultDBs = []string{"default", user}, []string{"default"}, map[string]string{user: gone}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := provisioner.NewRuntimeObservation(got.State).Warnings
	if len(w) != 1 || strings.Contains(w[0], "and database") || !strings.Contains(w[0], "creates its database `"+gone+"`") || !strings.Contains(w[0], "empty") {
		t.Fatalf("warnings %q; want one saying that database %s is missing and the apply creates it empty", w, gone)
	}
	// Both there: no such sentence.
	fake.databases = []string{"default", gone}
	got, err = p.CheckResource(context.Background(), newResource(rillID), nil)
	if w = provisioner.NewRuntimeObservation(got.State).Warnings; err != nil || len(w) != 1 || strings.Contains(w[0], "empty") || !strings.Contains(w[0], "and database `"+gone+"`") {
		t.Fatalf("%v, warnings %q", err, w)
	}
}

// A Rill user adopted alone whose database Rill's rule cuts before the ID gets ours from the apply
// (TestUpdateOfARillUserAdoptedAloneNeverCreatesAnotherResourcesDatabase_fake), which becomes its
// DEFAULT DATABASE. After `terraform state rm`, the import found our database first and not Rill's
// user: it adopted the database alone, the apply created a second user (ours) on it, and the destroy
// left Rill's user, with its password and grants, to nobody. The import takes Rill's user when its
// default database is the one of ours found; any other Rill user is not looked at.
func TestReimportOfARillUserGivenOurDatabaseKeepsRillsUser_fake(t *testing.T) {
	user := "rill_" + rillIDAlnum
	long := map[string]string{"organization_name": strings.Repeat("o", 40), "project_name": strings.Repeat("p", 40)}
	ours := databaseName(rillID, long)
	fake, p := onFake(t)
	fake.users, fake.databases, fake.defaultDBs = []string{"default", user}, []string{"default", ours}, map[string]string{user: ours}
	got, err := p.CheckResource(context.Background(), newResource(rillID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config["user"] != user || got.Config["database"] != ours || got.State[stateUser] != user {
		t.Fatalf("config %v, state %v; want Rill's user %s with our database %s", got.Config, got.State, user, ours)
	}
	r := &provisioner.Resource{ID: rillID, Type: provisioner.ResourceTypeClickHouse, State: provisioner.WithoutObservations(got.State), Config: got.Config}
	if _, err := p.Provision(context.Background(), r, &provisioner.ResourceOptions{Annotations: long}); err != nil {
		t.Fatal(err)
	}
	if err := p.Deprovision(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	stmts := strings.Join(fake.statements(), "\n")
	if strings.Contains(stmts, "`"+userName(rillID)+"`") || !strings.Contains(stmts, "DROP USER IF EXISTS `"+user+"`") || !strings.Contains(stmts, "DROP DATABASE IF EXISTS `"+ours+"`") {
		t.Fatalf("statements:\n%s", stmts)
	}

	// Rill's user with another default database: the database alone, as any import of ours.
	fake, p = onFake(t)
	fake.users, fake.databases, fake.defaultDBs = []string{"default", user}, []string{"default", ours}, map[string]string{user: "rill_" + rillIDAlnum}
	got, err = p.CheckResource(context.Background(), newResource(rillID), nil)
	if cfg, _ := provisioner.NewClickhouseConfig(got.Config); err != nil || cfg.User != "" || cfg.Database != ours || got.State[stateUser] != userName(rillID) {
		t.Fatalf("%v, %+v", err, got)
	}
}
