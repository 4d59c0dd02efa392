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
	tmpl, err := os.ReadFile("../../templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deployment := filepath.Join(dir, "deployment.yaml")
	guard := `{{ if gt .Slots 4 }}{{ fail (printf "%d slots asked, at most 4 on this cluster" .Slots) }}{{ end }}` + "\n"
	if err := os.WriteFile(deployment, append([]byte(guard), tmpl...), 0o644); err != nil {
		t.Fatal(err)
	}
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
