package envnames

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The benchmarks unset every variable the provider falls back to (scripts/lib-bench.sh,
// unset_measurement_env), so that nothing from the caller's environment changes what they measure:
// a variable added here is read from this file's constants and must be unset there too.
func TestBenchmarksUnsetEveryVariableOfTheProvider(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "envnames.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok {
			for _, value := range v.Values {
				if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					names = append(names, name)
				}
			}
		}
		return true
	})
	if len(names) < 4 {
		t.Fatalf("read %d names from envnames.go: %v", len(names), names)
	}
	lib, err := os.ReadFile("../../scripts/lib-bench.sh")
	if err != nil {
		t.Fatal(err)
	}
	unset := regexp.MustCompile(`(?s)unset_measurement_env\(\) \{\n(.*?)\n\}`).FindSubmatch(lib)
	if unset == nil {
		t.Fatal("scripts/lib-bench.sh defines no unset_measurement_env")
	}
	for _, name := range names {
		if !regexp.MustCompile(`\b` + name + `\b`).Match(unset[1]) {
			t.Errorf("scripts/lib-bench.sh's unset_measurement_env does not unset %s", name)
		}
	}
}
