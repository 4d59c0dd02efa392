package main

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
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

	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", ".")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	var main string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
		main = p.ImportPath // -deps lists the package itself last
	}
	if len(imports) < 50 {
		t.Fatalf("go list -deps listed %d packages: not the provider's dependencies", len(imports))
	}

	// Shortest import chains from the main package, breadth first.
	via := map[string]string{main: ""}
	queue := []string{main}
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
	chain := func(p string) string {
		var c []string
		for ; p != ""; p = via[p] {
			c = append([]string{p}, c...)
		}
		return strings.Join(c, " -> ")
	}
	var api []string
	for _, p := range slices.Sorted(maps.Keys(via)) {
		switch {
		case forbidden[p]:
			t.Errorf("the provider links %s: %s", p, chain(p))
		case strings.HasPrefix(p, "k8s.io/api/") && !allowedAPI[p]:
			api = append(api, p)
		}
	}
	if len(api) > 0 {
		t.Errorf("the provider links %d more packages of k8s.io/api than core/v1 and apps/v1 (%s), for instance %s",
			len(api), strings.Join(api, ", "), chain(api[0]))
	}
	if _, ok := via["k8s.io/client-go/dynamic"]; !ok {
		t.Error("k8s.io/client-go/dynamic is not linked: is the kubernetes provisioner still registered?")
	}
}
