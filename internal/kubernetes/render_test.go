package kubernetes

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/seterrors"
)

const testPID = "6f9619ff8b86d011b42d00cf4fc964ff"

func mustProvisioner(t *testing.T, spec string) *Provisioner {
	t.Helper()
	p, err := newProvisioner([]byte(spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// renderRuntime renders the default templates and returns the objects by template name.
func renderRuntime(t *testing.T, p *Provisioner, args *provisioner.RuntimeArgs, opts *provisioner.ResourceOptions) map[string]*renderedObject {
	t.Helper()
	objs, _, err := p.templates.render(newTemplateData(p.spec, testPID, args, opts))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*renderedObject{}
	for _, o := range objs {
		out[o.slot.field] = o
	}
	return out
}

func convert[T any](t *testing.T, ro *renderedObject) *T {
	t.Helper()
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ro.obj.Object, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func TestRenderNamesLabelsAndAnnotations(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com", "namespace": "rill"}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 2, Version: "v0.51.0"}, nil)
	wantNames := map[string]string{
		"deployment": "runtime-" + testPID, "service": "runtime-" + testPID, "pvc": "runtime-" + testPID,
		"http_ingress": "http-runtime-" + testPID, "grpc_ingress": "grpc-runtime-" + testPID,
	}
	wantKinds := map[string]string{
		"deployment": "Deployment", "service": "Service", "pvc": "PersistentVolumeClaim",
		"http_ingress": "Ingress", "grpc_ingress": "Ingress",
	}
	if len(objs) != 5 {
		t.Fatalf("want 5 objects, got %d", len(objs))
	}
	for field, o := range objs {
		if o.obj.GetName() != wantNames[field] || o.obj.GetKind() != wantKinds[field] || o.obj.GetNamespace() != "rill" {
			t.Errorf("%s: got %s %s/%s", field, o.obj.GetKind(), o.obj.GetNamespace(), o.obj.GetName())
		}
		l := o.obj.GetLabels()
		if l[LabelManagedBy] != "terraform-provider-rill" || l[LabelInstance] != testPID {
			t.Errorf("%s: labels %v", field, l)
		}
		a := o.obj.GetAnnotations()
		if a[AnnotationSlots] != "2" || a[AnnotationVersion] != "v0.51.0" || a[AnnotationHibernated] != "false" ||
			a[AnnotationTemplatesChecksum] != p.templates.checksum || len(p.templates.checksum) != 64 ||
			a[AnnotationTemplateInputs] != `{"data_dir":"/data","host":"`+testPID+`.rt.example.com","image":"rilldata/rill"}` {
			t.Errorf("%s: annotations %v", field, a)
		}
	}
	if objs["grpc_ingress"].obj.GetAnnotations()["nginx.ingress.kubernetes.io/backend-protocol"] != "GRPC" {
		t.Error("the template's own annotations must be kept")
	}
	dep := convert[appsv1.Deployment](t, objs["deployment"])
	if dep.Spec.Template.Labels[LabelInstance] != testPID || dep.Spec.Template.Labels[LabelManagedBy] != ManagedByValue {
		t.Errorf("pod labels %v", dep.Spec.Template.Labels)
	}
}

// A named runtime's name reaches every object: as an annotation (any length), and hashed as a label
// (a valid label value, for selectors); pods carry the label too.
func TestRenderNamedRuntimeCarriesItsName(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com", "namespace": "rill"}`)
	name := strings.Repeat("orders.", 30) + "eu" // longer than a label value may be
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Name: name})
	for field, o := range objs {
		if o.obj.GetAnnotations()[AnnotationName] != name || o.obj.GetLabels()[LabelNameHash] != NameHash(name) {
			t.Errorf("%s: annotations %v labels %v", field, o.obj.GetAnnotations(), o.obj.GetLabels())
		}
	}
	if errs := validation.IsValidLabelValue(NameHash(name)); len(errs) > 0 {
		t.Errorf("name hash %q is not a label value: %v", NameHash(name), errs)
	}
	dep := convert[appsv1.Deployment](t, objs["deployment"])
	if dep.Spec.Template.Labels[LabelNameHash] != NameHash(name) {
		t.Errorf("pod labels %v", dep.Spec.Template.Labels)
	}
	unnamed := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, nil)
	if _, ok := unnamed["deployment"].obj.GetLabels()[LabelNameHash]; ok {
		t.Error("an unnamed runtime carries a name label")
	}
}

func TestRenderSizesScaleWithSlots(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com", "data_dir": "/mnt/data"}`)
	for _, slots := range []int{1, 2, 5} {
		objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: slots}, nil)
		dep := convert[appsv1.Deployment](t, objs["deployment"])
		ct := dep.Spec.Template.Spec.Containers[0]
		wantCPU := resource.MustParse(string(rune('0' + slots)))
		wantMem := resource.MustParse(string(rune('0'+4*slots%10)) + "Gi")
		if slots == 5 {
			wantMem = resource.MustParse("20Gi")
		}
		for _, l := range []corev1.ResourceList{ct.Resources.Requests, ct.Resources.Limits} {
			if c := l[corev1.ResourceCPU]; c.Cmp(wantCPU) != 0 {
				t.Errorf("%d slots: cpu %s, want %s", slots, c.String(), wantCPU.String())
			}
			if m := l[corev1.ResourceMemory]; m.Cmp(wantMem) != 0 {
				t.Errorf("%d slots: memory %s, want %s", slots, m.String(), wantMem.String())
			}
		}
		pvc := convert[corev1.PersistentVolumeClaim](t, objs["pvc"])
		if s := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; s.Value() != int64(slots)*40*1024*1024*1024 {
			t.Errorf("%d slots: storage %d", slots, s.Value())
		}
		if *dep.Spec.Replicas != 1 {
			t.Errorf("replicas %d", *dep.Spec.Replicas)
		}
		if ct.VolumeMounts[0].MountPath != "/mnt/data" || dep.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "runtime-"+testPID {
			t.Errorf("volume not mounted at data_dir: %+v", ct.VolumeMounts)
		}
		if strings.Join(ct.Command, " ")+" "+strings.Join(ct.Args, " ") != "rill runtime start" {
			t.Errorf("command %v %v", ct.Command, ct.Args)
		}
	}
}

func TestRenderHibernatedScalesToZero(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com"}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1, Hibernated: true}, nil)
	dep := convert[appsv1.Deployment](t, objs["deployment"])
	if *dep.Spec.Replicas != 0 || dep.Annotations[AnnotationHibernated] != "true" {
		t.Fatalf("replicas %d, annotations %v", *dep.Spec.Replicas, dep.Annotations)
	}
}

func TestRenderImageTagPrecedence(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com", "image": "registry.local:5000/rill"}`)
	cases := []struct{ version, rill, want string }{
		{"v1.2.3", "v9.9.9", "v1.2.3"},
		{"", "v9.9.9", "v9.9.9"},
		{"", "", "latest"},
		{"latest", "v9.9.9", "v9.9.9"}, // "latest" follows the Rill version, as in Rill
		{"latest", "", "latest"},
	}
	for _, tc := range cases {
		objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1, Version: tc.version}, &provisioner.ResourceOptions{RillVersion: tc.rill})
		dep := convert[appsv1.Deployment](t, objs["deployment"])
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != "registry.local:5000/rill:"+tc.want {
			t.Errorf("version %q, rill %q: image %q, want tag %q", tc.version, tc.rill, got, tc.want)
		}
	}
}

func TestRenderHostsAndServicePorts(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com:8443"}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, nil)
	for _, f := range []string{"http_ingress", "grpc_ingress"} {
		ing := convert[networkingv1.Ingress](t, objs[f])
		if h := ing.Spec.Rules[0].Host; h != testPID+".rt.example.com" {
			t.Errorf("%s host %q", f, h)
		}
		if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b.Name != "runtime-"+testPID {
			t.Errorf("%s backend %+v", f, b)
		}
	}
	svc := convert[corev1.Service](t, objs["service"])
	ports := map[string]int32{}
	for _, pt := range svc.Spec.Ports {
		ports[pt.Name] = pt.Port
	}
	if ports["http"] != 8080 || ports["grpc"] != 9090 || svc.Spec.Selector[LabelInstance] != testPID {
		t.Errorf("service %+v", svc.Spec)
	}
	data := newTemplateData(p.spec, testPID, &provisioner.RuntimeArgs{Slots: 1}, nil)
	if data.Host != testPID+".rt.example.com:8443" || data.Hostname != testPID+".rt.example.com" {
		t.Errorf("Host %q Hostname %q", data.Host, data.Hostname)
	}
}

func writeTemplate(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// defaultDeploymentTemplate is the text of the default deployment template, which tests edit.
func defaultDeploymentTemplate(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deploymentTemplateWith writes the default deployment template with its one occurrence of old
// replaced by new, and returns its path.
func deploymentTemplateWith(t *testing.T, old, new string) string {
	t.Helper()
	text := defaultDeploymentTemplate(t)
	if strings.Count(text, old) != 1 {
		t.Fatalf("the default deployment template changed shape (%q is not in it once); update this test", old)
	}
	return writeTemplate(t, "deployment.yaml", strings.Replace(text, old, new, 1))
}

func TestTemplateErrorsNameFileAndLine(t *testing.T) {
	const header = "apiVersion: v1\nkind: Service\nmetadata:\n"
	cases := []struct {
		name, slot, text, want string
	}{
		{"parse error", "service", header + "  name: {{ .Names.Service }\n", ":4: "},
		{"unknown function", "service", header + "  name: {{ nope .Names.Service }}\n", `:4: function "nope" not defined`},
		{"unknown field", "service", header + "  name: x\n  labels:\n    a: {{ .Nope }}\n", ":6:"},
		// Sprig's env and expandenv would read the provider's environment (secrets) into a cluster.
		{"env", "service", header + "  name: x\n  labels:\n    a: {{ env \"HOME\" }}\n", `:6: function "env" not defined`},
		{"expandenv", "service", header + "  name: x\n  labels:\n    a: {{ expandenv \"$HOME\" }}\n", `:6: function "expandenv" not defined`},
		{"invalid YAML", "service", header + "  name: x\n\tlabels: {}\n", ":5: not valid YAML"},
		{"invalid YAML in a later document", "service", "# c\n---\n" + header + "  name: x\n\tlabels: {}\n", ":7: not valid YAML"},
		// Execution errors that no data can avoid fail the plan; others are warnings (see TestSampleRenderHasRillsAnnotationsAndWarnsOnExecutionErrors).
		{"undefined template", "service", header + "  name: x\n  labels:\n    {{- template \"nope\" . }}\n", `:6:17: at <{{template "nope" .}}>: template "nope" not defined`},
		// Mistakes of the template's own fail with every runtime's data: the data's types are fixed.
		{"wrong type", "service", header + "  name: x\n  labels:\n    a: {{ .Slots | upper }}\n", `:6:19: at <upper>: wrong type for value`},
		{"index of a struct", "service", header + "  name: x\n  labels:\n    a: {{ index .Names \"x\" }}\n", `:6:10: at <index .Names "x">: error calling index`},
		{"field of a string", "service", header + "  name: x\n  labels:\n    a: {{ .Image.Foo }}\n", `:6:16: at <.Image.Foo>: can't evaluate field Foo in type string`},
		{"wrong kind", "deployment", header + "  name: x\n", "must render a Deployment.apps, got Service"},
		{"no kind", "service", "metadata:\n  name: x\n", "apiVersion and kind"},
		{"empty", "service", "# nothing\n", "empty"},
		{"no storage", "pvc", "apiVersion: v1\nkind: PersistentVolumeClaim\nspec: {}\n", "spec.resources.requests.storage"},
		{"no containers", "deployment", "apiVersion: apps/v1\nkind: Deployment\nspec: {}\n", "no containers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemplate(t, tc.slot+".yaml", tc.text)
			spec := `{"host": "http://*.x", "template_paths": {"` + tc.slot + `": "` + path + `"}}`
			_, err := newProvisioner([]byte(spec), nil)
			if err == nil {
				t.Fatal("expected an error")
			}
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) || fe.Path != "template_paths."+tc.slot {
				t.Fatalf("want a FieldError on template_paths.%s, got %T %v", tc.slot, err, err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q should name %s and contain %q", err, path, tc.want)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "template: ") {
				t.Fatalf("error %q keeps text/template's prefix", err)
			}
		})
	}
}

func TestTemplateChecksumFollowsContent(t *testing.T) {
	def := mustProvisioner(t, `{"host": "http://*.x"}`)
	again := mustProvisioner(t, `{"host": "http://*.x"}`)
	if def.templates.checksum != again.templates.checksum {
		t.Fatal("checksum must be stable")
	}
	b, err := os.ReadFile("../../templates/service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	same := writeTemplate(t, "service.yaml", string(b))
	edited := writeTemplate(t, "service.yaml", string(b)+"# edited\n")
	if p := mustProvisioner(t, `{"host": "http://*.x", "template_paths": {"service": "`+same+`"}}`); p.templates.checksum != def.templates.checksum {
		t.Fatal("a copy of the default template must give the same checksum")
	}
	if p := mustProvisioner(t, `{"host": "http://*.x", "template_paths": {"service": "`+edited+`"}}`); p.templates.checksum == def.templates.checksum {
		t.Fatal("an edited template must change the checksum")
	}
}

func TestCustomIngressKindIsAllowed(t *testing.T) {
	path := writeTemplate(t, "route.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
spec:
  hostnames: [{{ quote .Hostname }}]
  parentRefs: [{name: gw}]
`)
	p := mustProvisioner(t, `{"host": "http://*.x", "template_paths": {"http_ingress": "`+path+`"}}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, nil)
	if o := objs["http_ingress"].obj; o.GetKind() != "HTTPRoute" || o.GetName() != "http-runtime-"+testPID {
		t.Fatalf("got %s %s", o.GetKind(), o.GetName())
	}
}

func TestSplitDocumentsKeepsLineNumbers(t *testing.T) {
	docs := splitDocuments("a: 1\n---\nb: 2\nc: 3\n--- # x\nd: 4")
	if len(docs) != 3 || docs[1].startLine != 3 || docs[2].startLine != 6 {
		t.Fatalf("%+v", docs)
	}
}

// Templates in the shape Rill's admin service documents render at plan time as they do in Rill:
// Sprig's functions, Rill's sanitizeLabel, .Environment (default "prod"), and annotations the project
// does not have rendering empty.
func TestRenderRillShapedTemplates(t *testing.T) {
	extra, _ := rillTemplatePaths(t)
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com"`+extra+`}`)
	for _, tc := range []struct {
		name        string
		args        provisioner.RuntimeArgs
		annotations map[string]string
		wantLabels  map[string]string
		wantAnn     map[string]string
	}{
		{"no annotations", provisioner.RuntimeArgs{Slots: 1}, nil,
			map[string]string{"rill.io/organization": "", "rill.io/environment": "prod"},
			map[string]string{"organization_plan": "free", "organization_custom_domain": ""}},
		{"annotations and environment", provisioner.RuntimeArgs{Slots: 2, Environment: "dev"},
			map[string]string{"organization_name": "  Acme Corp!", "organization_plan": "team", "organization_custom_domain": "rill.acme.com"},
			map[string]string{"rill.io/organization": "acme-corp", "rill.io/environment": "dev"},
			map[string]string{"organization_plan": "team", "organization_custom_domain": "rill.acme.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderRuntime(t, p, &tc.args, &provisioner.ResourceOptions{Annotations: tc.annotations, RillVersion: "v0.60.0"})
			dep := convert[appsv1.Deployment](t, objs["deployment"])
			for k, v := range tc.wantLabels {
				if dep.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, dep.Labels[k], v)
				}
			}
			for k, v := range tc.wantAnn {
				if got, ok := dep.Annotations[k]; !ok || got != v {
					t.Errorf("annotation %s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			if got := dep.Spec.Template.Spec.Containers[0].Image; got != "rilldata/rill:v0.60.0" {
				t.Errorf("image %q", got)
			}
			if got := dep.Spec.Selector.MatchLabels["app.kubernetes.io/name"]; got != "runtime-"+testPID {
				t.Errorf("selector %v", dep.Spec.Selector.MatchLabels)
			}
			pvc := convert[corev1.PersistentVolumeClaim](t, objs["pvc"])
			if got := pvc.Spec.Resources.Requests.Storage().Value(); got != provisioner.StorageBytesPerSlot*int64(tc.args.Slots) {
				t.Errorf("storage %d", got)
			}
			ing := convert[networkingv1.Ingress](t, objs["http_ingress"])
			if got := ing.Spec.Rules[0].Host; got != testPID+".rt.example.com" {
				t.Errorf("ingress host %q", got)
			}
		})
	}
}

// override_disk_gb replaces the slot-based volume size, as in Rill.
func TestRenderOverrideDiskGB(t *testing.T) {
	p := mustProvisioner(t, `{"host": "https://*.rt.example.com"}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 2, OverrideDiskGB: 500}, nil)
	pvc := convert[corev1.PersistentVolumeClaim](t, objs["pvc"])
	if got := pvc.Spec.Resources.Requests.Storage().Value(); got != 500<<30 {
		t.Fatalf("storage %d, want 500 GiB", got)
	}
}

func TestSanitizeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"acme":                         "acme",
		"Acme Corp":                    "acme-corp",
		"  --Ünïcode & co.--  ":        "n-code-co",
		"a__b..c--d":                   "a__b..c--d",
		"":                             "",
		"!!!":                          "",
		strings.Repeat("x", 70):        strings.Repeat("x", 63),
		strings.Repeat("x", 62) + "-y": strings.Repeat("x", 62),
	} {
		if got := sanitizeLabel(in); got != want {
			t.Errorf("sanitizeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// specWithTemplates is a spec whose template_paths are the given texts, written to files named
// after their slot.
func specWithTemplates(t *testing.T, texts map[string]string) string {
	t.Helper()
	paths := map[string]string{}
	for slot, text := range texts {
		paths[slot] = writeTemplate(t, slot+".yaml", text)
	}
	b, err := json.Marshal(paths)
	if err != nil {
		t.Fatal(err)
	}
	return `{"host": "https://*.rt.example.com", "template_paths": ` + string(b) + `}`
}

// Rill's template.ParseFiles names each file's template by its base name, so a file may call another
// by it ({{ template "http_ingress.yaml" . }}); so may ours, whose templates are named by their paths
// (errors name the file). A base name two of the files share is ambiguous: Rill renders the later file
// for both; here a call by it is a plan error that names both, wherever the call is. Before, every
// call by a base name was refused ("template ... not defined").
func TestAFileIsCalledByItsBaseNameAsInRill(t *testing.T) {
	ingress, err := os.ReadFile("../../templates/http_ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{
		"http_ingress": string(ingress),
		"grpc_ingress": `{{ template "http_ingress.yaml" . }}`,
	}))
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, nil)
	if o := objs["grpc_ingress"].obj; o.GetKind() != "Ingress" || o.GetName() != "grpc-runtime-"+testPID {
		t.Fatalf("the gRPC ingress rendered %s %s, want the HTTP ingress's Ingress under its own name", o.GetKind(), o.GetName())
	}

	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths := map[string]string{
		"http_ingress": filepath.Join(dir, "a", "ingress.yaml"),
		"grpc_ingress": filepath.Join(dir, "b", "ingress.yaml"),
		"service":      filepath.Join(dir, "service.yaml"),
	}
	texts := map[string]string{"http_ingress": string(ingress), "grpc_ingress": string(ingress),
		"service": "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    {{- template \"ingress.yaml\" . }}\n"}
	for slot, path := range paths {
		if err := os.WriteFile(path, []byte(texts[slot]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(paths)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newProvisioner([]byte(`{"host": "https://*.rt.example.com", "template_paths": `+string(b)+`}`), nil)
	var fe *provisioner.FieldError
	if !errors.As(err, &fe) || fe.Path != "template_paths.service" || !strings.Contains(err.Error(), paths["http_ingress"]) ||
		!strings.Contains(err.Error(), paths["grpc_ingress"]) || strings.Count(err.Error(), `{{ template "ingress.yaml" }} calls the base name of 2 files`) != 1 {
		t.Fatalf("want one error on template_paths.service naming both files called ingress.yaml, got %v", err)
	}
	t.Log(err)

	// The same when one of the paths is the bare base name (its template is named so already), and
	// when the call is in a branch the sample data does not take.
	t.Chdir(dir)
	paths["http_ingress"] = "ingress.yaml"
	if err := os.WriteFile("ingress.yaml", ingress, 0o644); err != nil {
		t.Fatal(err)
	}
	texts["service"] = strings.Replace(texts["service"], `{{- template "ingress.yaml" . }}`, `{{- if eq .Slots 7 }}{{ template "ingress.yaml" . }}{{ end }}`, 1)
	if err := os.WriteFile(paths["service"], []byte(texts["service"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(paths); err != nil {
		t.Fatal(err)
	}
	_, err = newProvisioner([]byte(`{"host": "https://*.rt.example.com", "template_paths": `+string(b)+`}`), nil)
	if !errors.As(err, &fe) || fe.Path != "template_paths.service" || !strings.Contains(err.Error(), "(ingress.yaml, "+paths["grpc_ingress"]+")") {
		t.Fatalf("with a bare file name: want an error on template_paths.service naming both files called ingress.yaml, got %v", err)
	}
}

// Rill parses the five templates into one set (template.ParseFiles), so what one defines, another
// may use: a set written that way for Rill fails nowhere here either.
func TestTemplatesShareDefinitionsAcrossFiles(t *testing.T) {
	deployment := `{{- define "labels" }}
    rill.io/project: {{ .Annotations.project_name | sanitizeLabel | quote }}
{{- end }}
` + defaultDeploymentTemplate(t)
	service := `apiVersion: v1
kind: Service
metadata:
  labels:
    {{- template "labels" . }}
spec:
  ports: [{name: http, port: 8080}]
`
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"deployment": deployment, "service": service}))
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Annotations: map[string]string{"project_name": "My Project"}})
	if got := objs["service"].obj.GetLabels()["rill.io/project"]; got != "my-project" {
		t.Fatalf("service label rill.io/project = %q, want my-project (from deployment.yaml's define)", got)
	}
}

// A parse error in one file of the set still names that file and its template_paths key.
func TestTemplateSetParseErrorNamesTheFile(t *testing.T) {
	spec := specWithTemplates(t, map[string]string{
		"deployment": `{{ define "labels" }}a: b{{ end }}` + defaultDeploymentTemplate(t),
		"service":    "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Names.Service }\n",
	})
	_, err := newProvisioner([]byte(spec), nil)
	var fe *provisioner.FieldError
	if !errors.As(err, &fe) || fe.Path != "template_paths.service" || !strings.Contains(err.Error(), "service.yaml:4: ") {
		t.Fatalf("want a FieldError on template_paths.service naming service.yaml:4, got %T %v", err, err)
	}
}

// A template Rill's admin service renders may guard the annotations Rill always passes; the plan's
// sample render has them, and a guard that fails on the sample data anyway is a warning, not an
// error that blocks every plan.
func TestSampleRenderHasRillsAnnotationsAndWarnsOnExecutionErrors(t *testing.T) {
	guard := func(keys ...string) string {
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(`{{ if not .Annotations.` + k + ` }}{{ fail "` + k + ` is required" }}{{ end }}` + "\n")
		}
		return b.String()
	}
	rillKeys := []string{"organization_id", "organization_name", "organization_plan", "project_id", "project_name", "project_prod_slots", "project_provisioner"}
	t.Run("Rill's keys", func(t *testing.T) {
		p := mustProvisioner(t, specWithTemplates(t, map[string]string{"deployment": guard(rillKeys...) + defaultDeploymentTemplate(t)}))
		if w := p.SpecWarnings(); len(w) != 0 {
			t.Fatalf("warnings %v", w)
		}
	})
	t.Run("another key", func(t *testing.T) {
		for _, slot := range []string{"deployment", "http_ingress"} {
			text := map[string]string{"deployment": defaultDeploymentTemplate(t)}
			if slot == "http_ingress" {
				b, err := os.ReadFile("../../templates/http_ingress.yaml")
				if err != nil {
					t.Fatal(err)
				}
				text = map[string]string{"http_ingress": string(b)}
			}
			text[slot] = guard("team_id") + text[slot]
			p, err := newProvisioner([]byte(specWithTemplates(t, text)), nil)
			if err != nil {
				t.Fatalf("%s: a template that fails on the sample data must not fail the plan: %v", slot, err)
			}
			w := p.SpecWarnings()
			t.Log(w)
			if len(w) != 1 || w[0].Path != "template_paths."+slot || !strings.Contains(w[0].Message, slot+".yaml:1:") || !strings.Contains(w[0].Message, "team_id is required") {
				t.Fatalf("%s: want one warning on template_paths.%s naming the file and the failure, got %v", slot, slot, w)
			}
			// The kind Rill applies for the slot is assumed until a render says.
			for _, mt := range p.templates.templates {
				if mt.slot.field == slot && mt.gvk.Kind == "" {
					t.Fatalf("%s: no kind assumed", slot)
				}
			}
			// With the annotation, the runtime renders.
			renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Annotations: map[string]string{"team_id": "t"}})
		}
	})
	// The sample annotations are placeholders: an action that reads .Annotations may fail on them
	// and not on the project's own (a function given an annotation's value), so it is a warning too.
	t.Run("an action reading .Annotations", func(t *testing.T) {
		service := "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    cpu: {{ (.Annotations.limits | mustFromJson).cpu | quote }}\nspec:\n  ports: [{name: http, port: 8080}]\n"
		p, err := newProvisioner([]byte(specWithTemplates(t, map[string]string{"service": service})), nil)
		if err != nil {
			t.Fatalf("a template that fails on the sample annotations must not fail the plan: %v", err)
		}
		w := p.SpecWarnings()
		t.Log(w)
		if len(w) != 1 || w[0].Path != "template_paths.service" || !strings.Contains(w[0].Message, "service.yaml:5:") || !strings.Contains(w[0].Message, "mustFromJson") {
			t.Fatalf("want one warning on template_paths.service naming the file, line and function, got %v", w)
		}
		objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Annotations: map[string]string{"limits": `{"cpu": "2"}`}})
		if got := objs["service"].obj.GetLabels()["cpu"]; got != "2" {
			t.Fatalf("label cpu = %q, want 2", got)
		}
	})
}

// A value taken from .Annotations (or .Name, the runtime's own) is the project's wherever it goes:
// into a variable or a dict, the dot of a with or a range, a template called with it; and so is
// what runs only in a branch it chooses. An action that fails on it is a plan warning, as one
// reading .Annotations itself is; an action that fails on the rest of the data, through a variable
// too, is a plan error. Before, only an action whose text said ".Annotations" was a warning: the
// ones through a variable, with, range or template call failed every plan.
func TestAFailureOnAnAnnotationsValueIsAWarningWhereverTheValueWent(t *testing.T) {
	const header = "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n"
	const footer = "spec:\n  ports: [{name: http, port: 8080}]\n"
	warnings := map[string]string{
		"variable":         `    {{- $l := .Annotations.limits }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"variable set":     `    {{- $l := "{}" }}{{ $l = .Annotations.limits }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"$.Annotations":    `    cpu: {{ ($.Annotations.limits | mustFromJson).cpu | quote }}` + "\n",
		"root variable":    `    {{- $root := . }}` + "\n" + `    cpu: {{ ($root.Annotations.limits | mustFromJson).cpu | quote }}` + "\n",
		"dict with root":   `    {{- define "cpu" }}` + "\n" + `    cpu: {{ (mustFromJson .root.Annotations.limits).cpu | quote }}{{ end }}{{ template "cpu" (dict "root" $) }}` + "\n",
		"$ in called":      `    {{- define "cpu" }}` + "\n" + `    cpu: {{ (mustFromJson $).cpu | quote }}{{ end }}{{ template "cpu" .Annotations.limits }}` + "\n",
		"$.key in called":  `    {{- define "cpu" }}` + "\n" + `    cpu: {{ (mustFromJson $.limits).cpu | quote }}{{ end }}{{ template "cpu" .Annotations }}` + "\n",
		"assigned in with": `    {{- $l := "{}" }}{{ with .Annotations }}{{ $l = .limits }}{{ end }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"assigned in if":   `    {{- $l := "{}" }}{{ if true }}{{ $l = .Annotations.limits }}{{ end }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"assigned in range": `    {{- $l := "{}" }}{{ range $k, $v := .Annotations }}{{ if eq $k "project_name" }}{{ $l = $v }}{{ end }}{{ end }}` + "\n" +
			`    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"if-declared in else": `    {{- if $l := .Annotations.limits }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}{{ else }}` + "\n" +
			`    cpu: {{ ($l | mustFromJson).cpu | quote }}{{ end }}` + "\n",
		"set into a dict":                `    {{- $m := dict }}{{ $_ := set $m "l" .Annotations.limits }}` + "\n" + `    cpu: {{ (mustFromJson $m.l).cpu | quote }}` + "\n",
		"else of an annotation's":        `    {{- with .Annotations.limits }}` + "\n" + `    cpu: {{ (mustFromJson .).cpu | quote }}{{ else }}` + "\n" + `    cpu: {{ .Slots | upper }}{{ end }}` + "\n",
		"if on an annotation":            `    {{- if .Annotations.limits }}` + "\n" + `    cpu: {{ index (list "2") 0 | quote }}{{ else }}` + "\n" + `    cpu: {{ index (list) 0 }}{{ end }}` + "\n",
		"the runtime's name":             `    cpu: {{ index (splitList "-" .Name) 1 | quote }}` + "\n",
		"used before assigned in a loop": `    {{- $l := "{}" }}{{ range $i, $k := list 1 2 }}` + "\n" + `    cpu{{ $i }}: {{ ($l | mustFromJson).cpu | quote }}{{ $l = $.Annotations.limits }}{{ end }}` + "\n",
		"with":                           `    {{- with .Annotations.project_name }}` + "\n" + `    cpu: {{ (. | mustFromJson).cpu | quote }}{{ end }}` + "\n",
		"range":                          `    {{- range $k, $v := .Annotations }}{{ if eq $k "project_name" }}` + "\n" + `    cpu: {{ ($v | mustFromJson).cpu | quote }}{{ end }}{{ end }}` + "\n",
		"range dot":                      `    {{- range .Annotations }}` + "\n" + `    x: {{ (mustFromJson .).cpu | quote }}{{ end }}` + "\n",
		"called template":                `    {{- define "cpu" }}` + "\n" + `    cpu: {{ (mustFromJson .).cpu | quote }}{{ end }}{{ template "cpu" .Annotations.limits }}` + "\n",
		"variable of var":                `    {{- $a := .Annotations }}{{ $l := $a.limits }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"nested pipeline":                `    {{- $l := (printf "%s" .Annotations.limits) }}` + "\n" + `    cpu: {{ ($l | mustFromJson).cpu | quote }}` + "\n",
		"with else branch":               `    {{- with .Annotations.nothing }}{{ else }}{{ $x := $.Annotations.limits }}` + "\n" + `    cpu: {{ ($x | mustFromJson).cpu | quote }}{{ end }}` + "\n",
	}
	for name, labels := range warnings {
		t.Run(name, func(t *testing.T) {
			p, err := newProvisioner([]byte(specWithTemplates(t, map[string]string{"service": header + labels + footer})), nil)
			if err != nil {
				t.Fatalf("a template that fails on the sample annotations must not fail the plan: %v", err)
			}
			if w := p.SpecWarnings(); len(w) != 1 || w[0].Path != "template_paths.service" || !strings.Contains(w[0].Message, "it failed with the plan's sample data") {
				t.Fatalf("want one warning on template_paths.service saying the sample data failed it, got %v", w)
			}
			project := map[string]string{"limits": `{"cpu": "2"}`, "project_name": `{"cpu": "2"}`}
			objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Annotations: project, Name: "rt-2"})
			if got := objs["service"].obj.GetLabels(); got["cpu"] != "2" && got["x"] != "2" && got["cpu1"] != "2" {
				t.Fatalf("labels %v, want cpu 2 from the project's annotation", got)
			}
		})
	}
	// The same failures on the rest of the data fail every runtime: plan errors.
	errs := map[string]string{
		"variable":        `    {{- $s := .Slots }}` + "\n" + `    a: {{ $s | upper }}` + "\n",
		"with":            `    {{- with .Names }}` + "\n" + `    a: {{ .Service.Foo }}{{ end }}` + "\n",
		"variable beside": `    {{- $a := .Annotations.limits }}{{ $s := .Slots }}` + "\n" + `    a: {{ $s | upper }}` + "\n",
		"called template": `    {{- define "x" }}` + "\n" + `    a: {{ .Slots | upper }}{{ end }}{{ template "x" . }}` + "\n",
		"range of data":   `    {{- range $i, $h := .Names }}{{ end }}` + "\n",
	}
	for name, labels := range errs {
		t.Run("error/"+name, func(t *testing.T) {
			_, err := newProvisioner([]byte(specWithTemplates(t, map[string]string{"service": header + labels + footer})), nil)
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) || fe.Path != "template_paths.service" {
				t.Fatalf("want a plan error on template_paths.service, got %v", err)
			}
			t.Log(err)
		})
	}
}

// A duplicate key that a runtime's data makes is reported at apply even when the sample render had a
// duplicate of the same key elsewhere (the plan showed one; this is a second). Found by a review: a
// comparison of warnings without their lines took it for the one the plan showed.
func TestADataMadeDuplicateOfAKeyThePlanShowedIsStillReported(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    app: a\n    app: b\n  annotations:\n" +
		"    {{- range $k, $v := .Annotations }}\n    {{ $k }}: {{ $v | quote }}\n    {{- end }}\n    app: c\n" +
		"spec:\n  ports: [{name: http, port: 8080}]\n"
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"service": svc}))
	if w := p.SpecWarnings(); len(w) != 1 || !strings.Contains(w[0].Message, `:6: duplicate key "app"`) {
		t.Fatalf("plan warnings %v, want the labels' duplicate app", w)
	}
	_, w, err := p.templates.render(newTemplateData(p.spec, testPID, &provisioner.RuntimeArgs{Slots: 1},
		&provisioner.ResourceOptions{Annotations: map[string]string{"app": "x"}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || !strings.Contains(w[0], `duplicate key "app"`) {
		t.Fatalf("apply warnings %v, want the annotations' duplicate app", w)
	}
	// The sample's duplicate alone, at another line, is not repeated.
	if _, w, err = p.templates.render(newTemplateData(p.spec, testPID, &provisioner.RuntimeArgs{Slots: 1}, nil)); err != nil || len(w) != 0 {
		t.Fatalf("apply warnings %v (%v), want none", w, err)
	}
}

// An ingress template whose sample render failed is taken for an Ingress (what Rill applies there);
// a render of another kind is then an error, since reads and deletes would look for an Ingress.
func TestAssumedKindMustMatchTheRender(t *testing.T) {
	route := `{{ if not .Annotations.team_id }}{{ fail "team_id is required" }}{{ end }}
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
spec:
  hostnames: [{{ quote .Hostname }}]
`
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"http_ingress": route}))
	_, _, err := p.templates.render(newTemplateData(p.spec, testPID, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{Annotations: map[string]string{"team_id": "t"}}))
	if err == nil || !strings.Contains(err.Error(), "HTTPRoute") || !strings.Contains(err.Error(), "Ingress") {
		t.Fatalf("want an error naming both kinds, got %v", err)
	}
	t.Log(err)
}

// Every template in error is reported in one run, whatever the phase it fails in (read, parse,
// sample render): a file that cannot be read or parsed does not hide another's errors. A template
// that uses what such a file defines is not blamed for it.
func TestEveryTemplatePhaseIsReportedInOneRun(t *testing.T) {
	paths := map[string]string{
		"service":      "/does/not/exist.yaml",
		"pvc":          writeTemplate(t, "pvc.yaml", "{{ define \"labels\" }}a: b{{ end }}apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{ .Names.PVC }\n"),
		"deployment":   writeTemplate(t, "deployment.yaml", strings.Replace(defaultDeploymentTemplate(t), "printf \"%s:%s\" .Image .ImageTag", ".Image.Foo", 1)),
		"http_ingress": writeTemplate(t, "http_ingress.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  labels:\n    {{- template \"labels\" . }}\n"),
	}
	b, err := json.Marshal(paths)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newProvisioner([]byte(`{"host": "https://*.rt.example.com", "template_paths": `+string(b)+`}`), nil)
	got := seterrors.Paths(t, err)
	sort.Strings(got)
	if want := "template_paths.deployment template_paths.pvc template_paths.service"; strings.Join(got, " ") != want {
		t.Fatalf("errors on %v, want %s: %v", got, want, err)
	}
	for _, want := range []string{"cannot read template", "pvc.yaml:4:", "deployment.yaml", ".Image.Foo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A spec whose fields are in error reports its templates' errors in the same run.
func TestSpecErrorsComeWithTheTemplatesErrors(t *testing.T) {
	pvc := writeTemplate(t, "pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{ .Names.PVC }\n")
	_, err := newProvisioner([]byte(`{"host": "http://*.x", "namespace": "BAD_NS", "template_paths": {"pvc": "`+pvc+`", "service": "/does/not/exist.yaml"}}`), nil)
	got := seterrors.Paths(t, err)
	sort.Strings(got)
	if want := "namespace template_paths.pvc template_paths.service"; strings.Join(got, " ") != want {
		t.Fatalf("errors on %v, want %s: %v", got, want, err)
	}
}

// A duplicate key may be why a render is in error (the last kind kept): the error says so, where the
// warning alone would be lost with the failed render.
func TestRenderErrorNamesTheDuplicateKeyBehindIt(t *testing.T) {
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nkind: Deployment\n"
	_, err := newProvisioner([]byte(specWithTemplates(t, map[string]string{"service": service})), nil)
	if err == nil || !strings.Contains(err.Error(), "must render a Service, got Deployment") || !strings.Contains(err.Error(), `service.yaml:5: duplicate key "kind"`) {
		t.Fatalf("want the wrong kind and the duplicate key behind it, got %v", err)
	}
	t.Log(err)
}

// Rill decodes a rendered template with yaml.NewYAMLOrJSONDecoder: a duplicate key keeps its last
// value and a second document is ignored. Both are accepted here too, with a plan-time warning.
func TestDuplicateKeysAndSecondDocumentsAreWarningsAsRillAcceptsThem(t *testing.T) {
	const header = "apiVersion: v1\nkind: Service\nmetadata:\n"
	for _, tc := range []struct {
		name, text, warn string
	}{
		{"duplicate key", header + "  labels:\n    a: first\n    a: last\nspec:\n  ports: [{name: http, port: 8080}]\n", `service.yaml:6: duplicate key "a"`},
		{"second document", header + "  labels:\n    a: last\nspec:\n  ports: [{name: http, port: 8080}]\n---\n" + header + "  name: other\n", "service.yaml:9: a second document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newProvisioner([]byte(specWithTemplates(t, map[string]string{"service": tc.text})), nil)
			if err != nil {
				t.Fatal(err)
			}
			w := p.SpecWarnings()
			t.Log(w)
			if len(w) != 1 || w[0].Path != "template_paths.service" || !strings.Contains(w[0].Message, tc.warn) {
				t.Fatalf("want one warning on template_paths.service containing %q, got %v", tc.warn, w)
			}
			objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, nil)
			if got := objs["service"].obj.GetLabels()["a"]; got != "last" {
				t.Fatalf("label a = %q, want last", got)
			}
		})
	}
}

// In Rill, .Annotations holds the project's annotations only; the environment is .Environment. The
// environment annotation the Terraform layer adds from the `environment` attribute stays out of it.
func TestAnnotationsHoldTheProjectsOnly(t *testing.T) {
	deployment := strings.Replace(defaultDeploymentTemplate(t), "metadata:\n", "metadata:\n  annotations:\n    project-annotations: {{ toJson .Annotations | quote }}\n", 1)
	p := mustProvisioner(t, specWithTemplates(t, map[string]string{"deployment": deployment}))
	opts := &provisioner.ResourceOptions{Annotations: map[string]string{"project_name": "p", provisioner.AnnotationEnvironment: "dev"}}
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1, Environment: "dev"}, opts)
	a := objs["deployment"].obj.GetAnnotations()
	if got := a["project-annotations"]; got != `{"project_name":"p"}` {
		t.Fatalf(".Annotations rendered %s, want the project's only", got)
	}
	// The environment is still recorded for an import, as before.
	if a[AnnotationEnvironment] != "dev" || a[AnnotationProjectAnnotations] != `{"project_name":"p"}` {
		t.Fatalf("recorded %v", a)
	}
	// Without the `environment` attribute, an "environment" annotation is the project's own: in
	// .Annotations, and recorded as one of the project's, not as the environment, so that an import
	// restores `annotations` and leaves `environment` unset, as configured. Before, it was recorded
	// as the environment and the import's next plan wanted to change both.
	objs = renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, opts)
	a = objs["deployment"].obj.GetAnnotations()
	if got := a["project-annotations"]; got != `{"environment":"dev","project_name":"p"}` {
		t.Fatalf(".Annotations rendered %s, want the project's own environment annotation kept", got)
	}
	if _, ok := a[AnnotationEnvironment]; ok || a[AnnotationProjectAnnotations] != `{"environment":"dev","project_name":"p"}` {
		t.Fatalf("recorded %v, want no environment and the project's environment annotation among its annotations", a)
	}
}
