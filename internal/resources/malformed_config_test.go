package resources_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// malformedCase is a provider or resource configuration that must fail at plan time with a diagnostic
// naming the attribute or JSON field at fault.
type malformedCase struct {
	name string
	// set is the provisioner_set_json body; empty means a valid one-pool set.
	set string
	// extraProvider is added to the provider block; resource is the resource block.
	extraProvider string
	resource      string
	want          *regexp.Regexp
}

const validPool = `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test:9091", "slots": 2}]}}}`

func runtimeWith(attrs string) string {
	return fmt.Sprintf("resource \"rill_runtime\" \"rt\" {\n%s\n}\n", attrs)
}

var malformedCases = []malformedCase{
	// The set's JSON.
	{name: "set is not JSON", set: `{"p": {"type": "static",`, want: acctest.WordsRegexp(`provisioner set is not valid JSON`)},
	{name: "unknown type lists known ones", set: `{"p": {"type": "statik", "spec": {}}}`, want: regexp.MustCompile(`provisioner "p": type: unknown provisioner\s+type\s+"statik";\s+known\s+types:\s+.*static`)},
	// The static spec.
	{name: "negative slots", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": -1}]}}}`, want: acctest.WordsRegexp(`provisioner "p": spec.runtimes[0].slots: must be between 0 (a drained host) and 2147483647, got -1`)},
	// Other provider attributes.
	{name: "default not in set", extraProvider: `default_provisioner = "q"`, want: acctest.WordsRegexp(`default_provisioner "q" is not in provisioner_set_json; known provisioners: p`)},
	{name: "ledger with unknown scheme", extraProvider: `ledger_dsn = "mysql://root@localhost/ledger"`, want: acctest.WordsRegexp(`Invalid ledger DSN`)},
	// Parsed by the PostgreSQL driver when the provider is configured: before, the plan passed and the apply failed.
	{name: "ledger the PostgreSQL driver cannot parse", extraProvider: `ledger_dsn = "postgres://u:pw@127.0.0.1:1/db?sslmode=bogus"`, want: regexp.MustCompile(`(?s)Invalid ledger DSN.*ledger_dsn.*sslmode is invalid`)},
	{name: "empty set", set: " ", want: acctest.WordsRegexp(`Missing provisioner set`)},
	// "" is not "left out": the error says how to leave it out (the DSN's told of DefaultDSN(), a Go function).
	{name: "empty ledger_dsn", extraProvider: `ledger_dsn = ""`, want: acctest.WordsRegexp(`ledger_dsn is set but empty: give a DSN ("sqlite:///absolute/path/ledger.db", "postgres://..."), or leave the attribute out (null) to use RILL_LEDGER_DSN`)},
	{name: "empty default_provisioner", extraProvider: `default_provisioner = ""`, want: acctest.WordsRegexp(`default_provisioner is set but empty: name a provisioner of the set, or leave the attribute out (null) to use RILL_ADMIN_DEFAULT_PROVISIONER`)},
	// The resource.
	{name: "zero slots on the resource", resource: runtimeWith(`slots = 0`), want: acctest.WordsRegexp(`slots must be a whole number from 1 to 214748364, got 0.`)},
	{name: "override_disk_gb beyond 64 bits", resource: runtimeWith("slots = 1\noverride_disk_gb = 10000000000"), want: acctest.WordsRegexp(`override_disk_gb value must be between 1 and 8589934591, got: 10000000000`)},
	{name: "slots missing", resource: runtimeWith(`version = "v1"`), want: acctest.WordsRegexp(`The argument "slots" is required`)},
	{name: "unknown provisioner_name", resource: runtimeWith("slots = 1\nprovisioner_name = \"nope\""), want: acctest.WordsRegexp(`provisioner "nope" is not in the provider's provisioner set; known provisioners: p`)},
	{name: "empty version", resource: runtimeWith("slots = 1\nversion = \"\""), want: acctest.WordsRegexp(`Attribute version string length must be at least 1`)},
	{name: "environment set twice", resource: runtimeWith("slots = 1\nenvironment = \"prod\"\nannotations = { environment = \"dev\" }"), want: acctest.WordsRegexp(`Conflicting environment`)},
	{name: "bad timeout", resource: runtimeWith("slots = 1\ntimeouts {\n create = \"soon\"\n}"), want: acctest.WordsRegexp(`timeouts.create must be a positive Go duration, such as "30s" or "10m", got "soon".`)},
	{name: "empty provisioner_name of rill_allocations", resource: "data \"rill_allocations\" \"a\" {\n  provisioner_name = \"\"\n}\n" + runtimeWith(`slots = 1`),
		want: acctest.WordsRegexp(`Attribute provisioner_name string length must be at least 1, got: 0`)},
	{name: "zero timeout", resource: runtimeWith("slots = 1\ntimeouts {\n delete = \"0s\"\n}"), want: acctest.WordsRegexp(`timeouts.delete must be a positive Go duration, such as "30s" or "10m", got "0s".`)},
}

// Every malformed configuration fails the plan with a diagnostic naming the field, and none crashes the
// provider (a crash would surface as "plugin crashed" and not match). The table holds one or two cases
// per path an error takes to the user (the set, a provisioner's spec, a provider attribute, a resource
// attribute); the parsers' other cases are tested where they live: internal/provisioner
// (TestNewSetErrorsNameTheProvisionerAndField, TestNewSetRefusesASetThatIsNotAnObjectOfProvisioners,
// limits_test.go), internal/static (TestParseSpecErrorsAndWarningsNameTheField), internal/kubernetes
// (spec_test.go) and the slots bounds in slots_internal_test.go.
func TestAccConfig_malformedInputsNameTheField(t *testing.T) {
	acctest.RequireAcc(t)
	for _, tc := range malformedCases {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set
			if set == "" {
				set = validPool
			}
			res := tc.resource
			if res == "" {
				res = runtimeWith(`slots = 1`)
			}
			cfg := fmt.Sprintf(`
provider "rill" {
  ledger_dsn           = %q
  provisioner_set_json = %q
  %s
}
%s`, acctest.SQLiteLedger(t), set, tc.extraProvider, res)
			if strings.Contains(tc.extraProvider, "ledger_dsn") {
				cfg = fmt.Sprintf("provider \"rill\" {\n  provisioner_set_json = %q\n  %s\n}\n%s", set, tc.extraProvider, res)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      cfg,
					PlanOnly:    true,
					ExpectError: tc.want,
				}},
			})
		})
	}
}

// Import IDs that cannot be imported: one without the provisioner part is rejected with the expected
// format; one the pool does not know fails instead of importing nothing, with the provisioner's reason
// (here the ledger, which no apply has created yet, does not exist) rather than only Terraform's
// "Cannot import non-existent remote object"; one naming a provisioner the set lacks says what the
// ID's first part must name.
func TestAccRuntime_importOfABadIDFails(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	config := acctest.ProviderBlock(ledger, "", acctest.Pool("p", hostA)) + runtimeWith(`slots = 1`)
	var steps []resource.TestStep
	for id, want := range map[string]*regexp.Regexp{
		"3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11":   acctest.WordsRegexp(`Expected "<provisioner>/<id>"`),
		"p/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11": regexp.MustCompile(`(?s)Runtime to import was not found.*does\s+not\s+exist.*rill_allocations`),
		"p/3F1C2A9E-0A4B-4D1E-9B7A-2F8F1C9D0E11": regexp.MustCompile(`(?s)Runtime to import was not found.*IDs\s+are\s+lower\s+case:\s+try\s+"3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11"`),
		"q/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11": regexp.MustCompile(`(?s)Invalid provisioner in import ID.*provisioner "q" is not in the provider's provisioner\s+set`),
	} {
		steps = append(steps, resource.TestStep{Config: config, ResourceName: "rill_runtime.rt", ImportState: true, ImportStateId: id, ExpectError: want})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProviderFactories, Steps: steps})
}

// An import that the pool it names does not find, in a set whose other runtime provisioner cannot be
// asked whether it holds the runtime (a kubeconfig that does not load, a cluster that does not
// answer), says so, naming that provisioner and why: the runtime may be its own. Before, the error
// was only "not found", which sent the user to the pool's ID and ledger.
func TestAccRuntime_importNotFoundNamesTheProvisionersThatCouldNotBeAsked(t *testing.T) {
	acctest.RequireAcc(t)
	kubeconfig := filepath.Join(t.TempDir(), "absent", "kubeconfig")
	k8s := fmt.Sprintf(`"k8s": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "kubeconfig_path": %q}}`, kubeconfig)
	config := acctest.ProviderBlock(acctest.SQLiteLedger(t), "p", acctest.Pool("p", hostA), k8s) + runtimeWith(`slots = 1`)
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProviderFactories, Steps: []resource.TestStep{{
		Config: config, ResourceName: "rill_runtime.rt", ImportState: true, ImportStateId: "p/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11",
		ExpectError: regexp.MustCompile(`(?s)Runtime to import was not found.*"k8s"\s+\(loading\s+kubeconfig_path.*if\s+it\s+is\s+one\s+of\s+theirs`),
	}}})
}
