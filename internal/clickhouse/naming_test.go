package clickhouse

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

const testUUID = "0b5e4c1a-7d2f-4e3b-9a1c-2f6d8e0a4b7c"

var validName = regexp.MustCompile(`^[a-z0-9_]+$`)

func TestSanitizeKeepsOnlyLowercaseAlphanumericsAndSingleUnderscores(t *testing.T) {
	cases := map[string]string{
		"Acme":                  "acme",
		"ACME Corp.":            "acme_corp",
		"a--b__c  d":            "a_b_c_d",
		"__x__":                 "x",
		"":                      "",
		"'; DROP USER admin;--": "drop_user_admin",
		"`x`":                   "x",
		"Zürich Ünïcødé 日本":     "z_rich_n_c_d",
		"\x00\n\t":              "",
		"tab\tnew\nline":        "tab_new_line",
	}
	for in, want := range cases {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDatabaseNameForAUUIDKeepsTheWholeID(t *testing.T) {
	got := databaseName(testUUID, map[string]string{"organization_name": "Acme", "project_name": "Sales Dashboards"})
	want := "rill_acme_sales_dashboards_0b5e4c1a_7d2f_4e3b_9a1c_2f6d8e0a4b7c"
	if got != want {
		t.Fatalf("databaseName = %q, want %q", got, want)
	}
	if u := userName(testUUID); u != "rill_0b5e4c1a_7d2f_4e3b_9a1c_2f6d8e0a4b7c" {
		t.Fatalf("userName = %q", u)
	}
}

func TestDatabaseNameAcceptsTheShortAnnotationKeys(t *testing.T) {
	short := databaseName(testUUID, map[string]string{"organization": "acme", "project": "web"})
	long := databaseName(testUUID, map[string]string{"organization_name": "acme", "project_name": "web"})
	if short != long || !strings.HasPrefix(short, "rill_acme_web_") {
		t.Fatalf("short keys gave %q, long keys %q", short, long)
	}
	// The *_name keys win when both are present.
	both := databaseName(testUUID, map[string]string{"organization_name": "a", "organization": "b", "project_name": "c", "project": "d"})
	if !strings.HasPrefix(both, "rill_a_c_") {
		t.Fatalf("both keys gave %q", both)
	}
}

func TestDatabaseNameStaysSafeWithHostileAnnotations(t *testing.T) {
	long := strings.Repeat("x", 300)
	hostile := []string{
		"", " ", "'", "''", "\\'", "`", "``", "; DROP DATABASE system; --", "a'); DROP USER default; --",
		"рус", "日本語", "emoji 🎉🎉", "\x00", "\u202e", "ＡＢＣ", long, strings.Repeat("ä", 300), strings.Repeat("_", 300),
		"A" + strings.Repeat("-", 100) + "B",
	}
	ids := []string{testUUID, "short", "", "Some ID; with `stuff`", strings.Repeat("9", 300), strings.Repeat("é", 300)}
	for _, id := range ids {
		for _, org := range hostile {
			for _, project := range hostile {
				name := databaseName(id, map[string]string{"organization_name": org, "project_name": project})
				if !validName.MatchString(name) || len(name) > maxNameLen || strings.Contains(name, "__") {
					t.Fatalf("databaseName(%q, org %q, project %q) = %q: want [a-z0-9_], no '__', at most %d chars", id, org, project, name, maxNameLen)
				}
				if !strings.HasPrefix(name, namePrefix) || !strings.HasSuffix(name, idPart(id)) {
					t.Fatalf("databaseName(%q, ...) = %q does not keep the whole id part %q", id, name, idPart(id))
				}
				if !ownsDatabaseName(id, name) {
					t.Fatalf("ownsDatabaseName(%q, %q) = false for a name we generated", id, name)
				}
			}
		}
		if u := userName(id); !validName.MatchString(u) || len(u) > maxNameLen {
			t.Fatalf("userName(%q) = %q", id, u)
		}
	}
}

func TestDatabaseNameShortensOrgAndProjectFairly(t *testing.T) {
	name := databaseName(testUUID, map[string]string{"organization_name": strings.Repeat("o", 300), "project_name": strings.Repeat("p", 300)})
	if len(name) != maxNameLen {
		t.Fatalf("%q has %d chars, want exactly %d", name, len(name), maxNameLen)
	}
	if !strings.Contains(name, "_oooooooooo_pppppppppp_") {
		t.Fatalf("%q: org and project should share the room", name)
	}
	// A short project leaves its unused room to the org.
	name = databaseName(testUUID, map[string]string{"organization_name": strings.Repeat("o", 300), "project_name": "p"})
	if len(name) != maxNameLen || !strings.Contains(name, "_p_") {
		t.Fatalf("%q: want the org to take the room the project does not need", name)
	}
	// Empty parts are left out rather than leaving "__".
	if got := databaseName(testUUID, nil); got != "rill_"+idPart(testUUID) {
		t.Fatalf("no annotations gave %q", got)
	}
	if got := databaseName(testUUID, map[string]string{"project_name": "web"}); got != "rill_web_"+idPart(testUUID) {
		t.Fatalf("project only gave %q", got)
	}
}

func TestIDsThatSanitizeAlikeStillGetDistinctNames(t *testing.T) {
	ids := []string{"A-b", "a_b", "a b", "a-b", "A_B", "", " ", "x", "X", testUUID, strings.ToUpper(testUUID)}
	seen := map[string]string{}
	for _, id := range ids {
		for _, name := range []string{userName(id), databaseName(id, map[string]string{"organization_name": "o", "project_name": "p"})} {
			if other, dup := seen[name]; dup {
				t.Fatalf("ids %q and %q both give %q", other, id, name)
			}
			seen[name] = id
		}
	}
}

func TestDatabaseNamesCannotBeForgedThroughAnnotations(t *testing.T) {
	// An ID whose part is a suffix of another's, with annotations chosen to fill the gap, must still
	// not produce the same database name.
	a := databaseName("x-y", map[string]string{"organization_name": "o", "project_name": "p"})
	b := databaseName("y", map[string]string{"organization_name": "o", "project_name": "p_x"})
	if a == b {
		t.Fatalf("two IDs share database %q", a)
	}
	uuid2 := "1b5e4c1a-7d2f-4e3b-9a1c-2f6d8e0a4b7c"
	if ownsDatabaseName(uuid2, databaseName(testUUID, nil)) || ownsDatabaseName(testUUID, databaseName(uuid2, map[string]string{"project_name": "q"})) {
		t.Fatal("a resource claims another resource's database")
	}
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("id-%d", i)
		other := fmt.Sprintf("id-%d", i+1)
		if ownsDatabaseName(id, databaseName(other, map[string]string{"organization_name": id})) {
			t.Fatalf("resource %q claims the database of %q", id, other)
		}
	}
}

func TestOwnsDatabaseNameRefusesForeignNames(t *testing.T) {
	for _, name := range []string{"default", "system", "rill_", "rill_" + idPart(testUUID) + "x", "RILL_" + idPart(testUUID), "rill__" + idPart(testUUID), "`rill_" + idPart(testUUID) + "`"} {
		if ownsDatabaseName(testUUID, name) {
			t.Errorf("ownsDatabaseName(%q) = true", name)
		}
	}
}

func TestQuotingEscapesBackticksQuotesAndBackslashes(t *testing.T) {
	cases := []struct{ in, ident, str string }{
		{"plain", "`plain`", "'plain'"},
		{"a`b", "`a\\`b`", "'a`b'"},
		{"a'b", "`a'b`", "'a\\'b'"},
		{`a\b`, "`a\\\\b`", `'a\\b'`},
		{`\'; DROP`, "`\\\\'; DROP`", `'\\\'; DROP'`},
		{"", "``", "''"},
	}
	for _, c := range cases {
		if got := quoteIdent(c.in); got != c.ident {
			t.Errorf("quoteIdent(%q) = %s, want %s", c.in, got, c.ident)
		}
		if got := quoteString(c.in); got != c.str {
			t.Errorf("quoteString(%q) = %s, want %s", c.in, got, c.str)
		}
	}
}

func TestPasswordsAreLongRandomAndAlphanumeric(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		p, err := newPassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) < 32 || !regexp.MustCompile(`^[A-Za-z0-9]+$`).MatchString(p) {
			t.Fatalf("password %q: want 32+ alphanumerics", p)
		}
		if seen[p] {
			t.Fatal("password repeated")
		}
		seen[p] = true
	}
}

// modernServer is what ClickHouse 24.9 and newer support; chDB's 26.7 parser checks these statements in
// TestIntegrationProvisionStatementsParseOnARealServer.
var modernServer = &serverFeatures{version: "25.8.1.1", userOptions: true, addIdentified: true, sourcePrivileges: sourcePrivileges}

func TestProvisionStatementsQuoteEverythingAndRunOnCluster(t *testing.T) {
	const comment = `{"note":"it's a \\ back'slash"}`
	got, finish := provisionStatements("rill_a_b_id", "rill_id", "pw'd", "my`cluster", comment, modernServer)
	on := " ON CLUSTER `my\\`cluster`"
	want := []string{
		"CREATE DATABASE IF NOT EXISTS `rill_a_b_id`" + on + ` COMMENT '{"note":"it\'s a \\\\ back\'slash"}'`,
		"CREATE USER IF NOT EXISTS `rill_id`" + on + " IDENTIFIED WITH sha256_password BY 'pw\\'d' DEFAULT DATABASE `rill_a_b_id` GRANTEES NONE",
		"ALTER USER `rill_id`" + on + " ADD IDENTIFIED WITH sha256_password BY 'pw\\'d'",
		"GRANT" + on + " " + databasePrivileges + " ON `rill_a_b_id`.* TO `rill_id`",
		"GRANT" + on + " SELECT ON system.parts TO `rill_id`",
		"GRANT" + on + " CLUSTER, URL, REMOTE, MONGO, MYSQL, POSTGRES, S3, AZURE ON *.* TO `rill_id`",
	}
	wantFinish := []string{"ALTER USER `rill_id`" + on + " IDENTIFIED WITH sha256_password BY 'pw\\'d' DEFAULT DATABASE `rill_a_b_id` GRANTEES NONE"}
	checkStatements(t, got, want)
	checkStatements(t, finish, wantFinish)

	// Older servers: no COMMENT, DEFAULT DATABASE or GRANTEES before 21.11; one password per user
	// before 24.9, so ALTER USER replaces it at once; source grants only as system.privileges lists them.
	old := &serverFeatures{version: "23.8.1.1", userOptions: true, sourcePrivileges: []string{"URL", "S3"}}
	got, finish = provisionStatements("db", "u", "p", "", "{}", old)
	checkStatements(t, got, []string{
		"CREATE DATABASE IF NOT EXISTS `db` COMMENT '{}'",
		"CREATE USER IF NOT EXISTS `u` IDENTIFIED WITH sha256_password BY 'p' DEFAULT DATABASE `db` GRANTEES NONE",
		"ALTER USER `u` IDENTIFIED WITH sha256_password BY 'p' DEFAULT DATABASE `db` GRANTEES NONE",
		"GRANT " + databasePrivileges + " ON `db`.* TO `u`",
		"GRANT SELECT ON system.parts TO `u`",
		"GRANT URL, S3 ON *.* TO `u`",
	})
	checkStatements(t, finish, nil)
	got, _ = provisionStatements("db", "u", "p", "", "{}", &serverFeatures{version: "21.3.1.1"})
	checkStatements(t, got, []string{
		"CREATE DATABASE IF NOT EXISTS `db`",
		"CREATE USER IF NOT EXISTS `u` IDENTIFIED WITH sha256_password BY 'p'",
		"ALTER USER `u` IDENTIFIED WITH sha256_password BY 'p'",
		"GRANT " + databasePrivileges + " ON `db`.* TO `u`",
		"GRANT SELECT ON system.parts TO `u`",
	})

	drop := deprovisionStatements([]string{"db"}, "u", "c")
	if drop[0].sql != "DROP USER IF EXISTS `u` ON CLUSTER `c`" || drop[1].sql != "DROP DATABASE IF EXISTS `db` ON CLUSTER `c`" {
		t.Fatalf("deprovision: %q / %q", drop[0].sql, drop[1].sql)
	}
}

func checkStatements(t *testing.T, got []statement, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d statements, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i].sql != want[i] {
			t.Errorf("statement %d:\n got %s\nwant %s", i, got[i].sql, want[i])
		}
		if strings.Contains(got[i].what, "pw") || strings.Contains(got[i].what, "'p'") {
			t.Errorf("description %q mentions the password", got[i].what)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"18.16.1": false, "20.3.9": false, "20.4.2": true, "24.8.1.2684": true, "weird": true} {
		if got := versionAtLeast(v, 20, 4); got != want {
			t.Errorf("versionAtLeast(%q) = %v", v, got)
		}
	}
}
