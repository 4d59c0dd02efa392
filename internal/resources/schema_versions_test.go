package resources

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

var updateSchemaSnapshots = flag.Bool("update-schema-snapshots", false,
	"record attributes added to the current schema version of each resource in testdata/schemas (never a removal or a type change)")

// TestSchemaSnapshots keeps the promise behind schema versions: a state written under version N by any
// release decodes under version N. testdata/schemas holds, per resource and version, the Terraform
// type of every attribute and block. Earlier versions (reached through UpgradeState's PriorSchema)
// must match their record exactly; the current one may only grow, and a new attribute is recorded
// with -update-schema-snapshots. A removal or a type change fails with what to do instead: a new
// version with an upgrader (runtime_schema.go).
func TestSchemaSnapshots(t *testing.T) {
	ctx := context.Background()
	for _, r := range []resource.Resource{NewRuntimeResource(), NewClickHouseResource()} {
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "rill"}, &meta)
		t.Run(meta.TypeName, func(t *testing.T) {
			var resp resource.SchemaResponse
			r.Schema(ctx, resource.SchemaRequest{}, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatalf("schema: %v", resp.Diagnostics)
			}
			if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
				t.Fatalf("schema implementation: %v", diags)
			}
			current := resp.Schema.Version
			upgraders := r.(resource.ResourceWithUpgradeState).UpgradeState(ctx)
			for v := range upgraders {
				if v < 0 || v >= current {
					t.Errorf("UpgradeState has an upgrader from version %d; the current version is %d", v, current)
				}
			}
			for v := int64(0); v < current; v++ {
				u, ok := upgraders[v]
				if !ok || u.PriorSchema == nil || u.StateUpgrader == nil {
					t.Errorf("version %d: no upgrader with its PriorSchema to the current version %d: states written under %d could not be read", v, current, v)
					continue
				}
				recorded := readSchemaSnapshot(t, meta.TypeName, v)
				if added, problems := compareSchemaSnapshot(recorded, schemaTypes(ctx, *u.PriorSchema), true); len(added)+len(problems) > 0 {
					t.Errorf("version %d is frozen (a state written under it must decode as it was recorded), but its schema changed: %s",
						v, strings.Join(append(problems, added...), "; "))
				}
			}

			got := schemaTypes(ctx, resp.Schema)
			recorded := readSchemaSnapshot(t, meta.TypeName, current)
			added, problems := compareSchemaSnapshot(recorded, got, false)
			for _, p := range problems {
				t.Errorf("version %d (current): %s: states written by earlier releases under version %d would no longer decode; "+
					"make a new schema version with an upgrader instead (see runtime_schema.go)", current, p, current)
			}
			if len(added) == 0 || len(problems) > 0 {
				return
			}
			if !*updateSchemaSnapshots {
				t.Errorf("version %d (current): %s; if that is intended (an optional or computed attribute needs no new version), record it with "+
					"`go test ./internal/resources -run TestSchemaSnapshots -update-schema-snapshots`", current, strings.Join(added, "; "))
				return
			}
			writeSchemaSnapshot(t, meta.TypeName, current, got)
		})
	}
}

// compareSchemaSnapshot lists what current adds to recorded, and what it removes or retypes. With frozen,
// nothing may be added either.
func compareSchemaSnapshot(recorded, current map[string]string, frozen bool) (added, problems []string) {
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		typ, ok := current[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%q was removed (recorded as %s)", name, recorded[name]))
		case typ != recorded[name]:
			problems = append(problems, fmt.Sprintf("%q changed type from %s to %s", name, recorded[name], typ))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(current)) {
		if _, ok := recorded[name]; !ok {
			msg := fmt.Sprintf("%q (%s) is not recorded", name, current[name])
			if frozen {
				problems = append(problems, msg)
			} else {
				added = append(added, msg)
			}
		}
	}
	return added, problems
}

func TestCompareSchemaSnapshot(t *testing.T) {
	recorded := map[string]string{"id": "tftypes.String", "slots": "tftypes.Number"}
	for _, tc := range []struct {
		name            string
		current         map[string]string
		frozen          bool
		added, problems int
	}{
		{"same", map[string]string{"id": "tftypes.String", "slots": "tftypes.Number"}, false, 0, 0},
		{"added to the current version", map[string]string{"id": "tftypes.String", "slots": "tftypes.Number", "x": "tftypes.Bool"}, false, 1, 0},
		{"added to a frozen version", map[string]string{"id": "tftypes.String", "slots": "tftypes.Number", "x": "tftypes.Bool"}, true, 0, 1},
		{"removed", map[string]string{"id": "tftypes.String"}, false, 0, 1},
		{"retyped", map[string]string{"id": "tftypes.String", "slots": "tftypes.Int64"}, false, 0, 1},
		{"renamed", map[string]string{"id": "tftypes.String", "slot_count": "tftypes.Number"}, false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			added, problems := compareSchemaSnapshot(recorded, tc.current, tc.frozen)
			if len(added) != tc.added || len(problems) != tc.problems {
				t.Errorf("added %q, problems %q; want %d and %d", added, problems, tc.added, tc.problems)
			}
		})
	}
}

// schemaTypes is the Terraform type of each attribute and block of a schema: what a state must match to
// decode.
func schemaTypes(ctx context.Context, s schema.Schema) map[string]string {
	out := map[string]string{}
	for name, a := range s.Attributes {
		out[name] = a.GetType().TerraformType(ctx).String()
	}
	for name, b := range s.Blocks {
		out[name] = b.Type().TerraformType(ctx).String()
	}
	return out
}

func schemaSnapshotPath(typeName string, version int64) string {
	return filepath.Join("testdata", "schemas", fmt.Sprintf("%s.v%d.json", typeName, version))
}

func readSchemaSnapshot(t *testing.T, typeName string, version int64) map[string]string {
	t.Helper()
	b, err := os.ReadFile(schemaSnapshotPath(typeName, version))
	if os.IsNotExist(err) && *updateSchemaSnapshots {
		return map[string]string{}
	}
	if err != nil {
		t.Fatalf("no record of %s schema version %d (run with -update-schema-snapshots to make it): %v", typeName, version, err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", schemaSnapshotPath(typeName, version), err)
	}
	return m
}

func writeSchemaSnapshot(t *testing.T, typeName string, version int64, types map[string]string) {
	t.Helper()
	b, err := json.MarshalIndent(types, "", "  ") // sorted keys: stable diffs
	if err != nil {
		t.Fatal(err)
	}
	p := schemaSnapshotPath(typeName, version)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", p)
}
