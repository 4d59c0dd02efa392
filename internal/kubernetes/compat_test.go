package kubernetes

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Where this provider reads a kubernetes spec differently from Rill's admin service, as the
// compatibility guide says: a whole number written as a decimal or with an exponent (Rill's
// encoding/json refuses "cannot unmarshal number 30.0") is read as the whole number; data_dir, which
// Rill's current spec does not know (and so ignores whatever it holds), must be a string here; and a
// null or missing spec (Rill's initializer crashes on a null one, its template_paths being nil) is
// read as {}, whose missing host is the error.
func TestKubernetesSpecReadsWhereRillDiffers(t *testing.T) {
	for _, timeout := range []string{"30.0", "3e1"} {
		s, err := ParseSpec([]byte(`{"host": "http://*.x", "timeout_seconds": ` + timeout + `}`))
		if err != nil || s.TimeoutSeconds != 30 {
			t.Errorf("timeout_seconds %s: %+v, %v; want 30", timeout, s, err)
		}
	}
	if _, err := ParseSpec([]byte(`{"host": "http://*.x", "data_dir": 5}`)); err == nil || !strings.Contains(err.Error(), "data_dir: expected a string, got number") {
		t.Errorf("data_dir 5: %v", err)
	}
	for _, entry := range []string{`{"type": "kubernetes", "spec": null}`, `{"type": "kubernetes"}`} {
		_, err := provisioner.NewSet(`{"k": `+entry+`}`, nil, nil)
		if err == nil || !strings.Contains(err.Error(), `provisioner "k": spec.host: is required`) {
			t.Errorf("%s: %v, want the host required", entry, err)
		}
	}
}

// Templates where this provider differs from Rill's admin service, as the compatibility guide says:
// a template file that cannot be read is an error naming its template_paths field and the file
// (Rill's template.Must panics); Rill's README's StatefulSet-era entry (template_paths.statefulset,
// .Names.StatefulSet) is not supported: the field is ignored with a warning and the name is a
// template error; and an annotation the project lacks, written bare, renders "" where Rill's
// text/template renders "<no value>".
func TestKubernetesTemplatesWhereRillDiffers(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "service.yaml")
	if _, err := newProvisioner([]byte(`{"host": "http://*.x", "template_paths": {"service": "`+missing+`"}}`), nil); err == nil ||
		!strings.Contains(err.Error(), "template_paths.service: cannot read template: open "+missing) {
		t.Errorf("missing template: %v", err)
	}

	old := filepath.Join(dir, "old-service.yaml")
	if err := os.WriteFile(old, []byte("apiVersion: v1\nkind: Service\nspec:\n  selector:\n    app: {{ .Names.StatefulSet }}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := `{"host": "http://*.x", "template_paths": {"statefulset": "` + filepath.Join(dir, "statefulset.yaml") + `", "service": "` + old + `"}}`
	s, err := ParseSpec([]byte(spec))
	if err != nil || len(s.warnings) != 1 || s.warnings[0].Path != "template_paths.statefulset" {
		t.Errorf("template_paths.statefulset: %+v, %v; want a warning naming it", s, err)
	}
	if _, err := newProvisioner([]byte(spec), nil); err == nil || !strings.Contains(err.Error(), "can't evaluate field StatefulSet") {
		t.Errorf(".Names.StatefulSet: %v", err)
	}

	bare := filepath.Join(dir, "bare-service.yaml")
	if err := os.WriteFile(bare, []byte("apiVersion: v1\nkind: Service\nmetadata:\n  annotations:\n    domain: \"{{ .Annotations.organization_custom_domain }}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := mustProvisioner(t, `{"host": "http://*.x", "template_paths": {"service": "`+bare+`"}}`)
	objs := renderRuntime(t, p, &provisioner.RuntimeArgs{Slots: 1}, &provisioner.ResourceOptions{})
	if got, ok := objs["service"].obj.GetAnnotations()["domain"]; !ok || got != "" {
		t.Errorf("a bare missing annotation rendered %q (present %v), want \"\"", got, ok)
	}
}

// Rill's admin service needs all five template_paths (ParseFiles of an entry left out, "", fails, and
// its template.Must panics); here an entry left out or "" is the embedded default template, so a set
// may give only the templates it changes.
func TestATemplatePathLeftOutIsTheEmbeddedDefault(t *testing.T) {
	route := writeTemplate(t, "route.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nspec:\n  hostnames: [{{ quote .Hostname }}]\n")
	args := &provisioner.RuntimeArgs{Slots: 1}
	defaults := renderRuntime(t, mustProvisioner(t, `{"host": "http://*.x"}`), args, nil)
	for _, paths := range []string{`{"http_ingress": "` + route + `"}`, `{"http_ingress": "` + route + `", "deployment": "", "pvc": ""}`} {
		objs := renderRuntime(t, mustProvisioner(t, `{"host": "http://*.x", "template_paths": `+paths+`}`), args, nil)
		if got := objs["http_ingress"].obj.GetKind(); got != "HTTPRoute" {
			t.Errorf("template_paths %s: http_ingress renders %s, want the given template's HTTPRoute", paths, got)
		}
		for _, field := range []string{"deployment", "service", "pvc", "grpc_ingress"} {
			// The checksum is of the whole set of five, so it differs; the rest is the default's.
			unstructured.RemoveNestedField(objs[field].obj.Object, "metadata", "annotations", AnnotationTemplatesChecksum)
			unstructured.RemoveNestedField(defaults[field].obj.Object, "metadata", "annotations", AnnotationTemplatesChecksum)
			if !reflect.DeepEqual(objs[field].obj.Object, defaults[field].obj.Object) {
				t.Errorf("template_paths %s: %s is not the embedded default's\ngot  %v\nwant %v", paths, field, objs[field].obj.Object, defaults[field].obj.Object)
			}
		}
	}
}
