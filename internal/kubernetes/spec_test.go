package kubernetes

import (
	"errors"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/seterrors"
)

func TestSpecDefaults(t *testing.T) {
	s, err := ParseSpec([]byte(`{"host": "https://*.rt.example.com/"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.TimeoutSeconds != DefaultTimeoutSeconds || s.DataDir != "/data" || s.Namespace != "default" ||
		s.Image != "rilldata/rill" || s.QPS != 50 || s.Burst != 100 || *s.PingPath != "/v1/ping" || !s.PingEnabled() {
		t.Fatalf("defaults not applied: %+v", s)
	}
	if s.KubeconfigPath != "" {
		t.Fatalf("kubeconfig_path should stay empty (in-cluster), got %q", s.KubeconfigPath)
	}
	if got := s.RuntimeURL("abc123"); got != "https://abc123.rt.example.com" {
		t.Fatalf("RuntimeURL: %q", got)
	}
	host, hostname := (&Spec{Host: "http://*.localhost:8080"}).hostParts("abc")
	if host != "abc.localhost:8080" || hostname != "abc.localhost" {
		t.Fatalf("hostParts: %q %q", host, hostname)
	}
}

func TestSpecEmptyPingPathSwitchesProbeOff(t *testing.T) {
	s, err := ParseSpec([]byte(`{"host": "http://*.x", "ping_path": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.PingEnabled() {
		t.Fatal(`ping_path "" must switch the HTTP probe off`)
	}
}

func TestSpecFullySet(t *testing.T) {
	s, err := ParseSpec([]byte(`{
		"timeout_seconds": 30, "data_dir": "/mnt/data", "host": "http://node-*.localhost",
		"namespace": "cloud-runtime", "image": "registry.local:5000/rill", "kubeconfig_path": "/k/config",
		"kubeconfig_context": "prod", "qps": 12.5, "burst": 30, "ping_path": "/healthz",
		"template_paths": {"deployment": "", "pvc": ""}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.TimeoutSeconds != 30 || s.DataDir != "/mnt/data" || s.Namespace != "cloud-runtime" || s.Image != "registry.local:5000/rill" ||
		s.KubeconfigPath != "/k/config" || s.KubeconfigContext != "prod" || s.QPS != 12.5 || s.Burst != 30 || *s.PingPath != "/healthz" {
		t.Fatalf("decoded %+v", s)
	}
}

func TestSpecErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name, spec, field, want string
	}{
		{"not an object", `[1]`, "", "JSON object"},
		{"timeout as string", `{"host": "http://*.x", "timeout_seconds": "30"}`, "timeout_seconds", "whole number"},
		{"fractional timeout", `{"host": "http://*.x", "timeout_seconds": 1.5}`, "timeout_seconds", "whole number"},
		{"negative timeout", `{"host": "http://*.x", "timeout_seconds": -1}`, "timeout_seconds", "positive"},
		{"missing host", `{}`, "host", "required"},
		{"host without scheme", `{"host": "*.example.com"}`, "host", "http"},
		{"host with path", `{"host": "http://*.example.com/rill"}`, "host", "no path"},
		{"bad namespace", `{"host": "http://*.x", "namespace": "Rill_NS"}`, "namespace", "namespace name"},
		{"image with tag and the default template", `{"host": "http://*.x", "image": "rilldata/rill:v1"}`, "image", "the default deployment template appends the runtime's version"},
		{"image with digest and the default template", `{"host": "http://*.x", "image": "rilldata/rill@sha256:abc"}`, "image", "tag or digest"},
		{"relative data_dir", `{"host": "http://*.x", "data_dir": "data"}`, "data_dir", "absolute"},
		{"ping path without slash", `{"host": "http://*.x", "ping_path": "v1/ping"}`, "ping_path", "start with '/'"},
		{"ping path number", `{"host": "http://*.x", "ping_path": 1}`, "ping_path", "string"},
		{"negative qps", `{"host": "http://*.x", "qps": -1}`, "qps", "positive"},
		{"burst as bool", `{"host": "http://*.x", "burst": true}`, "burst", "whole number"},
		{"context without kubeconfig", `{"host": "http://*.x", "kubeconfig_context": "a"}`, "kubeconfig_context", "kubeconfig_path"},
		{"negative grace", `{"host": "http://*.x", "unschedulable_grace_seconds": -5}`, "unschedulable_grace_seconds", "0 or more"},
		{"timeout beyond a time.Duration", `{"host": "http://*.x", "timeout_seconds": 10000000000}`, "timeout_seconds", "at most 9223372036"},
		{"grace beyond a time.Duration", `{"host": "http://*.x", "unschedulable_grace_seconds": 10000000000}`, "unschedulable_grace_seconds", "at most 9223372036"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			if err == nil {
				t.Fatal("expected an error")
			}
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a *provisioner.FieldError, got %T: %v", err, err)
			}
			if fe.Path != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q: want field %q and text %q", err, tc.field, tc.want)
			}
		})
	}
}

// Every error of a spec is reported at once, each naming its field, through a set too: the checks go
// on past the first, as the decoder goes on past a value of the wrong type.
func TestSpecReportsEveryError(t *testing.T) {
	for spec, want := range map[string]string{
		`{"timeout_seconds": -1, "data_dir": "data", "host": "*.x", "namespace": "Rill_NS", "image": "rill data", "kubeconfig_context": "a",
			"qps": -1, "burst": -2, "unschedulable_grace_seconds": -5, "ping_path": "v1"}`: "k8s spec.timeout_seconds, k8s spec.data_dir, k8s spec.host, k8s spec.namespace, k8s spec.image, " +
			"k8s spec.kubeconfig_context, k8s spec.qps, k8s spec.burst, k8s spec.unschedulable_grace_seconds, k8s spec.ping_path",
		`{"timeout_seconds": "30", "host": 5, "template_paths": {"pvc": 1}}`:                                     "k8s spec.timeout_seconds, k8s spec.host, k8s spec.template_paths.pvc",
		`{"host": "http://*.x", "template_paths": {"service": "/does/not/exist.yaml", "pvc": "/nor/this.yaml"}}`: "k8s spec.template_paths.pvc, k8s spec.template_paths.service",
	} {
		_, err := provisioner.NewSet(`{"k8s": {"type": "kubernetes", "spec": `+spec+`}}`, nil, nil)
		if got := strings.Join(seterrors.Fields(t, err), ", "); got != want {
			t.Errorf("%s: errors on %q, want %q (%v)", spec, got, want, err)
		}
	}
}

// What Rill's admin service accepts is accepted, with a warning naming the field: fields it ignores,
// a host without '*', an image with a tag when a deployment template of one's own is used.
func TestSpecWarnsWhereRillAccepts(t *testing.T) {
	cases := []struct{ name, spec, field, want string }{
		{"unknown field", `{"host": "http://*.x", "hots": 1}`, "hots", "unknown field, ignored (Rill's admin service ignores it too)"},
		{"unknown template", `{"host": "http://*.x", "template_paths": {"ingress": "a.yaml"}}`, "template_paths.ingress", "unknown field, ignored"},
		{"host without wildcard", `{"host": "http://rt.example.com"}`, "host", "every runtime of this provisioner gets this same URL"},
		{"image with tag and an own template", `{"host": "http://*.x", "image": "rilldata/rill:v1", "template_paths": {"deployment": "d.yaml"}}`, "image",
			"it reaches the templates unchanged as .Image, and the runtime's version as .ImageTag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range s.warnings {
				if w.Path == tc.field && strings.Contains(w.Message, tc.want) {
					return
				}
			}
			t.Fatalf("want a warning on %s containing %q, got %v", tc.field, tc.want, s.warnings)
		})
	}
	s, err := ParseSpec([]byte(`{"host": "http://rt.example.com", "image": "rilldata/rill:v1", "template_paths": {"deployment": "d.yaml"}}`))
	if err != nil || s.Image != "rilldata/rill:v1" || s.RuntimeURL("abc") != "http://rt.example.com" {
		t.Fatalf("the values are kept as Rill keeps them: %+v %v", s, err)
	}
}

func TestNewSetNamesTheSpecField(t *testing.T) {
	_, err := provisioner.NewSet(`{
		// comments are fine
		"k8s": {"type": "kubernetes", "spec": {"host": "http://*.x", "template_paths": {"pvc": "/does/not/exist.yaml"}}}
	}`, nil, nil)
	var se *provisioner.SetError
	if !errors.As(err, &se) || se.Provisioner != "k8s" || se.Field != "spec.template_paths.pvc" {
		t.Fatalf("want a SetError on k8s spec.template_paths.pvc, got %v", err)
	}
	if !strings.Contains(err.Error(), "/does/not/exist.yaml") {
		t.Fatalf("error should name the file: %v", err)
	}
}

func TestProvisionIDFor(t *testing.T) {
	pid, err := provisionIDFor("6F9619FF-8B86-D011-B42D-00CF4FC964FF")
	if err != nil || pid != "6f9619ff8b86d011b42d00cf4fc964ff" {
		t.Fatalf("got %q, %v", pid, err)
	}
	for _, bad := range []string{"", "a_b", "a.b", strings.Repeat("a", 51)} {
		if _, err := provisionIDFor(bad); err == nil {
			t.Fatalf("%q should be refused", bad)
		}
	}
}

// A spec in error keeps its warnings (provisioner.WithWarnings), whether the spec's checks or its
// templates are in error.
func TestASpecInErrorKeepsItsWarnings(t *testing.T) {
	for spec, wantErr := range map[string]string{
		`{"host": "https://*.rt.example.com", "namespce": "x", "timeout_seconds": -1}`:                                "timeout_seconds: must be positive, got -1",
		`{"host": "https://*.rt.example.com", "namespce": "x", "template_paths": {"service": "/nonexistent/s.yaml"}}`: "template_paths.service: cannot read template",
	} {
		_, err := newProvisioner([]byte(spec), nil)
		var fe *provisioner.FieldError
		if errs := provisioner.SplitErrors(err); len(errs) != 1 || !errors.As(errs[0], &fe) || !strings.HasPrefix(errs[0].Error(), wantErr) {
			t.Errorf("%s: errors %v, want %s", spec, errs, wantErr)
		}
		var sw provisioner.SpecWarner
		if !errors.As(err, &sw) {
			t.Errorf("%s: the error carries no warnings", spec)
			continue
		}
		if w := sw.SpecWarnings(); len(w) != 1 || w[0].String() != "namespce: "+provisioner.IgnoredFieldMessage {
			t.Errorf("%s: warnings %v, want namespce's", spec, w)
		}
	}
}
