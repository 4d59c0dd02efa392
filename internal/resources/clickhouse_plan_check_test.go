package resources_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
)

// The plan of a new rill_clickhouse on a server that cannot manage users by SQL fails, through the
// real CLI, with the reason the apply gives (naming the server by its address) and "nothing was
// created", and nothing is: the server's databases are the same after the plan. The server is chDB's
// ClickHouse 26.7 (users in users.xml only: no writable user directory). Which servers CheckCreate
// refuses, and why, is the provisioner's (TestIntegrationServerWithoutSQLUserManagementIsRefusedClearly
// in internal/clickhouse, against chDB and against Debian's clickhouse-server 18.16 in make
// test-all); what this test adds, a refusal turned into a failed plan, is the same for every server.
func TestAccClickHouse_planOfACreateOnAServerThatCannotManageUsersFails(t *testing.T) {
	acctest.RequireAcc(t)
	dsn := chdbtest.Start(t).AdminDSN
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	before := databasesOn(t, dsn)
	entry := fmt.Sprintf(`"ch": {"type": "clickhouse-static", "spec": {"dsn": %q}}`, dsn)
	// The error as Terraform wraps it: the words, whatever the line breaks.
	var parts []string
	for _, s := range []string{"Provisioner cannot create this resource", "cannot manage users by SQL", "at " + u.Host, "has no writable user directory", "nothing was created"} {
		parts = append(parts, acctest.WordsRegexp(s).String())
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderBlock(acctest.SQLiteLedger(t), "", entry) + clickhouseBlock,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(strings.Join(parts, `[\s\S]*`)),
		}},
	})
	if after := databasesOn(t, dsn); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("the plan changed the server's databases: %v -> %v", before, after)
	}
}

// databasesOn lists the databases of the server at an admin DSN.
func databasesOn(t *testing.T, dsn string) []string {
	t.Helper()
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := conn.Query(ctx, "SELECT name FROM system.databases")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}
