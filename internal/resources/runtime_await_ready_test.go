package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A runtime kept in state without its readiness seen (an apply interrupted while it waited, or an
// update whose wait failed; neither is tainted) is planned as an update that waits for it again, until
// an apply sees it ready. A runtime's refresh reads its allocation or objects, not whether it serves:
// the plan after such an apply was empty for a runtime that never became ready (seen on Kubernetes),
// and after an update that failed once it had applied the new settings (a review's finding).
func TestAccRuntime_keptWithoutItsReadinessSeenIsPlannedAsAnUpdateThatWaitsAgain(t *testing.T) {
	acctest.RequireAcc(t)
	fake, interrupting, _, factories := slowToReady(t)
	ledger := acctest.SQLiteLedger(t)
	withSlots := func(slots int) string {
		return fmt.Sprintf("provider \"rill\" {\n  ledger_dsn = %q\n  provisioner_set_json = %q\n}\n"+
			"resource \"rill_runtime\" \"one\" {\n  provisioner_name = \"rt\"\n  slots = %d\n  timeouts {\n    update = \"2s\"\n  }\n}\n",
			ledger, `{"rt": {"type": "fake-slow-to-ready", "spec": {}}}`, slots)
	}
	config := withSlots(2)
	awaits := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.awaits != want {
				return fmt.Errorf("%d waits for readiness, want %d", fake.awaits, want)
			}
			return nil
		}
	}
	unconfirmed := []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("rill_runtime.one", plancheck.ResourceActionUpdate),
		acctest.ExpectPriorDrift{Addr: "rill_runtime.one", Substr: "not confirmed ready"},
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				// The create is interrupted while it waits: kept untainted, and the plan after it
				// shows the update that waits again.
				Config:             config,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks:   resource.ConfigPlanChecks{PostApplyPostRefresh: unconfirmed},
				Check:              awaits(1),
			},
			{
				// That update, interrupted too: still not confirmed.
				Config:             config,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks:   resource.ConfigPlanChecks{PreApply: unconfirmed, PostApplyPostRefresh: unconfirmed},
				Check:              awaits(2),
			},
			{
				// Not ready within the update timeout: an error that says the next plan waits again.
				PreConfig:   func() { interrupting.Store(false) },
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Runtime did not become ready after the update.*next\s+plan\s+shows\s+an\s+update\s+that\s+waits`),
			},
			{
				// Ready now: that update confirms it, and the plan after it is empty.
				PreConfig: func() {
					fake.mu.Lock()
					fake.ready = true
					fake.mu.Unlock()
				},
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: unconfirmed},
				Check:            awaits(4),
			},
			{
				// An update that fails after it applied (the state keeps the old slots, which the
				// refresh then finds matching the configuration): not waited for, so not confirmed.
				PreConfig: func() {
					fake.mu.Lock()
					fake.failAfterApply = true
					fake.mu.Unlock()
				},
				Config:      withSlots(3),
				ExpectError: regexp.MustCompile(`(?s)Updating the runtime failed.*partly\s+updated.*next\s+plan\s+shows\s+an\s+update`),
			},
			{
				PreConfig: func() {
					fake.mu.Lock()
					fake.failAfterApply = false
					fake.mu.Unlock()
				},
				Config:           withSlots(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: unconfirmed},
				Check:            awaits(5),
			},
		},
	})
}
