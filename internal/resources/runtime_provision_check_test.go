package resources_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A platform team's template refuses runtimes larger than its cluster takes: a configuration asking
// for more fails at plan, with the template's own message, naming the provisioner; the one that fits
// plans (no cluster is needed for either: the check renders, and the unreachable kubeconfig is a
// warning of its own). Before, the plan was clean and the apply failed.
func TestAccRuntimeKubernetes_aTemplateRefusingTheRuntimesDataFailsThePlan(t *testing.T) {
	acctest.RequireAcc(t)
	dir := t.TempDir()
	deployment := guardedDeployment(t, filepath.Join(dir, "deployment.yaml"), `{{ if gt .Slots 4 }}{{ fail (printf "%d slots asked, at most 4 on this cluster" .Slots) }}{{ end }}`)
	set := fmt.Sprintf(`{"k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": %q, "template_paths": {"deployment": %q}}}}`,
		filepath.Join(dir, "absent-kubeconfig"), deployment)
	config := func(slots int) string {
		return fmt.Sprintf("provider \"rill\" {\n  provisioner_set_json = %q\n}\nresource \"rill_runtime\" \"rt\" {\n  slots = %d\n}\n", set, slots)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(6), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Runtime cannot be provisioned with these arguments.*Provisioner "k8s", the new\s+runtime:.*deployment.yaml:1:.*6 slots asked, at most 4 on this\s+cluster`)},
			{Config: config(4), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
}

// A platform team tightens its template's guard below what a runtime has: the next plan fails with
// the template's message (the refresh reports the failure as the runtime's drift, and the update's
// plan-time check refuses it), and the runtime can still be destroyed under the new templates. Before,
// the refresh itself failed ("Reading the runtime failed"), and plan, apply and destroy with it (found
// by a walkthrough; only destroy -refresh=false got out).
func TestAccRuntimeKubernetes_aGuardTightenedBelowARuntimeFailsItsPlanAndItsDestroyWorks(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	dir := t.TempDir()
	// A file per guard: the provider builds its provisioners once per set, and the test's provider
	// serves every step (a real terraform command starts its own, which reads the files anew).
	config := func(most int) string {
		deployment := guardedDeployment(t, filepath.Join(dir, fmt.Sprintf("deployment-%d.yaml", most)),
			fmt.Sprintf(`{{ if gt .Slots %d }}{{ fail "at most %d slot(s) on this cluster" }}{{ end }}`, most, most))
		return e.ProviderConfig(fmt.Sprintf(`, "template_paths": {"deployment": %q}`, deployment)) + acctest.RuntimeBlock("rt", 2)
	}
	resource.Test(t, e.TestCase(
		resource.TestStep{Config: config(4)},
		resource.TestStep{
			Config:      config(1),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Runtime cannot be provisioned with these arguments.*at most 1 slot\(s\) on this\s+cluster`),
		},
	)) // the destroy runs under the tightened templates, and must leave nothing (CheckNoObjectLeft)
}

// guardedDeployment writes the default deployment template with guard on a line before it to path,
// and returns path.
func guardedDeployment(t *testing.T, path, guard string) string {
	t.Helper()
	tmpl, err := os.ReadFile("../../templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte(guard+"\n"), tmpl...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
