package kubernetes

import (
	"context"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
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

// A claim template whose size is not the runtime's (a fixed "100Gi", twice .StorageBytes) is refused by
// the runtime's plan, naming the file, the rendered size and the expected one, and saying to use
// {{ .StorageBytes }}: the runtime's storage_bytes is its claim's size, which rill_runtime's plan
// computes as 40 GiB per slot or override_disk_gb, so the apply's result would be inconsistent (a
// create tainted). The set itself is accepted (its sample render is no runtime's data): a fixed size
// fits the runtimes whose override_disk_gb is that size, and so does the default template. Before,
// only a missing size was refused, and every create failed in Terraform after its apply.
func TestCheckProvisionRefusesAClaimNotOfTheRuntimesSize(t *testing.T) {
	claim := func(storage string) string {
		return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{ .Names.PVC }}\nspec:\n" +
			"  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: " + storage + "\n"
	}
	args := func(slots int, diskGB int64) *provisioner.ResourceOptions {
		return &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: slots, OverrideDiskGB: diskGB}).AsMap()}
	}
	fresh := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime}
	existing := &provisioner.Resource{Type: provisioner.ResourceTypeRuntime, ID: "3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11",
		State: map[string]any{StateNamespace: "rill"}}
	for _, c := range []struct {
		name, storage string
		r             *provisioner.Resource
		opts          *provisioner.ResourceOptions
		want          []string // nil: no error
	}{
		{"fixed size, 1 slot", `100Gi`, fresh, args(1, 0),
			[]string{"pvc.yaml: ", "requests 100Gi (107374182400 bytes)", "size is 40Gi (42949672960 bytes)", `"{{ .StorageBytes }}"`, "override_disk_gb"}},
		{"fixed size, an update to 3 slots", `100Gi`, existing, args(3, 0), []string{"requests 100Gi", "size is 120Gi (128849018880 bytes)"}},
		{"fixed size, override_disk_gb of that size", `100Gi`, fresh, args(1, 100), nil},
		{"fixed size in bytes, override of that size", `"107374182400"`, existing, args(5, 100), nil},
		{"twice the size", `"{{ mul .StorageBytes 2 }}"`, fresh, args(2, 0), []string{"requests 160Gi (171798691840 bytes)", "size is 80Gi (85899345920 bytes)"}},
		{"one byte more", `"{{ add .StorageBytes 1 }}"`, fresh, args(1, 0), []string{"requests 42949672961 bytes"}},
		{"a fraction", `"0.5"`, fresh, args(1, 0), []string{"requests 500m"}},
		{"the runtime's size", `"{{ .StorageBytes }}"`, existing, args(3, 0), nil},
		{"the runtime's size in Gi", `"{{ div .StorageBytes 1073741824 }}Gi"`, fresh, args(2, 7), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProvisioner(t, specWithTemplates(t, map[string]string{"pvc": claim(c.storage)}))
			if w := p.SpecWarnings(); len(w) != 0 {
				t.Fatalf("set warnings %v, want none: the sample's size is no runtime's", w)
			}
			_, err := p.CheckProvision(c.r, c.opts)
			if c.want == nil {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error, got none")
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
	// The default template sizes the claim as the runtime asks, whatever the slots and override.
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com"}`)
	for _, o := range []*provisioner.ResourceOptions{args(1, 0), args(7, 0), args(2, 500)} {
		if _, err := p.CheckProvision(fresh, o); err != nil {
			t.Fatalf("the default templates with %v: %v", o.Args, err)
		}
	}
}

// Provision refuses a claim not of the runtime's size as its plan's check does, before it contacts the
// cluster at all, so before any write: nothing to record or undo. Before, it applied the claim, and
// Terraform refused the result.
func TestProvisionRefusesAClaimNotOfTheRuntimesSizeBeforeContactingTheCluster(t *testing.T) {
	srv := newFakeNonKubernetesServer(t)
	spec := specWithTemplates(t, map[string]string{"pvc": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: x\n" +
		"spec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 100Gi\n"})
	spec = strings.TrimSuffix(spec, "}") + `, "kubeconfig_path": "` + k8stest.WriteKubeconfig(t, "", srv.URL, "test-token") + `"}`
	p := mustProvisioner(t, spec)
	opts := &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 2}).AsMap()}
	for _, r := range []*provisioner.Resource{runtimeResource(), // a create
		{ID: runtimeResource().ID, Type: provisioner.ResourceTypeRuntime, State: map[string]any{StateNamespace: "rill"}}} { // an update
		out, created, err := p.ProvisionReportingCreation(context.Background(), r, opts)
		if err == nil || !strings.Contains(err.Error(), "requests 100Gi") || !strings.Contains(err.Error(), "size is 80Gi") {
			t.Fatalf("want the size error, got %v", err)
		}
		if out != nil || created {
			t.Fatalf("refused before any write, got %+v, created %v", out, created)
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("the cluster got %d requests, want none", n)
	}
}
