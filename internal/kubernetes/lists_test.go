package kubernetes

import (
	"testing"

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
// value, a missing entry or an extra one is, named by its path.
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
	for _, tc := range []struct {
		name, container, volume, want string
	}{
		{"defaults", "        ports:\n        - {name: http, containerPort: 8080, protocol: TCP}", "1Gi", ""},
		{"port", "        ports:\n        - {name: http, containerPort: 8081, protocol: TCP}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080"},
		{"extra port", "        ports:\n        - {name: http, containerPort: 8080}\n        - {name: x, containerPort: 1}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports has 2 entries, want 1"},
		{"quantity", "        ports:\n        - {name: http, containerPort: 8080}", "2Gi",
			"Deployment /: spec.template.spec.volumes[data].emptyDir.sizeLimit is 2Gi, want 1073741824"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listsDrift(live(tc.container, tc.volume), rendered)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("drift %q, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Errorf("drift %q, want [%q]", got, tc.want)
			}
		})
	}
}
