package resources_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// The workspaces story on Kubernetes (as TestAccRuntime_twoWorkspacesOnOnePoolWarnOfASharedName on a
// static pool): two terraform workspaces of one configuration in one namespace; a
// ${terraform.workspace}-name gets a runtime each, the plain name is one runtime, and only the second
// workspace's plan warns that its apply adopts it, naming the fix. Its destroy would free it under
// the first workspace; the plan is where that shows.
func TestAccRuntimeKubernetes_twoWorkspacesWarnOfASharedName(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote(e.Ledger), e.SetJSON())+workspaceRuntimesHCL)
	first, second := workspacesSharingAName(t, w, `named "shared", in namespace `+e.NS, func() {
		if err := e.CheckNoObjectLeft()(nil); err != nil {
			t.Error(err)
		}
	})
	if first["rill_runtime.shared"] != second["rill_runtime.shared"] || first["rill_runtime.orders"] == second["rill_runtime.orders"] {
		t.Errorf("first workspace %v, second %v: want one shared runtime and an orders runtime each", first, second)
	}
	objs, err := e.ManagedObjects()
	if err != nil {
		t.Fatal(err)
	}
	deployments := 0
	for _, o := range objs {
		if strings.HasPrefix(o, "deployments/") {
			deployments++
		}
	}
	if deployments != 3 {
		t.Errorf("%d Deployments, want 3 (one orders runtime per workspace and the shared one): %v", deployments, objs)
	}
}

// A named runtime left without state (`terraform state rm`, a killed create, a new address without
// `moved`) is adopted by the create of its name with the volume it has, larger than the slots now
// ask for (Kubernetes never shrinks one), and the apply reports that size: the plan of a named
// create leaves storage_bytes to the apply. Before, the plan said the slots' size, the apply
// returned the kept volume's, and Terraform failed the apply ("inconsistent result after apply")
// and tainted the runtime, so that the next apply destroyed it, volume and data with it.
func TestAccRuntimeKubernetes_aNamedRuntimeAdoptedWithALargerVolumeKeepsIt(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	w := acctest.NewWorkspace(t)
	runtime := func(slots int) string {
		return acctest.CLIHeader(strconv.Quote(e.Ledger), e.SetJSON()) +
			"resource \"rill_runtime\" \"orders\" {\n  name  = \"orders\"\n  slots = " + strconv.Itoa(slots) + "\n}\n"
	}
	w.Write("main.tf", runtime(2))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve") })
	id, size := w.RuntimesInState()["rill_runtime.orders"], w.RuntimeAttributeInState("storage_bytes")["rill_runtime.orders"]

	w.Must("state", "rm", "rill_runtime.orders")
	w.Write("main.tf", runtime(1))
	if plan := w.Must("plan"); !regexp.MustCompile(`storage_bytes += \(known after apply\)`).MatchString(plan) {
		t.Errorf("the plan of the named create does not leave storage_bytes to the apply:\n%s", acctest.Tail(plan))
	}
	w.Must("apply", "-auto-approve")
	if got := w.RuntimesInState()["rill_runtime.orders"]; got != id {
		t.Fatalf("the create made runtime %s, want the adopted %s", got, id)
	}
	if got := w.RuntimeAttributeInState("storage_bytes")["rill_runtime.orders"]; got != size {
		t.Errorf("storage_bytes %v after the adoption, want the kept volume's %v", got, size)
	}
	if plan := w.Must("plan", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Errorf("the plan after the adoption is not empty:\n%s", acctest.Tail(plan))
	}
}
