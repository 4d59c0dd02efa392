package resources_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
)

// rill_provisioners shows a pipeline how full its pools are: per host and per pool, the slots, the
// slots the ledger holds and the free ones; provisioners without a fixed capacity have no counts.
func TestAccProvisionersDataSource_reportsUseAndFreeSlotsPerHost(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	small := acctest.Host{URL: "http://runtime-small.test:9091", Slots: 2}
	ch := `"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:pw@ch.test:9000/default"}}` // never contacted
	cfg := acctest.ProviderBlock(ledger, "static-pool", acctest.Pool("static-pool", hostA, small), ch) + `
resource "rill_runtime" "big" {
  slots = 3
}
resource "rill_runtime" "small" {
  slots      = 1
  depends_on = [rill_runtime.big] # spread: big goes to the emptiest host first (a), small then to b
}
data "rill_provisioners" "all" {
  depends_on = [rill_runtime.big, rill_runtime.small]
}
`
	const ds = "data.rill_provisioners.all"
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{{
		Config: cfg,
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr("rill_runtime.big", "host", hostA.URL),
			resource.TestCheckResourceAttr("rill_runtime.small", "host", small.URL),
			resource.TestCheckResourceAttr(ds, "default", "static-pool"),
			resource.TestCheckResourceAttr(ds, "provisioners.#", "2"),
			// Sorted by name: "ch" first, with no capacity.
			resource.TestCheckResourceAttr(ds, "provisioners.0.name", "ch"),
			resource.TestCheckResourceAttr(ds, "provisioners.0.type", "clickhouse-static"),
			resource.TestCheckResourceAttr(ds, "provisioners.0.is_default", "false"),
			resource.TestCheckResourceAttr(ds, "provisioners.0.supports.#", "1"),
			resource.TestCheckResourceAttr(ds, "provisioners.0.supports.0", "clickhouse"),
			resource.TestCheckNoResourceAttr(ds, "provisioners.0.slots"),
			resource.TestCheckNoResourceAttr(ds, "provisioners.0.free_slots"),
			resource.TestCheckResourceAttr(ds, "provisioners.0.hosts.#", "0"),
			// The pool: 4+2 slots, 3+1 used, 1+1 free.
			resource.TestCheckResourceAttr(ds, "provisioners.1.name", "static-pool"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.type", "static"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.is_default", "true"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.supports.0", "runtime"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.slots", "6"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.used_slots", "4"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.free_slots", "2"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.#", "2"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.0.host", hostA.URL),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.0.slots", "4"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.0.used_slots", "3"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.0.free_slots", "1"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.0.runtimes", "1"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.1.host", small.URL),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.1.slots", "2"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.1.used_slots", "1"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.1.free_slots", "1"),
			resource.TestCheckResourceAttr(ds, "provisioners.1.hosts.1.runtimes", "1"),
			acctest.CheckLedgerMatchesState(ledger),
		),
	}}))
}

// rill_provisioners with check = true asks every provisioner whether it works (the contract's Check,
// which Rill's admin service calls periodically) and reports each failure in the provisioner's
// check_error, without failing the read, so that a check block can report it: here a ClickHouse
// server that nobody runs, beside a static pool whose ledger does not exist yet, which reads as empty
// and is not created. Without check, no check_error, whatever the provisioners' health.
func TestAccProvisionersDataSource_checkReportsEachProvisionersFailure(t *testing.T) {
	acctest.RequireAcc(t)
	ledgerFile := filepath.Join(t.TempDir(), "ledger.db")
	ledger := "sqlite://" + ledgerFile
	ch := fmt.Sprintf(`"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:pw@127.0.0.1:%d/default?dial_timeout=5s"}}`, freeport.For(t))
	cfg := acctest.ProviderBlock(ledger, "static-pool", acctest.Pool("static-pool", hostA), ch) + `
data "rill_provisioners" "checked" {
  check = true
}
data "rill_provisioners" "unchecked" {}
`
	const checked, unchecked = "data.rill_provisioners.checked", "data.rill_provisioners.unchecked"
	resource.Test(t, acctest.LedgerTestCase(ledger, []resource.TestStep{{
		Config: cfg,
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(checked, "provisioners.0.name", "ch"),
			resource.TestMatchResourceAttr(checked, "provisioners.0.check_error", regexp.MustCompile(`connection refused`)),
			resource.TestCheckResourceAttr(checked, "provisioners.1.name", "static-pool"),
			resource.TestCheckNoResourceAttr(checked, "provisioners.1.check_error"),
			resource.TestCheckNoResourceAttr(unchecked, "provisioners.0.check_error"),
			resource.TestCheckNoResourceAttr(unchecked, "provisioners.1.check_error"),
			func(*terraform.State) error {
				if _, err := os.Stat(ledgerFile); !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("the static pool's check left its ledger behind (%v): a check writes nothing", err)
				}
				return nil
			},
		),
	}}))
}
