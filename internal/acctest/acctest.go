// Package acctest holds what the CLI-driven tests of the provider share: the in-process provider for
// terraform-plugin-testing, the provider binary and a Terraform working directory for the stories the
// test framework cannot tell (kills, generated configuration, several processes), configuration
// builders, ledger checks, a recorder of the provider's diagnostics, and a Kubernetes namespace per
// test. Test files keep only their scenarios.
package acctest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/pluginserver"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// Main runs the tests of a package that uses acctest: it stops the shared PostgreSQL cluster some
// tests start and removes the provider binary the CLI-driven tests built (about 90 MB in the temp
// folder, once per test binary). Call it from TestMain.
func Main(m *testing.M) {
	dropMissingCLIConfig()
	pgtest.AtExit(RemoveProviderBinary)
	pgtest.AtExit(k8stest.StopAtExit) // the Kubernetes tests' control plane, stopped before the binary ends
	pgtest.Main(m)
}

// dropMissingCLIConfig unsets a TF_CLI_CONFIG_FILE that names no file. To Terraform and OpenTofu such
// a variable is no CLI configuration at all, plus a warning; OpenTofu 1.12 prints that warning on
// stdout, ahead of the JSON of `tofu version -json` that terraform-plugin-testing parses, and every
// acceptance test then fails before it starts. Without the variable both CLIs run as they would
// with it, minus the warning.
func dropMissingCLIConfig() {
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			_ = os.Unsetenv("TF_CLI_CONFIG_FILE")
		}
	}
}

// RequireAcc skips tests that need TF_ACC before doing any setup work; under CI=true (without
// -short) it fails them instead, so that a CI job that forgot TF_ACC cannot pass without running them.
func RequireAcc(t testing.TB) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		ci.Skip(t, "TF_ACC is not set: acceptance tests need TF_ACC=1 and TF_ACC_TERRAFORM_PATH (make testacc sets both)")
	}
}

// ProviderFactories serve the provider in-process, so the real Terraform CLI (TF_ACC_TERRAFORM_PATH)
// talks to the code under test, through the same wrapper as main.go (internal/pluginserver).
var ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rill": func() (tfprotov6.ProviderServer, error) {
		return pluginserver.Wrap(providerserver.NewProtocol6(provider.New("test")())()), nil
	},
}

// TerraformCLI is the CLI the CLI-driven tests run: TF_ACC_TERRAFORM_PATH, as for
// terraform-plugin-testing, else terraform from PATH.
func TerraformCLI() string {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	return "terraform"
}

// Host is a static pool host for the tests' pools.
type Host struct {
	URL   string
	Slots int
}

// Pool renders a provisioner set entry of type static.
func Pool(name string, hosts ...Host) string {
	var rts []string
	for _, h := range hosts {
		rts = append(rts, fmt.Sprintf(`{"host": %q, "slots": %d, "data_dir": "/mnt/data", "audience_url": %q}`, h.URL, h.Slots, h.URL+"/audience"))
	}
	return fmt.Sprintf(`%q: {"type": "static", "spec": {"runtimes": [%s]}}`, name, strings.Join(rts, ", "))
}

// ProviderBlock renders a provider block with the given set entries (Pool) and ledger.
func ProviderBlock(ledgerDSN, defaultProvisioner string, pools ...string) string {
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

// CLIHeader is the start of a main.tf for the real CLI: the terraform block that picks this
// checkout's provider (see DevOverrideCLIConfig) and a provider block with ledgerExpr as ledger_dsn
// (an HCL expression, such as a quoted DSN or var.ledger; "" for none: the default ledger) and the
// provisioner set.
func CLIHeader(ledgerExpr, setJSON string) string {
	ledger := ""
	if ledgerExpr != "" {
		ledger = "  ledger_dsn = " + ledgerExpr + "\n"
	}
	return fmt.Sprintf("terraform {\n  required_providers {\n    rill = { source = %q }\n  }\n}\n"+
		"provider \"rill\" {\n%s  provisioner_set_json = %q\n}\n", provider.Source, ledger, setJSON)
}

// RuntimeBlock renders a rill_runtime with the given slots and extra attribute lines.
func RuntimeBlock(name string, slots int, attrs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource \"rill_runtime\" %q {\n  slots = %d\n", name, slots)
	for _, a := range attrs {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	b.WriteString("}\n")
	return b.String()
}

// SQLiteLedger returns the DSN of a fresh SQLite ledger for one test.
func SQLiteLedger(t testing.TB) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "ledger.db")
}

// LedgerAllocations returns resource ID -> allocation. It opens the ledger read-only, so a check
// never creates or migrates it: a ledger that does not exist holds no allocations.
func LedgerAllocations(dsn string) (map[string]*database.Allocation, error) {
	db, err := database.OpenReadOnly(context.Background(), dsn, nil)
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

// CheckLedgerMatchesState verifies that the rill_runtime resources in state are exactly the ledger's
// allocations, and that each says what its allocation says (LedgerDisagreements).
func CheckLedgerMatchesState(dsn string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		allocs, err := LedgerAllocations(dsn)
		if err != nil {
			return err
		}
		state := map[string]map[string]string{}
		for name, rs := range s.RootModule().Resources {
			if rs.Type == "rill_runtime" {
				state[name] = rs.Primary.Attributes
			}
		}
		if d := LedgerDisagreements(state, allocs); len(d) > 0 {
			return errors.New(strings.Join(d, "\n"))
		}
		return nil
	}
}

// CheckLedgerEmpty is a CheckDestroy: destroy must free every slot.
func CheckLedgerEmpty(dsn string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		allocs, err := LedgerAllocations(dsn)
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

// ImportVerifyStep imports the resource at address in state by its import ID ("<provisioner>/<id>")
// and wants the same attributes back as the state holds.
func ImportVerifyStep(address string) resource.TestStep {
	return resource.TestStep{
		ResourceName:      address,
		ImportState:       true,
		ImportStateVerify: true,
		ImportStateIdFunc: func(s *terraform.State) (string, error) {
			rs, ok := s.RootModule().Resources[address]
			if !ok {
				return "", fmt.Errorf("%s not in state", address)
			}
			return rs.Primary.Attributes["provisioner_name"] + "/" + rs.Primary.ID, nil
		},
	}
}

// ImportBlock is a configuration's import block (Terraform 1.5+) of id into address.
func ImportBlock(address, id string) string {
	return fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", address, id)
}

// WordsRegexp matches a sentence however Terraform wrapped it across lines.
func WordsRegexp(sentence string) *regexp.Regexp {
	words := strings.Fields(sentence)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// Tail is the end of a long CLI output, for failure messages: proc.Tail's cut at 4000 bytes.
func Tail(s string) string { return proc.Tail(s, 4000) }

// LedgerTestCase is a TestCase on the in-process provider whose destroy must free every slot of the
// ledger.
func LedgerTestCase(ledger string, steps []resource.TestStep) resource.TestCase {
	return resource.TestCase{
		ProtoV6ProviderFactories: ProviderFactories,
		CheckDestroy:             CheckLedgerEmpty(ledger),
		Steps:                    steps,
	}
}
