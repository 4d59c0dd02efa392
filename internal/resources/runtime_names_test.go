package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// Two pools of one provider list the same host. Importing a runtime of pool "shared" through pool
// "pool" is refused (a later destroy would free the other pool's runtime), and the ledger is untouched.
func TestAccRuntime_importRefusesAnotherProvisionersRuntime(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	both := acctest.ProviderBlock(ledger, "", acctest.Pool("pool", hostA), acctest.Pool("shared", hostA))
	theirs := both + `
resource "rill_runtime" "theirs" {
  provisioner_name = "shared"
  slots            = 1
}
`
	var before map[string]*database.Allocation
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{Config: theirs, Check: func(*terraform.State) (err error) {
			before, err = acctest.LedgerAllocations(ledger)
			return err
		}},
		{
			Config: theirs + `
resource "rill_runtime" "mine" {
  provisioner_name = "pool"
  slots            = 1
}
`,
			ResourceName: "rill_runtime.mine",
			ImportState:  true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				return "pool/" + s.RootModule().Resources["rill_runtime.theirs"].Primary.ID, nil
			},
			ExpectError: acctest.WordsRegexp(`was allocated by provisioner "shared", not "pool"`),
		},
		{Config: theirs, Check: func(*terraform.State) error {
			after, err := acctest.LedgerAllocations(ledger)
			if err == nil && !reflect.DeepEqual(after, before) {
				err = fmt.Errorf("the refused import changed the ledger: %v -> %v", before, after)
			}
			return err
		}},
	}))
}

// A named runtime's ID is derived from its provisioner and name, known at plan time; renaming it
// replaces it.
func TestAccRuntime_namedRuntimeIDIsDerivedAndRenameReplaces(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	named := func(name string) string {
		return acctest.ProviderBlock(ledger, "", acctest.Pool("pool", hostA)) + fmt.Sprintf(`
resource "rill_runtime" "orders" {
  provisioner_name = "pool"
  name             = %q
  slots            = 1
}
`, name)
	}
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{Config: named("has/slash"), ExpectError: acctest.WordsRegexp(`Invalid runtime name`)},
		{
			Config: named("orders"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("rill_runtime.orders", tfjsonpath.New("id"), knownvalue.StringExact(provisioner.NamedResourceID("pool", "orders"))),
			}},
			Check: acctest.CheckLedgerMatchesState(ledger),
		},
		{
			Config: named("orders-v2"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("rill_runtime.orders", plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectKnownValue("rill_runtime.orders", tfjsonpath.New("id"), knownvalue.StringExact(provisioner.NamedResourceID("pool", "orders-v2"))),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckLedgerMatchesState(ledger), func(*terraform.State) error {
				allocs, err := acctest.LedgerAllocations(ledger)
				if a := allocs[provisioner.NamedResourceID("pool", "orders-v2")]; err == nil && (a == nil || a.Name != "orders-v2") {
					err = fmt.Errorf("the ledger does not record the name: %+v", a)
				}
				return err
			}),
		},
	}))
}

// `terraform plan -generate-config-out` after an import block writes a configuration that restores
// everything the runtime was created with (name, version, hibernated, environment, annotations): the
// plan after the import's apply is empty. An import into the configuration the runtime was created
// with changes nothing either, an "environment" annotation given without the `environment` attribute
// included (it is the project's own; it came back as the attribute, and the import's apply changed
// both), and `annotations = {}` too (a module's default; the import gave null, and its apply changed
// it to {}).
func TestAccRuntime_importGeneratesConfigThatPlansNoChange(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://gen.test:9091", "slots": 4}]}}}`
	owner := acctest.NewWorkspace(t)
	owner.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+`
resource "rill_runtime" "orders" {
  name        = "orders"
  slots       = 2
  version     = "v0.51.0"
  environment = "dev"
  hibernated  = true
  annotations = { organization_name = "acme", project_name = "orders" }
}
`)
	reports := `
resource "rill_runtime" "reports" {
  name        = "reports"
  slots       = 1
  annotations = { environment = "staging", project_name = "reports" }
}

resource "rill_runtime" "empty" {
  name        = "empty"
  slots       = 1
  annotations = {}
}
`
	owner.Write("reports.tf", reports)
	owner.Must("apply", "-auto-approve")
	t.Cleanup(func() {
		owner.Must("destroy", "-auto-approve")
		if allocs, err := acctest.LedgerAllocations(ledger); err != nil || len(allocs) != 0 {
			t.Errorf("after destroy the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})
	id := owner.RuntimesInState()["rill_runtime.orders"]

	importer := acctest.NewWorkspace(t)
	importer.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+"\n"+acctest.ImportBlock("rill_runtime.orders", "pool/"+id))
	importer.Must("plan", "-generate-config-out=generated.tf")
	generated := importer.Read("generated.tf")
	for _, want := range []string{`name = "orders"`, `version = "v0.51.0"`, `environment = "dev"`, `hibernated = true`,
		`organization_name = "acme"`, `project_name = "orders"`, `slots = 2`, `provisioner_name = "pool"`} {
		if !acctest.WordsRegexp(want).MatchString(generated) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	importer.Must("apply", "-auto-approve")
	if out, err := importer.Run("plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after importing with the generated configuration is not empty (%v):\n%s\n%s", err, out, generated)
	}
	importer.Must("state", "rm", "rill_runtime.orders") // the owner workspace destroys it
	if strings.Contains(generated, "drift") {
		t.Errorf("generated configuration sets a computed attribute:\n%s", generated)
	}

	byHand := acctest.NewWorkspace(t)
	byHand.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+reports+"\n"+
		acctest.ImportBlock("rill_runtime.reports", "pool/"+owner.RuntimesInState()["rill_runtime.reports"])+"\n"+
		acctest.ImportBlock("rill_runtime.empty", "pool/"+owner.RuntimesInState()["rill_runtime.empty"]))
	if out := byHand.Must("apply", "-auto-approve"); !strings.Contains(out, "2 imported, 0 added, 0 changed, 0 destroyed") {
		t.Errorf("importing into the configuration the runtimes were created with changed them:\n%s", out)
	}
	byHand.Must("state", "rm", "rill_runtime.reports", "rill_runtime.empty")
}

// A named runtime whose ID is held by something else (here an allocation under another name, written
// out of band) fails with the exact import ID and changes nothing; once the holder is gone, the same
// configuration applies.
func TestAccRuntime_namedRuntimeConflictPrintsTheImportCommand(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	id := provisioner.NamedResourceID("pool", "orders")
	cfg := acctest.ProviderBlock(ledger, "", acctest.Pool("pool", hostA)) + `
resource "rill_runtime" "orders" {
  provisioner_name = "pool"
  name             = "orders"
  slots            = 1
}
`
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{
			PreConfig: func() {
				_, err := ledgertest.Open(t, ledger).Allocate(context.Background(), id, func(*database.Allocation, map[string]int) (*database.Allocation, error) {
					return &database.Allocation{Provisioner: "pool", Host: hostA.URL, Slots: 1, Name: "someone-else"}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			},
			Config:      cfg,
			ExpectError: acctest.WordsRegexp(`terraform import <address> pool/` + id),
		},
		{
			PreConfig: func() {
				allocs, err := acctest.LedgerAllocations(ledger)
				if err != nil || len(allocs) != 1 || allocs[id] == nil || allocs[id].Name != "someone-else" {
					t.Fatalf("the refused create changed the ledger: %v %v", allocs, err)
				}
				if _, err := ledgertest.Open(t, ledger).DeleteAllocation(context.Background(), id); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg,
			Check:  acctest.CheckLedgerMatchesState(ledger),
		},
	}))
}

// Two configurations name a runtime alike: the name is the identity, so B's create adopts A's
// runtime. When B's create then fails (it asks for more slots than the host has), what B adopted is
// not B's to undo: A's runtime stays, and A's next plan is empty.
func TestAccRuntime_failedCreateOfANamedRuntimeKeepsTheRuntimeItAdopted(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	id := provisioner.NamedResourceID("pool", "orders")
	named := func(address string, slots int) string {
		return fmt.Sprintf(`
resource "rill_runtime" %q {
  provisioner_name = "pool"
  name             = "orders"
  slots            = %d
}
`, address, slots)
	}
	provider := acctest.ProviderBlock(ledger, "", acctest.Pool("pool", hostA))
	a := provider + named("a", 1)
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{Config: a},
		{Config: a + named("b", hostA.Slots+1), ExpectError: acctest.WordsRegexp(`Provisioning the runtime failed`)},
		{
			Config: a,
			Check: func(*terraform.State) error {
				allocs, err := acctest.LedgerAllocations(ledger)
				if err == nil && (allocs[id] == nil || allocs[id].Slots != 1) {
					err = fmt.Errorf("A's runtime %s after B's failed create: %v", id, allocs)
				}
				return err
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	}))
}

// Terraform creates and destroys two instances of one named runtime in one apply in two ways:
// create_before_destroy (here with `-replace`; a taint and `replace_triggered_by` plan the same), and
// a new address for the name without a `moved` block. The name is the ID, so the create adopts the
// runtime; the destroy of the other instance must then leave it to the new one. (Without a `moved`
// block Terraform usually destroys the old address first, which frees the runtime before the create
// allocates it again: that step holds the state and the ledger to agreeing, whatever the order.) Before, it
// deprovisioned it: the new instance's state pointed at nothing, its host went to the next runtime, and
// the next plan created it again.
//
// Two things tell the destroy so: the instance's claim (private state `claimed_at`, checked by
// Deprovision) and, within one apply, the provider's record of the names it created
// (namedInstances). The second replacement is of an instance whose state a release before claims
// wrote (no `claimed_at`), applied with -refresh=false (a refresh records the ledger's created_at),
// which only the record can tell from a real destroy: the first apply after an upgrade must keep the
// runtime too.
func TestAccRuntime_createBeforeDestroyOfANamedRuntimeKeepsIt(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://cbd.test:9091", "slots": 1}]}}}`
	id := provisioner.NamedResourceID("pool", "orders")
	w := acctest.NewWorkspace(t)
	header := acctest.CLIHeader(strconv.Quote(ledger), set)
	w.Write("main.tf", header+acctest.RuntimeBlock("orders", 1, `name = "orders"`, "lifecycle {\n    create_before_destroy = true\n  }"))
	w.Must("apply", "-auto-approve")
	kept := func(step string) {
		t.Helper()
		allocs, err := acctest.LedgerAllocations(ledger)
		if a := allocs[id]; err != nil || a == nil || a.Name != "orders" {
			t.Fatalf("%s: the ledger does not hold the runtime (%v): %v", step, err, allocs)
		}
		w.CheckStateEqualsLedger(ledger, 1)
	}

	replace := func(step string, args ...string) {
		t.Helper()
		out := w.Must(append([]string{"apply", "-auto-approve", "-replace=rill_runtime.orders"}, args...)...)
		if !strings.Contains(out, "create replacement and then destroy") || !acctest.WordsRegexp("Runtime kept for the resource that replaced it").MatchString(out) {
			t.Errorf("%s: not a create_before_destroy replacement that kept the runtime:\n%s", step, acctest.Tail(out))
		}
		kept(step)
	}
	replace("replacement")
	editProvisionerStates(t, filepath.Join(w.Dir, "terraform.tfstate"), "rill_runtime", func(ps map[string]any) {
		if _, ok := ps["claimed_at"]; !ok {
			t.Fatalf("no claimed_at in the provisioner state to remove: %v", ps)
		}
		delete(ps, "claimed_at")
	})
	replace("replacement of an instance whose state records no claim", "-refresh=false")

	w.Write("main.tf", header+acctest.RuntimeBlock("renamed", 1, `name = "orders"`))
	out := w.Must("apply", "-auto-approve")
	if !strings.Contains(out, "1 added, 0 changed, 1 destroyed") {
		t.Errorf("new address for the name: not one create and one destroy:\n%s", acctest.Tail(out))
	}
	kept("new address for the name")
	if _, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		out, _ := w.Run("plan")
		t.Fatalf("the plan after the applies is not empty (%v):\n%s", err, acctest.Tail(out))
	}
}

// Two `terraform workspace`s of one configuration draw from one pool and ledger. Unnamed runtimes and
// names with ${terraform.workspace} in them get an allocation each; a plain name would be one runtime
// managed by both states (and freed by a destroy in either), and the second workspace's plan says so
// before its apply adopts it. The ledger holds exactly what the two states hold. Before, the plan
// said nothing of the adoption.
func TestAccRuntime_twoWorkspacesOnOnePoolWarnOfASharedName(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://workspaces.test:9091", "slots": 8}]}}}`
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+`
resource "rill_runtime" "scratch" {
  slots = 1
}
`+workspaceRuntimesHCL)
	first, second := workspacesSharingAName(t, w, `named "shared", on host http://workspaces.test:9091`, func() {
		if allocs, err := acctest.LedgerAllocations(ledger); err != nil || len(allocs) != 0 {
			t.Errorf("after both destroys the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})

	allocs, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	for addr, id := range first {
		if shared := addr == "rill_runtime.shared"; (second[addr] == id) != shared {
			t.Errorf("%s: %s in the first workspace, %s in the second; want the same runtime only for the plain name", addr, id, second[addr])
		}
		if allocs[id] == nil || allocs[second[addr]] == nil {
			t.Errorf("%s: a workspace's runtime has no allocation: %s, %s", addr, id, second[addr])
		}
	}
	if len(allocs) != 5 {
		t.Errorf("the ledger holds %d allocations, want the 5 of the two states (%v, %v)", len(allocs), first, second)
	}
}

// workspaceRuntimesHCL is what workspacesSharingAName needs in main.tf: a runtime named per
// workspace, and rill_runtime.shared named "shared" in every workspace.
const workspaceRuntimesHCL = `
resource "rill_runtime" "orders" {
  name  = "${terraform.workspace}-orders"
  slots = 1
}
resource "rill_runtime" "shared" {
  name  = "shared"
  slots = 1
}
`

// workspacesSharingAName is the workspaces story in w, whose main.tf declares rill_runtime.shared
// named "shared" beside runtimes with ${terraform.workspace} in their names: the default workspace's
// plan warns of no adoption, and it applies; a new workspace "staging" then plans exactly one
// adoption warning, for "shared", containing the words named (where the runtime is), and naming the
// fix, and applies. It returns both states' runtimes by address. Its cleanup destroys both
// workspaces, staging first: the shared runtime is freed by the destroy of the state that adopted it
// last (staging's), and the default's destroy then finds it gone. Then it calls after.
func workspacesSharingAName(t *testing.T, w *acctest.Workspace, named string, after func()) (first, second map[string]string) {
	t.Helper()
	adoption := acctest.WordsRegexp(`Named runtime exists already: the apply adopts it`)
	if out := w.Must("plan"); adoption.MatchString(out) {
		t.Errorf("the first workspace's plan warns of an adoption:\n%s", acctest.Tail(out))
	}
	w.Must("apply", "-auto-approve")
	first = w.RuntimesInState()
	w.Must("workspace", "new", "staging")
	t.Cleanup(func() {
		w.Must("workspace", "select", "staging")
		w.Must("destroy", "-auto-approve")
		w.Must("workspace", "select", "default")
		w.Must("destroy", "-auto-approve")
		after()
	})
	out := w.Must("plan")
	if n := len(adoption.FindAllString(out, -1)); n != 1 || !acctest.WordsRegexp(named).MatchString(out) ||
		!acctest.WordsRegexp(`name = "${terraform.workspace}-shared"`).MatchString(out) {
		t.Errorf("the second workspace's plan: %d adoption warning(s), want 1 for \"shared\" (%s) naming the fix:\n%s", n, named, acctest.Tail(out))
	}
	w.Must("apply", "-auto-approve")
	return first, w.RuntimesInState()
}

// A runtime that leaves the state on purpose (`removed` with `destroy = false`, Terraform 1.7+; the same
// as `terraform state rm`) keeps its allocation, which `rill_allocations` keeps listing with its
// import ID; an `import` block with that ID manages it again, with an empty plan after, and nothing
// leaks. An unnamed runtime's plain re-apply would allocate a second one instead (the recovery
// guide says so).
func TestAccRuntime_removedThenImportedRuntimeKeepsItsAllocation(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 7, "removed blocks")
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://removed.test:9091", "slots": 2}]}}}`
	header := acctest.CLIHeader(strconv.Quote(ledger), set)
	runtime := "resource \"rill_runtime\" \"app\" {\n  slots = 1\n}\n"
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", header+runtime)
	w.Must("apply", "-auto-approve")
	id := w.RuntimesInState()["rill_runtime.app"]

	w.Write("main.tf", header+`
removed {
  from = rill_runtime.app
  lifecycle {
    destroy = false
  }
}
data "rill_allocations" "pool" {}
output "import_ids" {
  value = data.rill_allocations.pool.allocations[*].import_id
}
`)
	w.Must("apply", "-auto-approve")
	if got := w.RuntimesInState(); len(got) != 0 {
		t.Fatalf("after the removed block the state holds %v", got)
	}
	if out := w.Must("output", "-json", "import_ids"); !strings.Contains(out, `"pool/`+id+`"`) {
		t.Errorf("rill_allocations does not list the forgotten runtime %s: %s", id, out)
	}
	if allocs, err := acctest.LedgerAllocations(ledger); err != nil || len(allocs) != 1 || allocs[id] == nil {
		t.Fatalf("after the removed block the ledger holds %v (err %v), want only %s", allocs, err, id)
	}

	w.Write("main.tf", header+runtime+acctest.ImportBlock("rill_runtime.app", "pool/"+id))
	w.Must("apply", "-auto-approve")
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		t.Errorf("the plan after the import is not empty (%v):\n%s", err, acctest.Tail(out))
	}
	w.CheckStateEqualsLedger(ledger, 1)
	if got := w.RuntimesInState()["rill_runtime.app"]; got != id {
		t.Errorf("imported %s, want %s", got, id)
	}
	w.Must("destroy", "-auto-approve")
	w.CheckStateEqualsLedger(ledger, 0)
}

// A runtime renamed onto a name that another configuration's runtime holds replaces itself with that
// runtime: the plan says the apply adopts it. Terraform plans a replacement's new instance in a
// second call without a prior state and shows that call's errors but not its warnings, so the create
// checks run in the first call; before, the rename's plan warned of nothing.
func TestAccRuntime_renamedOntoAHeldNameWarnsThatTheApplyAdoptsIt(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	header := acctest.CLIHeader(strconv.Quote(ledger), `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://renamed.test:9091", "slots": 4}]}}}`)
	named := func(name string) string {
		return header + "resource \"rill_runtime\" \"rt\" {\n  name  = \"" + name + "\"\n  slots = 1\n}\n"
	}
	other, w := acctest.NewWorkspace(t), acctest.NewWorkspace(t)
	other.Write("main.tf", named("api"))
	other.Must("apply", "-auto-approve")
	t.Cleanup(func() { other.Must("destroy", "-auto-approve") })
	w.Write("main.tf", named("web"))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { w.Must("destroy", "-auto-approve") })
	w.Write("main.tf", named("api"))
	out := w.Must("plan")
	if !acctest.WordsRegexp(`rill_runtime.rt must be replaced`).MatchString(out) ||
		!acctest.WordsRegexp(`Named runtime exists already: the apply adopts it`).MatchString(out) ||
		!acctest.WordsRegexp(`named "api", on host http://renamed.test:9091`).MatchString(out) {
		t.Fatalf("the plan of the rename should replace rill_runtime.rt and warn that the apply adopts the runtime named \"api\":\n%s", acctest.Tail(out))
	}
}

// A create_before_destroy replacement of a named runtime interrupted between its create and its
// destroy (a single Ctrl-C, a kill, a CI runner's timeout) leaves the old instance in the state as a
// deposed object beside the new one, which adopted the runtime; the next plain apply destroys the
// old instance in a command that created nothing, where the Terraform layer's namedInstances cannot
// tell the two apart. The state such an interruption leaves is made here exactly: the old instance's
// state, saved before a `-replace`, is put back beside the new one as a deposed object (a real
// interruption lands there only now and then: found by a walkthrough that pressed Ctrl-C during the
// replacement of 40 runtimes, 37 left deposed). The plain apply must leave the runtime to the new
// instance, with the warning, and the state and the ledger agree. Before, it freed the runtime, the
// state kept the new instance, and the next plan re-created it.
func TestAccRuntime_interruptedCreateBeforeDestroyOfANamedRuntimeKeepsIt(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	set := `{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://cbd-interrupted.test:9091", "slots": 2}]}}}`
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote(ledger), set)+acctest.RuntimeBlock("orders", 1, `name = "orders"`,
		"lifecycle {\n    create_before_destroy = true\n  }"))
	w.Must("apply", "-auto-approve")
	var old struct {
		Resources []struct {
			Type      string            `json:"type"`
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(w.Read("terraform.tfstate")), &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Resources) != 1 || len(old.Resources[0].Instances) != 1 {
		t.Fatalf("state after the first apply: %+v", old)
	}
	oldInstance := map[string]any{}
	if err := json.Unmarshal(old.Resources[0].Instances[0], &oldInstance); err != nil {
		t.Fatal(err)
	}
	w.Must("apply", "-auto-approve", "-replace=rill_runtime.orders")

	// What the interruption leaves: the new instance, and the old one deposed.
	state := map[string]any{}
	if err := json.Unmarshal([]byte(w.Read("terraform.tfstate")), &state); err != nil {
		t.Fatal(err)
	}
	oldInstance["deposed"] = "00000001"
	res := state["resources"].([]any)[0].(map[string]any)
	res["instances"] = append(res["instances"].([]any), oldInstance)
	state["serial"] = state["serial"].(float64) + 1
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	w.Write("terraform.tfstate", string(b))

	out := w.Must("apply", "-auto-approve")
	if !acctest.WordsRegexp("Runtime kept for the resource that replaced it").MatchString(out) ||
		!acctest.WordsRegexp("a later create of its name took its allocation over").MatchString(out) {
		t.Errorf("the destroy of the deposed instance did not say that it left the runtime to the new one:\n%s", out)
	}
	w.CheckStateEqualsLedger(ledger, 1)
	if _, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		out, _ := w.Run("plan")
		t.Fatalf("the plan after the apply is not empty (%v):\n%s", err, out)
	}
}
