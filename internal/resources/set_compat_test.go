package resources_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// repoFile returns the absolute path of a file of this repository.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A set written for Rill's admin service, with fields Rill ignores next to "type" and inside every
// kind of spec, a Kubernetes host without '*', a tagged image with Rill-style template paths, and a
// ClickHouse spec with both dsn and dsn_env, plans: each difference is a warning naming its JSON
// field, none an error.
func TestAccSet_rillStyleSetPlansWithWarnings(t *testing.T) {
	acctest.RequireAcc(t)
	t.Setenv("RILL_TEST_COMPAT_CH_DSN", "clickhouse://admin:pw@127.0.0.1:9000")
	tpl := func(name string) string { return repoFile(t, "templates/"+name+".yaml") }
	set := fmt.Sprintf(`{
  "pool": {"type": "static", "description": "shared pool", "spec": {
    "runtimes": [{"host": "http://H1.test:9091/", "slots": 2, "audience_url": "http://h1.test:8081", "region": "eu"}],
    "owner": "platform"}},
  "k8s": {"type": "kubernetes", "spec": {
    "host": "https://runtime.rill.test", "image": "rilldata/rill:v0.50.0", "namespace": "rill",
    "timeout_seconds": 600, "kubeconfig_path": "/nonexistent/kubeconfig", "node_selector": {"pool": "rill"},
    "template_paths": {"http_ingress": %q, "grpc_ingress": %q, "service": %q, "deployment": %q, "pvc": %q}}},
  "ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:inlinepw@inline:9000", "dsn_env": "RILL_TEST_COMPAT_CH_DSN"}}
}`, tpl("http_ingress"), tpl("grpc_ingress"), tpl("service"), tpl("deployment"), tpl("pvc"))
	rec := &acctest.Recorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "rill" {
  ledger_dsn           = %q
  provisioner_set_json = %q
  default_provisioner  = "pool"
}
resource "rill_runtime" "rt" {
  slots = 1
}
`, acctest.SQLiteLedger(t), set),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	warnings := strings.Join(rec.TakeWarnings(acctest.ConfigureProvider), "\n")
	for _, want := range []string{
		`provisioner "pool": description: unknown field, ignored (Rill's admin service ignores it too)`,
		`provisioner "pool": spec.owner: unknown field, ignored`,
		`provisioner "pool": spec.runtimes[0].region: unknown field, ignored`,
		`provisioner "k8s": spec.node_selector: unknown field, ignored`,
		`provisioner "k8s": spec.host: "https://runtime.rill.test" has no '*'`,
		`provisioner "k8s": spec.image: "rilldata/rill:v0.50.0" carries a tag or digest: it reaches the templates unchanged as .Image`,
		`provisioner "ch": spec.dsn: ignored: dsn_env is set too and takes precedence (as in Rill's admin service)`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no plan-time warning %q; warnings:\n%s", want, warnings)
		}
	}
	if strings.Contains(warnings, "inlinepw") {
		t.Error("a warning shows the ignored DSN")
	}
}

// A runtime no host has room for is a warning at plan time (the plan still succeeds: the same apply
// may free slots first), and the plan writes nothing to the ledger.
func TestAccRuntime_noRoomWarnsAtPlan(t *testing.T) {
	acctest.RequireAcc(t)
	dir := t.TempDir()
	ledger := "sqlite://" + filepath.Join(dir, "ledger.db")
	rec := &acctest.Recorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.Factories(),
		Steps: []resource.TestStep{{
			Config:             acctest.ProviderBlock(ledger, "", acctest.Pool("small", acctest.Host{URL: "http://h1.test:9091", Slots: 1}, acctest.Host{URL: "http://h2.test:9091", Slots: 1})) + runtimeWith(`slots = 2`),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
	warnings := strings.Join(rec.TakeWarnings(acctest.PlanResourceChange), "\n")
	if want := `No host has room for this runtime: Provisioner "small" has no host with 2 free slot(s) right now (free slots per host: http://h1.test:9091 1 of 1, http://h2.test:9091 1 of 1)`; !strings.Contains(warnings, want) {
		t.Fatalf("no plan-time warning %q; warnings:\n%s", want, warnings)
	}
	// The plan did not even create the ledger (the first apply that allocates does).
	if _, err := os.Stat(filepath.Join(dir, "ledger.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the plan created the ledger file (stat: %v)", err)
	}
}

// A plan that grows a runtime beyond the free slots of its host (a static runtime cannot move) warns;
// before, it was silent and the apply failed with "cannot resize in place".
func TestAccRuntime_growthItsHostHasNoRoomForWarnsAtPlan(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	rec := &acctest.Recorder{}
	provider := acctest.ProviderBlock(ledger, "", acctest.Pool("small", acctest.Host{URL: "http://h1.test:9091", Slots: 2}))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.Factories(),
		CheckDestroy:             acctest.CheckLedgerEmpty(ledger),
		Steps: []resource.TestStep{
			{Config: provider + runtimeWith(`slots = 1`)},
			{Config: provider + runtimeWith(`slots = 3`), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
	warnings := strings.Join(rec.TakeWarnings(acctest.PlanResourceChange), "\n")
	if want := `No room on its host to grow this runtime: Provisioner "small": the runtime's host http://h1.test:9091 has 1 free slot(s) of 2 right now, and growing the runtime from 1 to 3 slots needs 2`; !strings.Contains(warnings, want) {
		t.Fatalf("no plan-time warning %q; warnings:\n%s", want, warnings)
	}
}

// A runtime on a host later removed from the spec stays in state (with a warning) instead of being
// read as gone, rill_provisioners shows the host with in_spec = false and its slots, and destroy frees
// it. Hosts are recorded in canonical form.
func TestAccRuntime_removedHostIsShownAndFreedByDestroy(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	rec := &acctest.Recorder{}
	first := `"p": {"type": "static", "spec": {"runtimes": [{"host": "HTTP://Gone.test.:80/", "slots": 2}]}}`
	second := `"p": {"type": "static", "spec": {"runtimes": [{"host": "http://kept.test:9091", "slots": 2}]}}`
	ds := `
data "rill_provisioners" "all" {
  depends_on = [rill_runtime.rt]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.Factories(),
		CheckDestroy:             acctest.CheckLedgerEmpty(ledger),
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderBlock(ledger, "", first) + runtimeWith(`slots = 1`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://gone.test"),
					acctest.CheckLedgerMatchesState(ledger),
				),
			},
			{
				Config: acctest.ProviderBlock(ledger, "", second) + runtimeWith(`slots = 1`) + ds,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionNoop)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://gone.test"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.#", "2"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.0.host", "http://kept.test:9091"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.0.in_spec", "true"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.1.host", "http://gone.test"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.1.in_spec", "false"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.1.used_slots", "1"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.hosts.1.slots", "0"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.slots", "2"),
					resource.TestCheckResourceAttr("data.rill_provisioners.all", "provisioners.0.free_slots", "2"),
					func(*terraform.State) error {
						w := strings.Join(rec.TakeWarnings(acctest.ReadResource), "\n")
						if !regexp.MustCompile(`runtime \S+ is allocated on host http://gone.test, which is no longer in the static pool's spec; it keeps its slots there`).MatchString(w) {
							return fmt.Errorf("no refresh warning about the removed host; warnings:\n%s", w)
						}
						return nil
					},
				),
			},
		},
	})
}

// A growth planned together with a new name is no growth: the name change replaces the runtime, whose
// new instance is placed anew, on any host with room. The plan must not warn that the apply "will
// fail with cannot resize in place" (it did: the check looked at the slots alone), and the apply
// succeeds, on the other host.
func TestAccRuntime_renamedAndGrownRuntimeIsNotWarnedAboutItsOldHost(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	rec := &acctest.Recorder{}
	// h1 is first and as empty as h2: the first runtime goes there and fills it.
	provider := acctest.ProviderBlock(ledger, "", acctest.Pool("small", acctest.Host{URL: "http://h1.test:9091", Slots: 1}, acctest.Host{URL: "http://h2.test:9091", Slots: 8}))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.Factories(),
		CheckDestroy:             acctest.CheckLedgerEmpty(ledger),
		Steps: []resource.TestStep{
			{Config: provider + runtimeWith("name = \"a\"\nslots = 1"), Check: resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://h1.test:9091")},
			{
				Config: provider + runtimeWith("name = \"b\"\nslots = 3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.TestCheckResourceAttr("rill_runtime.rt", "host", "http://h2.test:9091"),
			},
		},
	})
	if warnings := strings.Join(rec.TakeWarnings(acctest.PlanResourceChange), "\n"); strings.Contains(warnings, "No room on its host to grow") {
		t.Fatalf("the plan of a replacement warned about growing on the old host:\n%s", warnings)
	}
}
