package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/pluginserver"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// TestMain stops the shared PostgreSQL cluster that some tests start, and removes the provider binary
// the CLI-driven tests built (about 90 MB in the temp folder, once per test binary).
func TestMain(m *testing.M) {
	pgtest.AtExit(removeProviderBinary)
	pgtest.Main(m)
}

// providerFactories serve the provider in-process, so the real Terraform CLI (TF_ACC_TERRAFORM_PATH)
// talks to the code under test, through the same wrapper as main.go (internal/pluginserver).
var providerFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rill": func() (tfprotov6.ProviderServer, error) {
		return pluginserver.Wrap(providerserver.NewProtocol6(provider.New("test")())()), nil
	},
}

// host is a static pool host for the tests' pools.
type host struct {
	URL   string
	Slots int
}

// pool renders a provisioner set entry of type static.
func pool(name string, hosts ...host) string {
	var rts []string
	for _, h := range hosts {
		rts = append(rts, fmt.Sprintf(`{"host": %q, "slots": %d, "data_dir": "/mnt/data", "audience_url": %q}`, h.URL, h.Slots, h.URL+"/audience"))
	}
	return fmt.Sprintf(`%q: {"type": "static", "spec": {"runtimes": [%s]}}`, name, strings.Join(rts, ", "))
}

// providerBlock renders a provider block with the given pools and ledger.
func providerBlock(ledgerDSN, defaultProvisioner string, pools ...string) string {
	def := ""
	if defaultProvisioner != "" {
		def = fmt.Sprintf("default_provisioner = %q", defaultProvisioner)
	}
	return fmt.Sprintf(`
provider "rill" {
  ledger_dsn = %q
  %s
  provisioner_set_json = <<-JSON
    {
      // a comment, as in the seed README
      %s
    }
  JSON
}
`, ledgerDSN, def, strings.Join(pools, ",\n      "))
}

// sqliteLedger returns the DSN of a fresh SQLite ledger for one test.
func sqliteLedger(t *testing.T) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
}

// openLedger opens the ledger a test's provider uses, to check it or change it out of band.
func openLedger(t *testing.T, dsn string) database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatalf("opening the ledger %s: %v", database.Redact(dsn), err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// ledgerAllocations returns resource ID -> allocation.
func ledgerAllocations(t *testing.T, dsn string) (map[string]*database.Allocation, error) {
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	list, err := db.ListAllocations(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]*database.Allocation{}
	for _, a := range list {
		out[a.ResourceID] = a
	}
	return out, nil
}

// checkLedgerMatchesState verifies that every rill_runtime in state has an allocation with the same
// host and slots, and that the ledger holds nothing else.
func checkLedgerMatchesState(t *testing.T, dsn string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		allocs, err := ledgerAllocations(t, dsn)
		if err != nil {
			return err
		}
		seen := 0
		for name, rs := range s.RootModule().Resources {
			if rs.Type != "rill_runtime" {
				continue
			}
			seen++
			a, ok := allocs[rs.Primary.ID]
			if !ok {
				return fmt.Errorf("%s (%s) has no allocation in the ledger", name, rs.Primary.ID)
			}
			if a.Host != rs.Primary.Attributes["host"] {
				return fmt.Errorf("%s: state host %q, ledger host %q", name, rs.Primary.Attributes["host"], a.Host)
			}
			if fmt.Sprint(a.Slots) != rs.Primary.Attributes["slots"] {
				return fmt.Errorf("%s: state slots %s, ledger slots %d", name, rs.Primary.Attributes["slots"], a.Slots)
			}
		}
		if seen != len(allocs) {
			return fmt.Errorf("state has %d runtimes, ledger has %d allocations", seen, len(allocs))
		}
		return nil
	}
}

// checkLedgerEmpty is a CheckDestroy: destroy must free every slot.
func checkLedgerEmpty(t *testing.T, dsn string) func(*terraform.State) error {
	return func(*terraform.State) error {
		allocs, err := ledgerAllocations(t, dsn)
		if err != nil {
			return err
		}
		if len(allocs) != 0 {
			var ids []string
			for id, a := range allocs {
				ids = append(ids, fmt.Sprintf("%s on %s (%d slots)", id, a.Host, a.Slots))
			}
			sort.Strings(ids)
			return fmt.Errorf("destroy left %d allocation(s) in the ledger: %s", len(ids), strings.Join(ids, "; "))
		}
		return nil
	}
}

// wordsRegexp matches a sentence however Terraform wrapped it across lines.
func wordsRegexp(sentence string) *regexp.Regexp {
	words := strings.Fields(sentence)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// terraformCLI is the CLI the CLI-driven tests run: TF_ACC_TERRAFORM_PATH, as for terraform-plugin-testing,
// else terraform from PATH.
func terraformCLI() string {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	return "terraform"
}

// requireAcc skips tests that need TF_ACC before doing any setup work; under CI=true (without -short)
// it fails them instead, so that a CI job that forgot TF_ACC cannot pass without running them.
func requireAcc(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		ci.Skip(t, "TF_ACC is not set: acceptance tests need TF_ACC=1 and TF_ACC_TERRAFORM_PATH (make testacc sets both)")
	}
}

var (
	hostRegexp     = regexp.MustCompile(`^http://runtime-[ab]\.test:9091$`)
	audienceRegexp = regexp.MustCompile(`^http://runtime-[ab]\.test:9091/audience$`)
)
