package resources_test

import (
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
