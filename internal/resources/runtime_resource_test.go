package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

var (
	hostA = acctest.Host{URL: "http://runtime-a.test:9091", Slots: 4}
	hostB = acctest.Host{URL: "http://runtime-b.test:9091", Slots: 4}
)

func threeRuntimes(ledger string, slotsOfFirst int) string {
	return acctest.ProviderBlock(ledger, "", acctest.Pool("static-pool", hostA, hostB)) + fmt.Sprintf(`
resource "rill_runtime" "first" {
  slots       = %d
  environment = "prod"
  annotations = { organization_name = "acme", project_name = "first" }
}
resource "rill_runtime" "second" {
  slots = 1
}
resource "rill_runtime" "third" {
  slots = 1
}
`, slotsOfFirst)
}

// Three runtimes on a two-host pool: hosts read back from the ledger, the second plan is empty, slots
// change in place, import round-trips, an allocation removed out of band is re-created, and destroy
// frees every slot.
func TestAccRuntime_staticPoolLifecycle(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	var firstID, firstHost string

	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			Config: threeRuntimes(ledger, 1),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("provisioner_name"), knownvalue.StringExact("static-pool")),
				statecheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("cpu"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("memory_gb"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("storage_bytes"), knownvalue.Int64Exact(40<<30)),
				statecheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("hibernated"), knownvalue.Bool(false)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				acctest.CheckLedgerMatchesState(ledger),
				resource.TestMatchResourceAttr("rill_runtime.second", "host", hostRegexp),
				resource.TestMatchResourceAttr("rill_runtime.third", "audience", audienceRegexp),
				// Spread placement: three one-slot runtimes on two empty hosts use both hosts.
				checkHostsUsed(2),
				func(s *terraform.State) error {
					rs := s.RootModule().Resources["rill_runtime.first"]
					firstID, firstHost = rs.Primary.ID, rs.Primary.Attributes["host"]
					return nil
				},
			),
		},
		{
			// The same configuration again plans nothing.
			Config: threeRuntimes(ledger, 1),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
		{
			// Growing a runtime resizes it in place on its host.
			Config: threeRuntimes(ledger, 3),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.first", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("rill_runtime.first", tfjsonpath.New("cpu"), knownvalue.Int64Exact(3)),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				acctest.CheckLedgerMatchesState(ledger),
				resource.TestCheckResourceAttr("rill_runtime.first", "memory_gb", "12"),
				func(s *terraform.State) error {
					rs := s.RootModule().Resources["rill_runtime.first"]
					if rs.Primary.ID != firstID || rs.Primary.Attributes["host"] != firstHost {
						return fmt.Errorf("resize moved the runtime: was %s on %s, now %s on %s", firstID, firstHost, rs.Primary.ID, rs.Primary.Attributes["host"])
					}
					return nil
				},
			),
		},
		// Import by "<provisioner>/<id>" reads back the same attributes, environment and
		// annotations included (the ledger records them).
		acctest.ImportVerifyStep("rill_runtime.first"),
		{
			// An allocation removed from the ledger out of band is planned for re-creation.
			PreConfig: func() {
				db := ledgertest.Open(t, ledger)
				if existed, err := db.DeleteAllocation(context.Background(), firstID); err != nil || !existed {
					t.Fatalf("deleting the allocation out of band: existed=%v err=%v", existed, err)
				}
			},
			Config: threeRuntimes(ledger, 3),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.first", plancheck.ResourceActionCreate)},
			},
			Check: acctest.CheckLedgerMatchesState(ledger),
		},
	}))
}

// Changing a runtime's provisioner replaces it: the new pool allocates, the old one is freed. So
// does a provisioner_name that is unknown at plan time (another resource's attribute): planned as an
// update, the apply found another provisioner and Terraform failed it ("Provider produced
// inconsistent final plan", found by a walkthrough driving provisioner_name from terraform_data).
func TestAccRuntime_provisionerChangeReplaces(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	poolOne := acctest.Pool("pool-one", acctest.Host{URL: "http://one.test:9091", Slots: 2})
	poolTwo := acctest.Pool("pool-two", acctest.Host{URL: "http://two.test:9091", Slots: 2})
	cfgExpr := func(expr, extra string) string {
		return acctest.ProviderBlock(ledger, "pool-one", poolOne, poolTwo) + extra + fmt.Sprintf(`
resource "rill_runtime" "rt" {
  provisioner_name = %s
  slots            = 1
}
`, expr)
	}
	cfg := func(name string) string { return cfgExpr(strconv.Quote(name), "") }
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			Config: cfg("pool-one"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://one.test:9091"),
				acctest.CheckLedgerMatchesState(ledger),
			),
		},
		{
			Config: cfg("pool-two"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionDestroyBeforeCreate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://two.test:9091"),
				acctest.CheckLedgerMatchesState(ledger),
			),
		},
		{
			Config: cfgExpr("terraform_data.pool.output", "resource \"terraform_data\" \"pool\" {\n  input = \"pool-one\"\n}\n"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionDestroyBeforeCreate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://one.test:9091"),
				acctest.CheckLedgerMatchesState(ledger),
			),
		},
	}))
}

// An environment that is unknown at plan time (another resource's attribute) beside an "environment"
// annotation is checked once it is known: null passes; a value is the conflict it is, at apply. It
// failed the plan whatever it turned out to be (found by a walkthrough).
func TestAccRuntime_anEnvironmentUnknownAtPlanIsCheckedOnceKnown(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	cfg := func(env string) string {
		return acctest.ProviderBlock(ledger, "", acctest.Pool("p", acctest.Host{URL: "http://env.test:9091", Slots: 2})) + fmt.Sprintf(`
resource "terraform_data" "env" {
  input = %s
}
resource "rill_runtime" "rt" {
  slots       = 1
  environment = terraform_data.env.output
  annotations = { environment = "dev" }
}
`, env)
	}
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			Config: cfg("null"),
			Check:  resource.TestCheckResourceAttr("rill_runtime.rt", "annotations.environment", "dev"),
		},
		{
			Config:      cfg(`"prod"`),
			ExpectError: acctest.WordsRegexp(`Conflicting environment`),
		},
	}))
}

// A pool without room fails the apply, naming the free slots of every host; a runtime that cannot
// grow on its host says so; nothing is allocated by the failed attempts.
func TestAccRuntime_exhaustedPool(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	small := acctest.Pool("small", acctest.Host{URL: "http://h1.test:9091", Slots: 2}, acctest.Host{URL: "http://h2.test:9091", Slots: 1})
	one := acctest.ProviderBlock(ledger, "", small) + `
resource "rill_runtime" "big" {
  slots = 2
}
`
	var before map[string]*database.Allocation
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			Config: one,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.big", "host", "http://h1.test:9091"),
				func(*terraform.State) (err error) {
					before, err = acctest.LedgerAllocations(ledger)
					return err
				},
			),
		},
		{
			Config: one + `
resource "rill_runtime" "too_big" {
  slots = 2
}
`,
			ExpectError: acctest.WordsRegexp("no runtimes found with sufficient available slots: 2 slot(s) requested; free slots per host: http://h1.test:9091 0 of 2, http://h2.test:9091 1 of 1"),
		},
		{
			Config: acctest.ProviderBlock(ledger, "", small) + `
resource "rill_runtime" "big" {
  slots = 3
}
`,
			ExpectError: acctest.WordsRegexp("cannot resize in place: host http://h1.test:9091 needs 1 more free slot(s)"),
		},
		{
			// The failed attempts left the ledger as it was: compared before anything refreshes or
			// applies, which would repair what they changed.
			PreConfig: func() {
				after, err := acctest.LedgerAllocations(ledger)
				if err != nil {
					t.Fatal(err)
				}
				if b, a := describeAllocations(before), describeAllocations(after); a != b {
					t.Fatalf("the failed attempts changed the ledger:\nbefore %s\nafter  %s", b, a)
				}
			},
			Config: one,
			Check:  acctest.CheckLedgerMatchesState(ledger),
		},
	}))
}

// describeAllocations lists a ledger's allocations by resource ID, for failure messages.
func describeAllocations(allocs map[string]*database.Allocation) string {
	var rows []string
	for id, a := range allocs {
		rows = append(rows, fmt.Sprintf("%s on %s (%d slots, updated %s)", id, a.Host, a.Slots, a.UpdatedAt.Format(time.RFC3339Nano)))
	}
	sort.Strings(rows)
	return fmt.Sprintf("%d: %s", len(rows), strings.Join(rows, "; "))
}

// hibernated keeps the runtime's slots reserved on a static pool and round-trips.
func TestAccRuntime_hibernateKeepsSlots(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	cfg := func(hibernated bool) string {
		return acctest.ProviderBlock(ledger, "", acctest.Pool("p", hostA)) + fmt.Sprintf(`
resource "rill_runtime" "rt" {
  slots      = 2
  hibernated = %t
}
`, hibernated)
	}
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{Config: cfg(false), Check: acctest.CheckLedgerMatchesState(ledger)},
		{
			Config: cfg(true),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate)},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.rt", "hibernated", "true"),
				acctest.CheckLedgerMatchesState(ledger),
			),
		},
		{Config: cfg(false), Check: resource.TestCheckResourceAttr("rill_runtime.rt", "hibernated", "false")},
	}))
}

func checkHostsUsed(n int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		hosts := map[string]bool{}
		for _, rs := range s.RootModule().Resources {
			if rs.Type == "rill_runtime" {
				hosts[rs.Primary.Attributes["host"]] = true
			}
		}
		if len(hosts) != n {
			return fmt.Errorf("runtimes are on %d host(s) %v, want %d", len(hosts), hosts, n)
		}
		return nil
	}
}

var (
	hostRegexp     = regexp.MustCompile(`^http://runtime-[ab]\.test:9091$`)
	audienceRegexp = regexp.MustCompile(`^http://runtime-[ab]\.test:9091/audience$`)
)

// rill_version is the image tag of Kubernetes runtimes that set no `version`. A static pool deploys
// nothing, and its runtimes do not follow it: one without `version` keeps it null in state, the
// ledger records "" (what an import restores), and a change of rill_version plans nothing; one with
// `version` has it recorded as given. (Rill's admin service records its own version in a static
// runtime's state, and deploys nothing either.)
func TestAccRuntime_staticRuntimeVersionIsRecordedAsGivenNotFromRillVersion(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	config := func(rillVersion string) string {
		return strings.Replace(acctest.ProviderBlock(ledger, "", acctest.Pool("static-pool", hostA)), `provider "rill" {`,
			`provider "rill" {`+"\n  rill_version = \""+rillVersion+"\"", 1) +
			acctest.RuntimeBlock("unset", 1) + acctest.RuntimeBlock("pinned", 1, `version = "v0.59.0"`)
	}
	recorded := func(s *terraform.State) error {
		allocs, err := acctest.LedgerAllocations(ledger)
		if err != nil {
			return err
		}
		for name, want := range map[string]string{"unset": "", "pinned": "v0.59.0"} {
			a := allocs[s.RootModule().Resources["rill_runtime."+name].Primary.ID]
			if a == nil || a.Runtime == nil || a.Runtime.Version != want {
				return fmt.Errorf("rill_runtime.%s: ledger records %+v, want version %q", name, a, want)
			}
		}
		return nil
	}
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			Config: config("v0.60.0"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("rill_runtime.unset", tfjsonpath.New("version"), knownvalue.Null()),
				statecheck.ExpectKnownValue("rill_runtime.pinned", tfjsonpath.New("version"), knownvalue.StringExact("v0.59.0")),
			},
			Check: recorded,
		},
		{
			Config: config("v0.61.0"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: recorded,
		},
	}))
}

// A change of the timeouts block alone, which Terraform plans as an update, calls no provisioner: it
// provisioned the runtime again and waited for it to be ready, up to the update timeout (10 minutes
// for a Kubernetes runtime that was not ready; found by a walkthrough). The next plan is empty.
func TestAccRuntime_aChangeOfTimeoutsAloneCallsNoProvisioner(t *testing.T) {
	acctest.RequireAcc(t)
	w, ledger := acctest.NewWorkspace(t, acctest.TraceLog), acctest.SQLiteLedger(t)
	main := func(create string) string {
		return acctest.CLIHeader(strconv.Quote(ledger), `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://timeouts.test:9091", "slots": 2}]}}}`) +
			"resource \"rill_runtime\" \"rt\" {\n  slots = 1\n  timeouts {\n    create = \"" + create + "\"\n  }\n}\n"
	}
	w.Write("main.tf", main("10m"))
	w.Must("apply", "-auto-approve", "-no-color")
	t.Cleanup(func() { w.Must("destroy", "-auto-approve", "-no-color") })
	w.Write("main.tf", main("5m"))
	out := w.Must("apply", "-auto-approve", "-no-color")
	if !strings.Contains(out, "only the timeouts changed; no provisioner call") || strings.Contains(out, "updating runtime") {
		t.Fatalf("the apply of a timeouts change called the provisioner:\n%s", acctest.Tail(out))
	}
	if out, err := w.Run("plan", "-detailed-exitcode", "-no-color"); err != nil {
		t.Fatalf("the plan after it is not empty: %v\n%s", err, acctest.Tail(out))
	}
}
