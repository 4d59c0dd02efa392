package resources_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// The GitOps guide's plan role: pull requests plan with a PostgreSQL role that may only SELECT the
// ledger (the guide's GRANT, as written), the merge applies with the writing role. Through the real
// CLI, on one configuration and state: the reader's plan of the applied configuration is empty; its
// plan of a changed one (a runtime added, one grown, one deleted outside Terraform) shows the
// changes, with the capacity reads and rill_allocations answered; its apply is refused with the
// privileges hint and leaves the ledger as it was; the writer's apply then converges.
func TestAccRuntime_pullRequestPlansWithAReadOnlyLedgerRole(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := pgtest.Shared(t)
	guide, err := os.ReadFile(gitopsGuidePath)
	if err != nil {
		t.Fatal(err)
	}
	grant := regexp.MustCompile("`(GRANT SELECT ON [^`]+\n?[^`]*TO rill_plan)`").FindSubmatch(guide)
	if grant == nil {
		t.Fatalf("%s has no `GRANT SELECT ON ... TO rill_plan`", gitopsGuidePath)
	}
	role := fmt.Sprintf("rill_plan_%d", os.Getpid()) // roles are the cluster's, shared by the test binaries
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close(ctx) })

	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://plan-role.test:9091", "slots": 4}]}}}`
	writer := acctest.NewWorkspace(t, "RILL_LEDGER_DSN="+ledger)
	writer.Write("main.tf", acctest.CLIHeader("", set)+acctest.RuntimeBlock("named", 1, `name = "plan-role"`)+acctest.RuntimeBlock("unnamed", 1)+`
data "rill_allocations" "pool" {}
`)
	writer.Must("apply", "-auto-approve")
	t.Cleanup(func() {
		if out, err := writer.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
	})

	for _, q := range []string{"CREATE ROLE " + role + " LOGIN", strings.ReplaceAll(strings.ReplaceAll(string(grant[1]), "\n", " "), "rill_plan", role)} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP OWNED BY "+role)
		_, _ = admin.Exec(ctx, "DROP ROLE "+role)
	})
	u, err := url.Parse(ledger)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	reader := acctest.WorkspaceIn(t, writer.Dir, "RILL_LEDGER_DSN="+u.String())

	if out := reader.Must("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("the reader's plan of the applied configuration is not empty:\n%s", acctest.Tail(out))
	}

	writer.Write("main.tf", acctest.CLIHeader("", set)+acctest.RuntimeBlock("named", 2, `name = "plan-role"`)+
		acctest.RuntimeBlock("unnamed", 1)+acctest.RuntimeBlock("more", 1)+`
data "rill_allocations" "pool" {}
`)
	if _, err := admin.Exec(ctx, "DELETE FROM allocations WHERE name IS NULL"); err != nil {
		t.Fatal(err)
	}
	before, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	out, err := reader.Run("plan", "-detailed-exitcode")
	for _, want := range []string{"rill_runtime.more will be created", "rill_runtime.unnamed will be created", "rill_runtime.named will be updated in-place", "Plan: 2 to add, 1 to change, 0 to destroy."} {
		if !strings.Contains(out, want) {
			t.Errorf("the reader's plan (%v) does not say %q:\n%s", err, want, acctest.Tail(out))
		}
	}

	out, err = reader.Run("apply", "-auto-approve")
	if err == nil || !acctest.WordsRegexp("permission denied for table allocations").MatchString(out) ||
		!acctest.WordsRegexp("the ledger's role (the DSN's user) lacks a privilege this needs").MatchString(out) {
		t.Errorf("the reader's apply should be refused for want of privileges (%v):\n%s", err, acctest.Tail(out))
	}
	after, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("the refused apply changed the ledger: %s, was %s", describeAllocations(after), describeAllocations(before))
	}

	writer.Must("apply", "-auto-approve")
	if out := reader.Must("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("after the writer's apply the reader's plan is not empty:\n%s", acctest.Tail(out))
	}
	writer.CheckStateEqualsLedger(ledger, 3)
}
