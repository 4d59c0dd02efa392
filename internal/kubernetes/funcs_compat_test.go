package kubernetes

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// Rill's admin service renders templates with Sprig's functions less env and expandenv, and no
// others (admin/provisioner/kubernetes/kubernetes.go in rilldata/rill). Every function the templates
// may call here beyond those is this provider's addition, which a template written for Rill cannot
// call; the compatibility guide's row of additions names each, and no guide calls one Rill's.
// sanitizeLabel was called "Rill's sanitizeLabel" where Rill has no such function.
func TestTemplateFunctionsBeyondSprigAreDocumentedAsAdditions(t *testing.T) {
	sprigFuncs := sprig.TxtFuncMap()
	var added []string
	for name := range templateFuncs() {
		if _, ok := sprigFuncs[name]; !ok {
			added = append(added, name)
		}
	}
	slices.Sort(added)
	if len(added) == 0 {
		t.Fatal("no function beyond Sprig's: update this test")
	}

	guide, err := os.ReadFile("../../docs-templates/guides/rill-compatibility.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(guide), "\n") {
		if strings.HasPrefix(line, "| `.Hostname`") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("the compatibility guide has no row of additions starting with `.Hostname`")
	}
	cells := strings.Split(row, " | ")
	if len(cells) < 3 || !strings.Contains(cells[1], "fails in Rill") {
		t.Fatalf("unexpected row of additions: %s", row)
	}
	for _, name := range added {
		if !strings.Contains(cells[0], "`"+name+"`") {
			t.Errorf("the compatibility guide's row of additions does not name %s, which Rill's admin service lacks: %s", name, cells[0])
		}
	}

	for _, path := range []string{
		"../../docs-templates/guides/rill-compatibility.md.tmpl",
		"../../docs-templates/guides/migrating-from-rill-admin.md.tmpl",
		"README.md",
		"funcs.go",
		"../../templates/templates.go",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		for _, name := range added {
			for _, claim := range []string{"Rill's " + name, "Rill's `" + name + "`", "(`" + name + "`) it is an error"} {
				if strings.Contains(text, claim) {
					t.Errorf("%s says %q: %s is this provider's addition, not Rill's", path, claim, name)
				}
			}
		}
	}
}
