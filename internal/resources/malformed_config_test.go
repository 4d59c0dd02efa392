package resources_test

import (
	"fmt"
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
	{name: "set is a list", set: `[{"type": "static"}]`, want: acctest.WordsRegexp(`provisioner set must be a JSON object of provisioner names`)},
	{name: "entry is a string", set: `{"p": "static"}`, want: acctest.WordsRegexp(`provisioner "p": must be an object`)},
	{name: "entry without type", set: `{"p": {"spec": {}}}`, want: acctest.WordsRegexp(`provisioner "p": type: is required; known types:`)},
	{name: "unknown type lists known ones", set: `{"p": {"type": "statik", "spec": {}}}`, want: regexp.MustCompile(`provisioner "p": type: unknown provisioner type "statik";\s+known\s+types:\s+.*static`)},
	{name: "type is a number", set: `{"p": {"type": 7, "spec": {}}}`, want: acctest.WordsRegexp(`provisioner "p": type: must be a string`)},
	{name: "spec is a list", set: `{"p": {"type": "static", "spec": []}}`, want: acctest.WordsRegexp(`provisioner "p": spec: must be a JSON object`)},
	{name: "set nested a million deep", set: strings.Repeat("[", 1_000_000), want: acctest.WordsRegexp(`provisioner set is nested more than 32 levels deep at line 1, column 33 (byte 32)`)},
	{name: "set larger than 1 MiB", set: `{"p": {"type": "static", "spec": {"x": "` + strings.Repeat("x", 1<<20) + `"}}}`, want: acctest.WordsRegexp(`provisioner set is 1048620 bytes; at most 1048576 are accepted`)},
	{name: "half a surrogate pair in a host", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h\ud8001:9091", "slots": 1}]}}}`, want: acctest.WordsRegexp(`provisioner set is not valid UTF-8 at line 1, column 66 (byte 65): \ud800 is half of a surrogate pair`)},
	// The Kubernetes spec: an image with a tag cannot work with the default deployment template.
	{name: "kubernetes image with a tag and the default template", set: `{"p": {"type": "kubernetes", "spec": {"host": "http://*.rt.test", "image": "rilldata/rill:v1"}}}`, want: acctest.WordsRegexp(`provisioner "p": spec.image: "rilldata/rill:v1" carries a tag or digest, and the default deployment template appends the runtime's version`)},
	// The static spec.
	{name: "runtimes is an object", set: `{"p": {"type": "static", "spec": {"runtimes": {"host": "http://h"}}}}`, want: acctest.WordsRegexp(`provisioner "p": spec.runtimes:`)},
	{name: "negative slots", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": -1}]}}}`, want: acctest.WordsRegexp(`provisioner "p": spec.runtimes[0].slots: must be between 0 (a drained host) and 2147483647, got -1`)},
	{name: "host slots above the bound", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": 2147483648}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].slots: must be between 0 (a drained host) and 2147483647, got 2147483648`)},
	{name: "host slots 2^63", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": 9223372036854775808}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].slots: number 9.223372036854776e+18 is out of range`)},
	{name: "slots as a string", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": "4"}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].slots: expected a whole number, got string "4"`)},
	{name: "fractional slots", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": 1.5}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].slots: expected a whole number, got 1.5`)},
	{name: "missing host", set: `{"p": {"type": "static", "spec": {"runtimes": [{"slots": 2}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].host: is required`)},
	{name: "host without scheme", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "localhost:9091", "slots": 2}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].host: must be an http:// or https:// URL`)},
	{name: "duplicate host", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": 2}, {"host": "http://h.test/", "slots": 1}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[1].host: "http://h.test" is the same host as runtimes[0]`)},
	{name: "duplicate host in upper case", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}, {"host": "HTTP://H1.test:9091", "slots": 1}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[1].host: "http://h1.test:9091" is the same host as runtimes[0]`)},
	{name: "duplicate host with /.", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}, {"host": "http://h1.test:9091/.", "slots": 1}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[1].host: "http://h1.test:9091" is the same host as runtimes[0]`)},
	{name: "duplicate host with a trailing dot", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test:9091", "slots": 1}, {"host": "http://h1.test.:9091", "slots": 1}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[1].host: "http://h1.test:9091" is the same host as runtimes[0]`)},
	{name: "duplicate host with the default port", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h1.test", "slots": 1}, {"host": "http://h1.test:80", "slots": 1}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[1].host: "http://h1.test" is the same host as runtimes[0]`)},
	{name: "bad audience_url", set: `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://h.test", "slots": 2, "audience_url": "aud"}]}}}`, want: acctest.WordsRegexp(`spec.runtimes[0].audience_url: must be an http:// or https:// URL`)},
	{name: "unknown placement", set: `{"p": {"type": "static", "spec": {"placement": "random", "runtimes": [{"host": "http://h.test", "slots": 2}]}}}`, want: acctest.WordsRegexp(`spec.placement: must be "spread" or "pack", got "random"`)},
	// Other provider attributes.
	{name: "default not in set", extraProvider: `default_provisioner = "q"`, want: acctest.WordsRegexp(`default_provisioner "q" is not in provisioner_set_json; known provisioners: p`)},
	{name: "ledger with unknown scheme", extraProvider: `ledger_dsn = "mysql://root@localhost/ledger"`, want: acctest.WordsRegexp(`Invalid ledger DSN`)},
	{name: "empty set", set: " ", want: acctest.WordsRegexp(`Missing provisioner set`)},
	// The resource.
	{name: "zero slots on the resource", resource: runtimeWith(`slots = 0`), want: acctest.WordsRegexp(`slots must be a whole number from 1 to 214748364, got 0.`)},
	{name: "fractional slots on the resource", resource: runtimeWith(`slots = 1.5`), want: acctest.WordsRegexp(`slots must be a whole number from 1 to 214748364, got 1.5.`)},
	// The value's last digits depend on the CLI: Terraform 1.5 hands the provider 2^63 as a float64
	// (9223372036854776000), 1.11 exactly.
	{name: "slots 2^63 on the resource", resource: runtimeWith(`slots = 9223372036854775808`), want: acctest.WordsRegexp(`slots must be a whole number from 1 to 214748364, got 922337203685477`)},
	{name: "slots beyond the ledger on the resource", resource: runtimeWith(`slots = 2147483648`), want: acctest.WordsRegexp(`slots must be a whole number from 1 to 214748364, got 2147483648.`)},
	{name: "override_disk_gb beyond 64 bits", resource: runtimeWith("slots = 1\noverride_disk_gb = 10000000000"), want: acctest.WordsRegexp(`override_disk_gb value must be between 1 and 8589934591, got: 10000000000`)},
	{name: "slots missing", resource: runtimeWith(`version = "v1"`), want: acctest.WordsRegexp(`The argument "slots" is required`)},
	{name: "unknown provisioner_name", resource: runtimeWith("slots = 1\nprovisioner_name = \"nope\""), want: acctest.WordsRegexp(`provisioner "nope" is not in the provider's provisioner set; known provisioners: p`)},
	{name: "empty version", resource: runtimeWith("slots = 1\nversion = \"\""), want: acctest.WordsRegexp(`Attribute version string length must be at least 1`)},
	{name: "environment set twice", resource: runtimeWith("slots = 1\nenvironment = \"prod\"\nannotations = { environment = \"dev\" }"), want: acctest.WordsRegexp(`Conflicting environment`)},
	{name: "slots as a word", resource: runtimeWith(`slots = "many"`), want: acctest.WordsRegexp(`Inappropriate value for attribute "slots"`)},
	{name: "unknown attribute", resource: runtimeWith("slots = 1\nslot = 2"), want: acctest.WordsRegexp(`An argument named "slot" is not expected here`)},
	{name: "bad timeout", resource: runtimeWith("slots = 1\ntimeouts {\n create = \"soon\"\n}"), want: regexp.MustCompile(`(?s)create.*(time: invalid duration|must be a string containing a sequence of decimal)`)},
}

// Every malformed configuration fails the plan with a diagnostic naming the field, and none crashes the
// provider (a crash would surface as "plugin crashed" and not match).
func TestAccConfig_malformedInputsNameTheField(t *testing.T) {
	acctest.RequireAcc(t)
	if len(malformedCases) < 20 {
		t.Fatalf("the table must hold at least 20 cases, has %d", len(malformedCases))
	}
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
			if tc.name == "ledger with unknown scheme" {
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
// format; one the pool does not know fails instead of importing nothing.
func TestAccRuntime_importOfABadIDFails(t *testing.T) {
	acctest.RequireAcc(t)
	ledger := acctest.SQLiteLedger(t)
	config := acctest.ProviderBlock(ledger, "", acctest.Pool("p", hostA)) + runtimeWith(`slots = 1`)
	var steps []resource.TestStep
	for id, want := range map[string]*regexp.Regexp{
		"3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11":   acctest.WordsRegexp(`Expected "<provisioner>/<id>"`),
		"p/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11": regexp.MustCompile(`Cannot import non-existent remote object`),
	} {
		steps = append(steps, resource.TestStep{Config: config, ResourceName: "rill_runtime.rt", ImportState: true, ImportStateId: id, ExpectError: want})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProviderFactories, Steps: steps})
}
