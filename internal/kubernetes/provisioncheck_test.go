package kubernetes

import (
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// CheckProvision renders the templates with the runtime's own data, as Provision does before its
// first write: a template that refuses some runtimes' slots, annotations or name fails their check
// with the template's message, and passes the others. Before, nothing checked a runtime's data
// before its apply (the set's sample render has slots 1 and placeholder annotations).
func TestCheckProvisionRendersTheRuntimesOwnData(t *testing.T) {
	guards := `{{ if gt .Slots 4 }}{{ fail "at most 4 slots on this cluster" }}{{ end }}` + "\n" +
		`{{ if not .Annotations.team }}{{ fail "annotation team is required" }}{{ end }}` + "\n" +
		`{{ if hasPrefix "tmp-" .Name }}{{ fail (printf "name %s: no temporary runtimes here" .Name) }}{{ end }}` + "\n"
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"deployment": guards + defaultDeploymentTemplate(t)}))
	if w := p.SpecWarnings(); len(w) != 1 || !strings.Contains(w[0].Message, "annotation team is required") {
		t.Fatalf("set warnings %v, want the sample's missing team", w)
	}
	p.SetName("k8s")
	team := map[string]string{"team": "data"}
	opts := func(slots int, annotations map[string]string, name string) *provisioner.ResourceOptions {
		return &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: slots}).AsMap(), Annotations: annotations, Name: name}
	}
	fresh := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime} // an unnamed create: no ID yet
	named := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime, ID: provisioner.NamedResourceID("k8s", "tmp-1")}
	existing := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime, ID: "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11",
		State: map[string]any{StateNamespace: "elsewhere"}}
	for _, c := range []struct {
		name string
		r    *provisioner.Resource
		opts *provisioner.ResourceOptions
		want string // "" for none
	}{
		{"fits", fresh, opts(4, team, ""), ""},
		{"too many slots", fresh, opts(5, team, ""), `deployment.yaml:1:`},
		{"too many slots, message", existing, opts(8, team, ""), `at most 4 slots on this cluster`},
		{"no team annotation", existing, opts(1, nil, ""), `annotation team is required`},
		{"a name the template refuses", named, opts(1, team, "tmp-1"), `name tmp-1: no temporary runtimes here`},
		{"a name it takes", named, opts(1, team, "web"), ""},
		{"bad args", fresh, &provisioner.ResourceOptions{Args: map[string]any{"slots": "many"}}, `slots`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.CheckProvision(c.r, c.opts)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
	// What the check renders is what Provision renders: the state's namespace, the set's name.
	data := p.runtimeData("x", p.namespaceOf(parseState(existing.State)), &provisioner.RuntimeArgs{Slots: 1}, opts(1, team, ""))
	if data.Namespace != "elsewhere" || data.Provisioner != "k8s" {
		t.Fatalf("data namespace %q, provisioner %q", data.Namespace, data.Provisioner)
	}
}

// A duplicate key that only the runtime's data makes (an annotation the template also writes) is a
// warning of its check, as it is of its apply; the sample's own are not repeated.
func TestCheckProvisionWarnsOfWhatTheRuntimesDataMakes(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    app: a\n    app: b\n  annotations:\n" +
		"    {{- range $k, $v := .Annotations }}\n    {{ $k }}: {{ $v | quote }}\n    {{- end }}\n    app: c\n" +
		"spec:\n  ports: [{name: http, port: 8080}]\n"
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"service": svc}))
	r := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime}
	w, err := p.CheckProvision(r, &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap(), Annotations: map[string]string{"app": "x"}})
	if err != nil || len(w) != 1 || !strings.Contains(w[0], `duplicate key "app"`) {
		t.Fatalf("warnings %v (%v), want the annotations' duplicate app", w, err)
	}
	if w, err = p.CheckProvision(r, &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}); err != nil || len(w) != 0 {
		t.Fatalf("warnings %v (%v), want none", w, err)
	}
}
