package main

import (
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The provider links only the Kubernetes API types it uses. client-go's typed clients, discovery
// client and REST mapper import k8s.io/client-go/kubernetes/scheme, which links the types of every
// Kubernetes API group (57 packages of k8s.io/api): 26 MB of binary, and 12-16 MB more RSS in
// every idle provider process, as the kernel maps the binary in. internal/kubernetes works with the
// dynamic client and a discovery reader of its own instead (internal/kubernetes/client.go); this
// test keeps it that way, naming the import chain that brings one of them back.
func TestMainPackageLinksNoKubernetesScheme(t *testing.T) {
	forbidden := map[string]bool{
		"k8s.io/client-go/kubernetes/scheme": true,
		"k8s.io/client-go/discovery":         true,
		"k8s.io/client-go/restmapper":        true,
	}
	allowedAPI := map[string]bool{"k8s.io/api/core/v1": true, "k8s.io/api/apps/v1": true}

	imports, roots := importGraph(t, ".")
	if len(imports) < 50 {
		t.Fatalf("go list -deps listed %d packages: not the provider's dependencies", len(imports))
	}
	chains := importChains(imports, roots[0])
	var api []string
	for _, p := range slices.Sorted(maps.Keys(chains)) {
		switch {
		case forbidden[p]:
			t.Errorf("the provider links %s: %s", p, chains[p])
		case strings.HasPrefix(p, "k8s.io/api/") && !allowedAPI[p]:
			api = append(api, p)
		}
	}
	if len(api) > 0 {
		t.Errorf("the provider links %d more packages of k8s.io/api than core/v1 and apps/v1 (%s), for instance %s",
			len(api), strings.Join(api, ", "), chains[api[0]])
	}
	if _, ok := chains["k8s.io/client-go/dynamic"]; !ok {
		t.Error("k8s.io/client-go/dynamic is not linked: is the kubernetes provisioner still registered?")
	}
}

// The layers of DESIGN.md ("Layers"), as imports: the Terraform layer speaks only the provisioner
// contract (Kubernetes, SQL and ClickHouse live behind it), the provider builds the provisioner set
// and the ledger and links the implementations only to register them, and the contract, the ledger
// and the provisioners know nothing of Terraform (they log through zap; internal/logging bridges
// that to tflog) nor of one another. Only non-test files count: tests may use real parts.
func TestLayersImportWhatDesignAllows(t *testing.T) {
	imports, _ := importGraph(t, "./internal/...")
	const (
		resources   = module + "/internal/resources"
		functions   = module + "/internal/functions" // the provider's functions: the Terraform layer, as resources
		provider    = module + "/internal/provider"
		contract    = module + "/internal/provisioner"
		static      = module + "/internal/static"
		kubernetes  = module + "/internal/kubernetes"
		clickhouse  = module + "/internal/clickhouse"
		database    = module + "/internal/database"
		hosturl     = module + "/internal/hosturl"
		envnames    = module + "/internal/envnames"
		logging     = module + "/internal/logging"
		rillmigrate = module + "/internal/rillmigrate"
		waits       = module + "/internal/waits" // the wording of an ended wait: every layer's, a leaf
	)
	// What lives behind the contract, by import path prefix.
	backends := []string{"database/sql", "k8s.io/", "sigs.k8s.io/", "github.com/ClickHouse/", "github.com/jackc/", "modernc.org/"}
	hasPrefix := func(p string, prefixes ...string) bool {
		return slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(p, pre) })
	}

	// The provisioners are what the provider links for their init's Register alone (import _): that
	// is how it links them, and nothing else of this module may it import so.
	var provisioners []string
	files, err := filepath.Glob("internal/provider/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			if path, _ := strconv.Unquote(spec.Path.Value); spec.Name != nil && spec.Name.Name == "_" && strings.HasPrefix(path, module+"/") {
				provisioners = append(provisioners, path)
			}
		}
	}
	if !slices.Contains(provisioners, static) {
		t.Fatalf("internal/provider links %v with import _; not the provisioners (no %s)", provisioners, static)
	}

	direct := func(pkg string, allowedOwn []string, forbidden ...string) {
		t.Helper()
		if _, ok := imports[pkg]; !ok {
			t.Fatalf("go list did not list %s", pkg)
		}
		for _, q := range imports[pkg] {
			switch {
			case strings.HasPrefix(q, module+"/") && !slices.Contains(allowedOwn, q):
				t.Errorf("%s imports %s; it may import, of this module, only %s", pkg, q, strings.Join(allowedOwn, ", "))
			case hasPrefix(q, forbidden...):
				t.Errorf("%s imports %s", pkg, q)
			}
		}
	}
	direct(resources, []string{contract, waits, envnames}, append(backends, "go.uber.org/zap")...)
	direct(functions, []string{contract}, append(backends, "go.uber.org/zap")...)
	direct(provider, append([]string{contract, resources, functions, database, envnames, logging, waits}, provisioners...), backends...)
	direct(waits, nil, "go.uber.org/zap", "github.com/hashicorp/")

	// Each backend's client library lives in its own package: Kubernetes in internal/kubernetes,
	// ClickHouse in internal/clickhouse, SQL in the ledger (and in migrate-rill-static, which reads
	// Rill admin's PostgreSQL). Test support (internal/testutil, internal/acctest) may use any.
	homes := map[string][]string{
		"k8s.io/": {kubernetes}, "sigs.k8s.io/": {kubernetes}, "github.com/ClickHouse/": {clickhouse},
		"github.com/jackc/": {database, rillmigrate}, "modernc.org/": {database}, "database/sql": {database},
	}
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		if !strings.HasPrefix(pkg, module+"/internal/") || hasPrefix(pkg, module+"/internal/testutil/", module+"/internal/acctest") {
			continue
		}
		for _, q := range imports[pkg] {
			for prefix, home := range homes {
				if strings.HasPrefix(q, prefix) && !slices.Contains(home, pkg) {
					t.Errorf("%s imports %s, which only %s may", pkg, q, strings.Join(home, " and "))
				}
			}
		}
	}

	// Behind the contract, nothing of Terraform, and no provisioner of another (migrate-rill-static
	// fills the static pool's ledger, so it may depend on that one).
	terraform := []string{provider, resources, logging, "github.com/hashicorp/terraform-plugin-"}
	for _, pkg := range append([]string{contract, database, hosturl, rillmigrate}, provisioners...) {
		forbidden := slices.Clone(terraform)
		for _, other := range provisioners {
			if other != pkg && (pkg != rillmigrate || other != static) {
				forbidden = append(forbidden, other)
			}
		}
		chains := importChains(imports, pkg)
		deps := slices.SortedFunc(maps.Keys(chains), func(a, b string) int { return len(chains[a]) - len(chains[b]) })
		for _, prefix := range forbidden {
			if i := slices.IndexFunc(deps, func(dep string) bool { return strings.HasPrefix(dep, prefix) }); i >= 0 {
				t.Errorf("%s depends on %s: %s", pkg, deps[i], chains[deps[i]])
			}
		}
	}
}

// module is this repository's module path, the prefix of its own packages.
const module = "github.com/rill-provisioner/terraform-provider-rill"

// importGraph is `go list -deps` of patterns: each package's direct imports, non-test files only,
// and the packages named by patterns (those -deps lists as the roots, in the order given).
func importGraph(t *testing.T, patterns ...string) (imports map[string][]string, roots []string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}, patterns...)...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	imports = map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			DepOnly    bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	return imports, roots
}

// importChains is the shortest import chain from root to each package it depends on, breadth first
// ("a -> b -> c").
func importChains(imports map[string][]string, root string) map[string]string {
	via := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range imports[p] {
			if _, seen := via[q]; !seen {
				via[q] = p
				queue = append(queue, q)
			}
		}
	}
	chains := map[string]string{}
	for p := range via {
		var c []string
		for q := p; q != ""; q = via[q] {
			c = append([]string{q}, c...)
		}
		chains[p] = strings.Join(c, " -> ")
	}
	return chains
}
