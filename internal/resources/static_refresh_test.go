package resources_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// An allocation resized outside Terraform (an operator's UPDATE, another tool) is what refresh reads:
// the plan shows the ledger's slots going back to the configured ones, and the apply puts them back.
func TestAccRuntime_outOfBandLedgerChangeIsPlannedBack(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	cfg := acctest.ProviderBlock(ledger, "", acctest.Pool("static-pool", hostA, hostB)) + `
resource "rill_runtime" "rt" {
  slots = 1
}
`
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{
		{Config: cfg, Check: acctest.CheckLedgerMatchesState(ledger)},
		{
			PreConfig: func() {
				db := ledgertest.Open(t, ledger)
				list, err := db.ListAllocations(context.Background())
				if err != nil || len(list) != 1 {
					t.Fatalf("ledger before the change: %v %v", list, err)
				}
				if _, err := db.Allocate(context.Background(), list[0].ResourceID, func(current *database.Allocation, _ map[string]int) (*database.Allocation, error) {
					next := *current
					next.Slots = 3
					return &next, nil
				}); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("rill_runtime.rt", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("slots"), knownvalue.Int64Exact(1)),
				plancheck.ExpectKnownValue("rill_runtime.rt", tfjsonpath.New("cpu"), knownvalue.Int64Exact(1)),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("rill_runtime.rt", "slots", "1"),
				acctest.CheckLedgerMatchesState(ledger),
			),
		},
	}))
}
