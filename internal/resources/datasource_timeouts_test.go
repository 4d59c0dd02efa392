package resources_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// A plan that reads rill_allocations while another session holds the ledger's table locked (a stuck
// apply on another runner) fails at the data source's read timeout, saying what it waited for,
// instead of hanging.
func TestAccAllocationsDataSource_lockedLedgerFailsThePlanAtItsReadTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := pgtest.Shared(t)
	ledgertest.Open(t, ledger) // created and migrated, as an earlier apply leaves it
	cfg := acctest.ProviderBlock(ledger, "static-pool", acctest.Pool("static-pool", hostA)) + `
data "rill_allocations" "pool" {
  timeouts {
    read = "2s"
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig:   func() { pgtest.LockTables(t, ledger, "allocations") },
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: acctest.WordsRegexp(`rill_allocations waited 2s, its read timeout, for provisioner "static-pool" (its ledger, cluster or server) to answer, and gave up.`),
		}},
	})
}
