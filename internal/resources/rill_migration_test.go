package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/rillmigrate"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/fakerilladmin"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// The static half of docs/guides/migrating-from-rill-admin.md through the CLI: Rill's
// static_runtime_assignments (in a real PostgreSQL database) are migrated into the ledger with
// migrate-rill-static, a runtime Rill placed is imported by "<pool>/<resource ID>" and then plans
// nothing, and a new runtime is placed around the runtimes Rill placed (host a is full).
func TestAccRuntime_migratedFromRillAdminStaticPool(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	rillDSN := pgtest.Shared(t)
	const adopted, other = "5d0c4a52-64a1-4c57-9a2f-0c6b1a8e9f10", "7e2b1c3d-0f4a-4b5c-8d6e-1f2a3b4c5d6e"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{
		{ResourceID: adopted, Host: hostA.URL, Slots: 2},
		{ResourceID: other, Host: hostA.URL, Slots: 2}, // another project's runtime, staying with Rill for now
	}); err != nil {
		t.Fatal(err)
	}
	providerCfg := acctest.ProviderBlock(ledger, "", acctest.Pool("static-pool", hostA, hostB))
	if _, err := rillmigrate.Migrate(ctx, rillmigrate.Options{
		RillDSN: rillDSN, SetJSON: "{" + acctest.Pool("static-pool", hostA, hostB) + "}", Provisioner: "static-pool", LedgerDSN: ledger,
	}, nil); err != nil {
		t.Fatal(err)
	}
	adoptedBlock := `
resource "rill_runtime" "adopted" {
  slots = 2
}
`
	freshBlock := `
resource "rill_runtime" "fresh" {
  slots = 2
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:             providerCfg + adoptedBlock,
				ResourceName:       "rill_runtime.adopted",
				ImportState:        true,
				ImportStateId:      "static-pool/" + adopted,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["host"] != hostA.URL || states[0].Attributes["slots"] != "2" {
						return fmt.Errorf("imported %v: want 2 slots on %s", states, hostA.URL)
					}
					return nil
				},
			},
			{
				Config: providerCfg + adoptedBlock,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config: providerCfg + adoptedBlock + freshBlock,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("rill_runtime.adopted", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("rill_runtime.fresh", plancheck.ResourceActionCreate),
					},
				},
				// Host a holds Rill's two runtimes (4 of 4 slots): the new one goes to b.
				Check: resource.TestCheckResourceAttr("rill_runtime.fresh", "host", hostB.URL),
			},
		},
	})
	// Destroy freed the adopted runtime's and the new runtime's slots; the runtime that stays with
	// Rill keeps its reservation.
	allocs, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 1 || allocs[other] == nil {
		t.Fatalf("ledger after destroy %v: want only %s", allocs, other)
	}
}

// The Kubernetes half of docs/guides/migrating-from-rill-admin.md through the CLI: a runtime whose
// objects Rill's admin service applied (its field manager and labels, templates in Rill's documented
// shape) is imported by "<provisioner>/<resource ID>" with its slots and version read from the
// objects; the plan shows an in-place update (the adoption), never a replacement; the apply takes the
// objects over under the same UIDs, keeping Rill's immutable Deployment selector although the
// provider renders its default templates; and the next plan is empty.
func TestAccRuntimeKubernetes_adoptsRuntimeOfRillAdmin(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	const id = "0b6f1d2e-3c4a-4e5f-8a7b-9c0d1e2f3a4b"
	const pid = "0b6f1d2e3c4a4e5f8a7b9c0d1e2f3a4b"
	templates, err := fakerilladmin.Templates(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := fakerilladmin.ApplyKubernetesRuntime(e.Ctx, e.Cluster.Kubeconfig, e.NS, templates, fakerilladmin.Runtime{
		ResourceID: id, Host: "http://*.rill.test", Image: "rilldata/rill", Version: "v0.60.0", Slots: 2,
		Annotations: map[string]string{"organization_name": "acme", "organization_plan": "team", "organization_custom_domain": ""},
	}); err != nil {
		t.Fatal(err)
	}
	dep, err := e.Apps.Deployments(e.NS).Get(e.Ctx, "runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := dep.UID
	cfg := e.ProviderConfig("") + acctest.RuntimeBlock("adopted", 2, `version = "v0.60.0"`)
	resource.Test(t, e.TestCase(
		resource.TestStep{
			Config:             cfg,
			ResourceName:       "rill_runtime.adopted",
			ImportState:        true,
			ImportStateId:      "k8s/" + id,
			ImportStatePersist: true,
			ImportStateCheck: func(states []*terraform.InstanceState) error {
				if a := states[0].Attributes; a["slots"] != "2" || a["version"] != "v0.60.0" || a["storage_bytes"] != fmt.Sprint(80<<30) {
					return fmt.Errorf("imported %v: want slots 2 and version v0.60.0 read from Rill's objects", a)
				}
				return nil
			},
		},
		resource.TestStep{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("rill_runtime.adopted", plancheck.ResourceActionUpdate)},
			},
			Check: func(*terraform.State) error {
				dep, err := e.Apps.Deployments(e.NS).Get(e.Ctx, "runtime-"+pid, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if dep.UID != uid {
					return fmt.Errorf("the Deployment was replaced (UID %s, was %s)", dep.UID, uid)
				}
				if dep.Labels[kubernetes.LabelManagedBy] != kubernetes.ManagedByValue || dep.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "runtime-"+pid {
					return fmt.Errorf("labels %v, selector %v: want ours, and Rill's selector kept", dep.Labels, dep.Spec.Selector.MatchLabels)
				}
				if n := len(dep.Spec.Template.Spec.Containers); n != 1 || dep.Spec.Template.Spec.Containers[0].Name != "runtime" {
					return fmt.Errorf("containers %v: want only the default template's", dep.Spec.Template.Spec.Containers)
				}
				return nil
			},
		},
		resource.TestStep{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	))
}
