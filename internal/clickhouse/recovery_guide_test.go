package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
)

// recoveryGuide is the generated guide whose ClickHouse section users follow.
const recoveryGuide = "../../docs/guides/recovering-orphaned-runtimes.md"

// The ClickHouse query of the recovery guide, its annotation list written as the guide says (keys and
// values as in the configuration, in SQL strings), finds the databases whose COMMENT the provider
// wrote for annotations that hold characters JSON escapes (`"`, `\`, and `<`, `>`, `&`, which Go's
// json.Marshal writes as \u003c, \u003e, \u0026) or SQL escapes (`'`, `\`), and only those: not a
// database whose annotations have one key more (Rill admin's) or another value, nor one without
// annotations, which `[]` finds (and not one whose comment is not JSON). TestAccClickHouse_recoveringWhatAKilledCreateLeftGuide follows the
// whole section with the guide's plain example annotations; this runs only the query, on chDB.
func TestIntegrationRecoveryGuideQueryFindsAnnotationsWithAnyCharacters(t *testing.T) {
	b, err := os.ReadFile(recoveryGuide)
	if err != nil {
		t.Fatal(err)
	}
	var query string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(m[1], "FROM system.databases") {
			query = m[1]
		}
	}
	// The list the guide says to replace with one ('<key>', '<value>') per annotation.
	example := "[('organization_name', 'acme'), ('project_name', 'web')]"
	if strings.Count(query, example) != 1 {
		t.Fatalf("%s: no ClickHouse query with the annotation list %s", recoveryGuide, example)
	}
	// The guide's escapes for a SQL string: \\ for a backslash, \' for a single quote, \n for a line break.
	sqlString := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	list := func(annotations map[string]string) string {
		var items []string
		for k, v := range annotations { // in any order, as the guide says
			items = append(items, fmt.Sprintf("('%s', '%s')", sqlString.Replace(k), sqlString.Replace(v)))
		}
		return "[" + strings.Join(items, ", ") + "]"
	}

	wanted := map[string]string{
		"organization_name":         `O'Brien & <Sons> "Ltd"`,
		"project_name":              `web\prod ` + "é\nline two",
		`key "with" 'quotes' \ <&>`: "",
	}
	withRillKeys := map[string]string{"organization_id": uuid.NewString()}
	otherValue := map[string]string{}
	for k, v := range wanted {
		withRillKeys[k], otherValue[k] = v, v
	}
	otherValue["organization_name"] = `O'Brien & <Sons> \"Ltd\"`

	srv := chdbtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	databases := map[string]string{} // name: what it is
	for what, annotations := range map[string]map[string]string{"wanted": wanted, "with Rill's keys": withRillKeys,
		"another value": otherValue, "no annotations": nil} {
		if annotations == nil {
			annotations = map[string]string{}
		}
		comment, err := json.Marshal(annotations) // as Provision does
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(comment), `\u003c`) && len(annotations) > 0 {
			t.Fatalf("the comment %s escapes no <: the test would not cover json.Marshal's escapes", comment)
		}
		id := uuid.NewString()
		db := databaseName(id, annotations)
		create, _ := provisionStatements(db, userName(id), "unused", "", string(comment), &serverFeatures{userOptions: true})
		if _, err := srv.Query(ctx, create[0].sql); err != nil {
			t.Fatalf("%s: %v", create[0].sql, err)
		}
		databases[db] = what
	}
	// A database of the same form whose comment is not the provider's (not JSON): `[]` must not find it.
	byHand := databaseName(uuid.NewString(), nil)
	if _, err := srv.Query(ctx, "CREATE DATABASE "+quoteIdent(byHand)+" COMMENT 'made by hand'"); err != nil {
		t.Fatal(err)
	}
	databases[byHand] = "a comment not JSON"

	for _, c := range []struct {
		annotations map[string]string
		want        string
	}{{wanted, "wanted"}, {nil, "no annotations"}} {
		q := strings.Replace(query, example, list(c.annotations), 1)
		out, err := srv.Query(ctx, q)
		if err != nil {
			t.Fatalf("the guide's query, for the annotations %q: %v\n%s", c.annotations, err, q)
		}
		var found struct{ Data []struct{ Database string } }
		if err := json.Unmarshal([]byte(out), &found); err != nil {
			t.Fatalf("the guide's query's output: %v\n%s", err, out)
		}
		var got []string
		for _, d := range found.Data {
			got = append(got, databases[d.Database]+" "+d.Database)
		}
		var want []string
		for db, what := range databases {
			if what == c.want {
				want = append(want, what+" "+db)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the guide's query, for the annotations %q, finds %q; want %q\n%s", c.annotations, got, want, q)
		}
	}
}
