package resources

import (
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Resolve's errors list the provisioners to choose from; with none to list they say so instead of
// ending in "one of: " and nothing.
func TestResolveErrorsNeverEndInAnEmptyList(t *testing.T) {
	for _, name := range []string{"", "pool"} {
		_, _, err := (&Client{}).Resolve(name, provisioner.ResourceTypeRuntime)
		if err == nil || strings.HasSuffix(strings.TrimSpace(err.Error()), ":") || !strings.Contains(err.Error(), "the provisioner set is empty") {
			t.Errorf("Resolve(%q) on an empty set: %v", name, err)
		}
	}
}

// supportsOnly is a provisioner of type typ that provisions resources of type rt only; Resolve asks
// nothing else of it.
type supportsOnly struct {
	provisioner.Provisioner
	typ string
	rt  provisioner.ResourceType
}

func (s supportsOnly) Type() string                              { return s.typ }
func (s supportsOnly) Supports(rt provisioner.ResourceType) bool { return rt == s.rt }

// A resource that names no provisioner gets the one Rill's admin service would give it. Rill uses
// its default provisioner (RILL_ADMIN_DEFAULT_PROVISIONER, which must be in the set) for runtimes
// (admin/deployments.go, provisionRuntime), and provisions a ClickHouse resource with "a suitable
// provisioner", one of the set that supports the type, whatever the default (admin/server/provision.go
// passes no provisioner; admin/provision.go takes the first of the set that Supports it). Rill's
// whole environment pasted in (a default naming its runtime provisioner, a clickhouse-static one
// beside it) failed every rill_clickhouse without provisioner_name: "provisioner "k8s" (type
// kubernetes) cannot provision clickhouse resources".
func TestAResourceNamingNoProvisionerGetsTheOneRillWouldGiveIt(t *testing.T) {
	k8s := supportsOnly{typ: "kubernetes", rt: provisioner.ResourceTypeRuntime}
	pool := supportsOnly{typ: "static", rt: provisioner.ResourceTypeRuntime}
	ch := supportsOnly{typ: "clickhouse-static", rt: provisioner.ResourceTypeClickHouse}
	for _, tc := range []struct {
		name    string
		set     map[string]provisioner.Provisioner
		def     string
		rt      provisioner.ResourceType
		want    string
		wantErr string
	}{
		{"runtime: the default", map[string]provisioner.Provisioner{"k8s": k8s, "pool": pool, "ch": ch}, "k8s", provisioner.ResourceTypeRuntime, "k8s", ""},
		{"clickhouse: the set's one that can, beside a runtime default", map[string]provisioner.Provisioner{"k8s": k8s, "ch": ch}, "k8s", provisioner.ResourceTypeClickHouse, "ch", ""},
		{"clickhouse: a default that can", map[string]provisioner.Provisioner{"ch": ch, "ch2": ch, "k8s": k8s}, "ch2", provisioner.ResourceTypeClickHouse, "ch2", ""},
		{"clickhouse: no default, the set's one that can", map[string]provisioner.Provisioner{"k8s": k8s, "pool": pool, "ch": ch}, "", provisioner.ResourceTypeClickHouse, "ch", ""},
		{"runtime: no default, the set's one that can", map[string]provisioner.Provisioner{"pool": pool, "ch": ch}, "", provisioner.ResourceTypeRuntime, "pool", ""},
		{"clickhouse: several can, none is the default", map[string]provisioner.Provisioner{"k8s": k8s, "ch-a": ch, "ch-b": ch}, "k8s", provisioner.ResourceTypeClickHouse, "",
			`the default provisioner "k8s" (type kubernetes) cannot provision clickhouse resources, and several provisioners of the set can (ch-a, ch-b): set provisioner_name to one of them`},
		{"clickhouse: none can", map[string]provisioner.Provisioner{"k8s": k8s, "pool": pool}, "k8s", provisioner.ResourceTypeClickHouse, "",
			`provisioner "k8s" (type kubernetes) cannot provision clickhouse resources`},
		{"runtime: no default, several can", map[string]provisioner.Provisioner{"k8s": k8s, "pool": pool}, "", provisioner.ResourceTypeRuntime, "",
			"no provisioner given and the provider has no default_provisioner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, p, err := (&Client{Set: tc.set, Default: tc.def}).Resolve("", tc.rt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve: %q, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || p != tc.set[tc.want] {
				t.Fatalf("Resolve: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
