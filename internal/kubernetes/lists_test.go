package kubernetes

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func objectFromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// What the API server adds (defaults), omits (zero values) or rewrites (quantities) is no drift; a
// value, a missing entry or an extra one another field manager set is, named by its path. An extra
// entry no field manager owns is admission's (a policy that injects into every Deployment), which
// the apply cannot remove: no drift, or the plan would never be empty.
func TestListDiffIgnoresServerDefaultsOnly(t *testing.T) {
	rendered := objectFromYAML(t, `
kind: Deployment
apiVersion: apps/v1
spec:
  template:
    spec:
      containers:
      - name: runtime
        image: rill:v1
        env:
        - {name: A, value: ""}
        ports:
        - {name: http, containerPort: 8080}
        securityContext: {}
      volumes:
      - name: data
        emptyDir: {sizeLimit: 1073741824}
`)
	live := func(container, volume string) *unstructured.Unstructured {
		return objectFromYAML(t, `
kind: Deployment
apiVersion: apps/v1
spec:
  template:
    spec:
      containers:
      - name: runtime
        image: rill:hacked
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        env:
        - {name: A}
`+container+`
      volumes:
      - name: data
        emptyDir: {sizeLimit: `+volume+`}
`)
	}
	// What kubectl edit records when it adds a port: its field manager owns the entry.
	edited := []metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:ports":{"k:{\"containerPort\":1,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}}}}}}}}`)}}}
	for _, tc := range []struct {
		name, container, volume, want string
		managed                       []metav1.ManagedFieldsEntry
	}{
		{"defaults", "        ports:\n        - {name: http, containerPort: 8080, protocol: TCP}", "1Gi", "", nil},
		{"port", "        ports:\n        - {name: http, containerPort: 8081, protocol: TCP}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080", nil},
		{"extra port by hand", "        ports:\n        - {name: http, containerPort: 8080}\n        - {name: x, containerPort: 1}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports has 2 entries, want 1", edited},
		// An entry no field manager owns was added by admission on the provisioner's own apply.
		{"extra port by admission", "        ports:\n        - {name: x, containerPort: 1}\n        - {name: http, containerPort: 8080}", "1Gi", "", nil},
		{"port missing", "        ports: []", "1Gi", "Deployment /: spec.template.spec.containers[runtime].ports has 0 entries, want 1", nil},
		{"quantity", "        ports:\n        - {name: http, containerPort: 8080}", "2Gi",
			"Deployment /: spec.template.spec.volumes[data].emptyDir.sizeLimit is 2Gi, want 1073741824", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := live(tc.container, tc.volume)
			u.SetManagedFields(tc.managed)
			got := listsDrift(u, rendered)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("drift %q, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Errorf("drift %q, want [%q]", got, tc.want)
			}
		})
	}
}

// Env vars, command-line arguments and probe headers carry credentials (kubectl set env,
// `--token=...` added with kubectl edit, `Authorization: Bearer ...`): their drift names the field
// without its values, in the plan, the state and the repair's log. Other fields keep their values.
// Before, the drift showed the hand-set value (at first of all three, then of arguments and headers).
func TestListDiffShowsNoValueThatMayBeASecret(t *testing.T) {
	rendered := objectFromYAML(t, `
kind: Deployment
apiVersion: apps/v1
spec:
  template:
    spec:
      containers:
      - name: runtime
        command: [rill]
        args: [runtime, start]
        env:
        - {name: TOKEN, value: rendered-value}
        readinessProbe:
          httpGet:
            path: /v1/ping
            httpHeaders:
            - {name: Authorization, value: Bearer rendered-value}
      initContainers:
      - name: init
        args: [--key=rendered-value]
`)
	live := objectFromYAML(t, `
kind: Deployment
apiVersion: apps/v1
spec:
  template:
    spec:
      containers:
      - name: runtime
        command: [s3cr3t-command]
        args: [runtime, --token=s3cr3t-arg]
        env:
        - {name: TOKEN, value: s3cr3t-by-hand}
        readinessProbe:
          httpGet:
            path: /v2/ping
            httpHeaders:
            - {name: Authorization, value: Bearer s3cr3t-header}
      initContainers:
      - name: init
        args: [--key=s3cr3t-init]
`)
	c := "spec.template.spec.containers[runtime]"
	for _, tc := range []struct{ name, live, want string }{
		{"env", `{"name": "runtime", "command": ["rill"], "args": ["runtime", "start"], "env": [{"name": "TOKEN", "value": "s3cr3t-by-hand"}]}`,
			c + ".env[TOKEN].value differs from the template's (env values are not shown: they may be secrets)"},
		{"args", `{"name": "runtime", "args": ["runtime", "--token=s3cr3t-arg"]}`,
			c + ".args[1] differs from the template's (command-line arguments are not shown: they may be secrets)"},
		{"command", `{"name": "runtime", "command": ["s3cr3t-command"], "args": ["runtime", "start"]}`,
			c + ".command[0] differs from the template's (command-line arguments are not shown: they may be secrets)"},
		{"probe header", `{"name": "runtime", "command": ["rill"], "args": ["runtime", "start"], "env": [{"name": "TOKEN", "value": "rendered-value"}], "readinessProbe": {"httpGet": {"path": "/v1/ping", "httpHeaders": [{"name": "Authorization", "value": "Bearer s3cr3t-header"}]}}}`,
			c + ".readinessProbe.httpGet.httpHeaders[Authorization].value differs from the template's (HTTP header values are not shown: they may be secrets)"},
		{"other fields keep their values", `{"name": "runtime", "command": ["rill"], "args": ["runtime", "start"], "env": [{"name": "TOKEN", "value": "rendered-value"}], "readinessProbe": {"httpGet": {"path": "/v2/ping", "httpHeaders": [{"name": "Authorization", "value": "Bearer rendered-value"}]}}}`,
			c + ".readinessProbe.httpGet.path is /v2/ping, want /v1/ping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var container map[string]any
			if err := json.Unmarshal([]byte(tc.live), &container); err != nil {
				t.Fatal(err)
			}
			l := live.DeepCopy()
			if err := unstructured.SetNestedSlice(l.Object, []any{container}, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			got := listsDrift(l, rendered)
			if len(got) == 0 || got[0] != "Deployment /: "+tc.want {
				t.Errorf("drift %q, want first %q", got, "Deployment /: "+tc.want)
			}
		})
	}
	// The init container's argument, and no value set by hand anywhere in the drift.
	got := strings.Join(listsDrift(live, rendered), "\n")
	if !strings.Contains(got, "spec.template.spec.initContainers[init].args[0] differs from the template's") || strings.Contains(got, "s3cr3t") {
		t.Errorf("drift %q: want the init container's argument named, and no value set by hand", got)
	}
}
