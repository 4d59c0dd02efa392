package kubernetes

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// deploymentWith is a Deployment whose pod template's spec is podSpec (YAML): the part of a
// Deployment that listsDrift compares.
func deploymentWith(t *testing.T, podSpec string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(podSpec), &spec); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "apiVersion": "apps/v1",
		"spec": map[string]any{"template": map[string]any{"spec": spec}}}}
}

// wantDrift: got is the one drift want, or none when want is "".
func wantDrift(t *testing.T, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) != 0:
		t.Errorf("drift %q, want none", got)
	case want != "" && (len(got) != 1 || got[0] != want):
		t.Errorf("drift %q, want [%q]", got, want)
	}
}

// What the API server adds (defaults), omits (zero values) or rewrites (quantities) is no drift; a
// value, a missing entry or an extra one another field manager set is, named by its path. An extra
// entry, or another value, in a list no field manager but ours owns a field of is admission's (a
// policy that injects into every Deployment, or rewrites an env value), which the apply cannot undo:
// no drift, or the plan would never be empty. A missing entry is drift whoever removed it.
func TestListDiffIgnoresServerDefaultsOnly(t *testing.T) {
	rendered := deploymentWith(t, `
containers:
- name: runtime
  image: rill:v1
  env:
  - {name: A, value: ""}
  - {name: B, value: /data}
  ports:
  - {name: http, containerPort: 8080}
  securityContext: {}
volumes:
- name: data
  emptyDir: {sizeLimit: 1073741824}
`)
	live := func(env, container, volume string) *unstructured.Unstructured {
		return deploymentWith(t, `
containers:
- name: runtime
  image: rill:hacked
  imagePullPolicy: IfNotPresent
  terminationMessagePath: /dev/termination-log
  env:
  - {name: A}
  - `+env+`
`+container+`
volumes:
- name: data
  emptyDir: {sizeLimit: `+volume+`}
`)
	}
	// What kubectl edit records when it adds a port, or changes one, an env value or a volume: its
	// field manager owns the entry, or the field.
	const runtime = `"f:containers":{"k:{\"name\":\"runtime\"}":{`
	edited := func(fields string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{managedBy("kubectl-edit", "{"+fields+"}")}
	}
	port := edited(runtime + `"f:ports":{"k:{\"containerPort\":1,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}}}}`)
	portValue := edited(runtime + `"f:ports":{"k:{\"containerPort\":8081,\"protocol\":\"TCP\"}":{"f:containerPort":{}}}}}`)
	envValue := edited(runtime + `"f:env":{"k:{\"name\":\"B\"}":{"f:value":{}}}}}`)
	sizeLimit := edited(`"f:volumes":{"k:{\"name\":\"data\"}":{"f:emptyDir":{"f:sizeLimit":{}}}}`)
	const ports, data, moved = "  ports:\n  - {name: http, containerPort: 8080}", "{name: B, value: /data}", "{name: B, value: /mnt/data}"
	for _, tc := range []struct {
		name, env, container, volume, want string
		managed                            []metav1.ManagedFieldsEntry
	}{
		{"defaults", data, "  ports:\n  - {name: http, containerPort: 8080, protocol: TCP}", "1Gi", "", nil},
		{"port", data, "  ports:\n  - {name: http, containerPort: 8081, protocol: TCP}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080", portValue},
		{"extra port by hand", data, ports + "\n  - {name: x, containerPort: 1}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports has 2 entries, want 1", port},
		// An entry no field manager owns was added by admission on the provisioner's own apply.
		{"extra port by admission", data, "  ports:\n  - {name: x, containerPort: 1}\n  - {name: http, containerPort: 8080}", "1Gi", "", nil},
		{"port missing", data, "  ports: []", "1Gi", "Deployment /: spec.template.spec.containers[runtime].ports has 0 entries, want 1", nil},
		{"quantity", data, ports, "2Gi",
			"Deployment /: spec.template.spec.volumes[data].emptyDir.sizeLimit is 2Gi, want 1073741824", sizeLimit},
		// Values no field manager but ours owns were rewritten by admission on our own apply (a
		// policy that moves data directories). Before, the plan after every apply was an update that
		// admission undid again.
		{"env value by hand", moved, ports, "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].env[B].value differs from the template's (env values are not shown: they may be secrets)", envValue},
		{"env value by admission", moved, ports, "1Gi", "", nil},
		// Beside a hand edit of the list, the value admission rewrote is still admission's.
		{"env value by admission beside a port by hand", moved, "  ports:\n  - {name: http, containerPort: 8081, protocol: TCP}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080", portValue},
		{"quantity by admission", data, ports, "2Gi", "", nil},
		// A field that names the entry is no rewrite: env B removed by hand (which leaves no
		// ownership) and C added by admission are another entry in its place.
		{"env var replaced by another", "{name: C, value: /data}", ports, "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].env[B].name is C, want B", nil},
		{"port moved", data, "  ports:\n  - {name: http, containerPort: 18080}", "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].ports[http].containerPort is 18080, want 8080", nil},
		{"env value removed", "{name: B, value: \"\"}", ports, "1Gi",
			"Deployment /: spec.template.spec.containers[runtime].env[B].value differs from the template's (env values are not shown: they may be secrets)", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := live(tc.env, tc.container, tc.volume)
			u.SetManagedFields(tc.managed)
			got := listsDrift(u, rendered)
			wantDrift(t, got, tc.want)
		})
	}
}

// Env vars, command-line arguments and probe headers carry credentials (kubectl set env,
// `--token=...` added with kubectl edit, `Authorization: Bearer ...`): their drift names the field
// without its values, in the plan, the state and the repair's log. Other fields keep their values.
// Before, the drift showed the hand-set value (at first of all three, then of arguments and headers).
func TestListDiffShowsNoValueThatMayBeASecret(t *testing.T) {
	rendered := deploymentWith(t, `
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
	live := deploymentWith(t, `
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
	// kubectl edit's ownership: without another field manager's, a value is admission's (see
	// TestListDiffIgnoresServerDefaultsOnly).
	edited := []metav1.ManagedFieldsEntry{managedBy("kubectl-edit", `{"f:containers":{},"f:initContainers":{}}`)}
	live.SetManagedFields(edited)
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
			l.SetManagedFields(edited)
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

// managedBy is a managed-fields entry of an update by manager (kubectl edit, patch, set env: what
// they changed, and only that) owning fields, FieldsV1 under the Deployment's pod spec.
func managedBy(manager, podSpecFields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:template":{"f:spec":` + podSpecFields + `}}}`)}}
}

// A field added by hand inside an entry of an owned list (kubectl edit adds readOnly to the data
// mount, a hostPort to the HTTP port, a resource limit) is drift naming it, and so is any change of a
// pod's tolerations or image pull secrets; what the API server defaults (a port's protocol, a
// container's imagePullPolicy and terminationMessagePath) or admission adds on the provisioner's own
// apply belongs to no field manager, and is none. Before, none of the hand edits was drift: the
// templates leave those fields unset, and the lists were not compared.
func TestListDiffNamesFieldsAddedByHand(t *testing.T) {
	rendered := deploymentWith(t, `
containers:
- name: runtime
  image: rill:v1
  ports:
  - {name: http, containerPort: 8080}
  resources:
    limits: {cpu: "1"}
  volumeMounts:
  - {name: data, mountPath: /data}
`)
	// What the API server stores after the provisioner's apply: the defaults filled in.
	const live = `
containers:
- name: runtime
  image: rill:v1
  imagePullPolicy: IfNotPresent
  terminationMessagePath: /dev/termination-log
  ports:
  - {name: http, containerPort: 8080, protocol: TCP%s}
  resources:
    limits: {cpu: "1"%s}
  volumeMounts:
  - {name: data, mountPath: /data%s}%s
`
	const (
		port  = `"f:containers":{"k:{\"name\":\"runtime\"}":{"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{%s}}}}`
		mount = `"f:containers":{"k:{\"name\":\"runtime\"}":{"f:volumeMounts":{"k:{\"mountPath\":\"/data\"}":{%s}}}}`
		c     = "Deployment /: spec.template.spec.containers[runtime]"
	)
	for _, tc := range []struct {
		name                             string
		port, limit, mount, pod, managed string // managed: FieldsV1 of kubectl-edit's entry under the pod spec, "" for none
		want                             string
	}{
		{"defaults", "", "", "", "", "", ""},
		{"defaults beside another edit", "", "", "", "", "{" + fmt.Sprintf(port, `"f:name":{}`) + "}", ""},
		{"read-only mount", "", "", ", readOnly: true", "", "{" + fmt.Sprintf(mount, `"f:readOnly":{}`) + "}",
			c + ".volumeMounts[data].readOnly is true, want unset (set by kubectl-edit)"},
		{"read-only mount by admission", "", "", ", readOnly: true", "", "", ""},
		{"host port", ", hostPort: 80", "", "", "", "{" + fmt.Sprintf(port, `"f:hostPort":{}`) + "}",
			c + ".ports[http].hostPort is 80, want unset (set by kubectl-edit)"},
		{"resource limit", "", `, memory: 1Gi`, "", "", `{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:resources":{"f:limits":{"f:memory":{}}}}}}`,
			c + ".resources.limits.memory is 1Gi, want unset (set by kubectl-edit)"},
		{"arguments", "", "", "", "\n  args: [--token=s3cr3t]", `{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:args":{}}}}`,
			c + ".args is set by kubectl-edit, want unset (command-line arguments are not shown: they may be secrets)"},
		{"probe with a header", "", "", "", "\n  readinessProbe: {httpGet: {path: /, port: 8080, httpHeaders: [{name: Authorization, value: Bearer s3cr3t}]}}",
			`{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:readinessProbe":{".":{},"f:httpGet":{".":{},"f:httpHeaders":{},"f:path":{},"f:port":{}}}}}}`,
			c + ".readinessProbe is set by kubectl-edit, want unset (HTTP header values are not shown: they may be secrets)"},
		{"toleration", "", "", "", "\ntolerations:\n- {key: dedicated, operator: Exists}", `{"f:tolerations":{}}`,
			"Deployment /: spec.template.spec.tolerations has 1 entries, want 0"},
		{"image pull secret", "", "", "", "\nimagePullSecrets:\n- {name: regcred}", `{"f:imagePullSecrets":{".":{},"k:{\"name\":\"regcred\"}":{}}}`,
			"Deployment /: spec.template.spec.imagePullSecrets has 1 entries, want 0"},
		{"image pull secret by admission", "", "", "", "\nimagePullSecrets:\n- {name: regcred}", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := deploymentWith(t, fmt.Sprintf(live, tc.port, tc.limit, tc.mount, tc.pod))
			if tc.managed != "" {
				u.SetManagedFields([]metav1.ManagedFieldsEntry{managedBy("kubectl-edit", tc.managed)})
			}
			got := listsDrift(u, rendered)
			wantDrift(t, got, tc.want)
			if strings.Contains(strings.Join(got, "\n"), "s3cr3t") {
				t.Errorf("drift %q shows a value set by hand", got)
			}
		})
	}
}

// This provisioner's own update (a repair's merge patch, whose entry the apply after it drops) owns
// what it put back and what defaulting filled in again: no hand edit. Counted as one, a repair whose
// entry could not be dropped (best effort) would leave imagePullPolicy as drift.
func TestListDiffOwnUpdateAddsNothing(t *testing.T) {
	rendered := deploymentWith(t, "{containers: [{name: runtime, image: rill:v1}]}")
	u := deploymentWith(t, "{containers: [{name: runtime, image: rill:v1, imagePullPolicy: IfNotPresent}]}")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{managedBy(FieldManager, `{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:imagePullPolicy":{}}}}`)})
	if got := listsDrift(u, rendered); len(got) != 0 {
		t.Errorf("drift %q, want none", got)
	}
}

// An Update entry of our own that a repair's merge patch left (folding it into the Apply entry is best
// effort) co-owns what it put back: the next apply cannot remove an entry the templates no longer
// render (a new data_dir moves the mount), so the list counts as edited, to be replaced, and the moved
// value is drift, not a value admission rewrote.
func TestListDiffOwnUpdateLeftByARepairStillEdits(t *testing.T) {
	u := deploymentWith(t, "{containers: [{name: runtime, volumeMounts: [{name: data, mountPath: /data}]}]}")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{managedBy(FieldManager,
		`{"f:containers":{"k:{\"name\":\"runtime\"}":{"f:volumeMounts":{"k:{\"mountPath\":\"/data\"}":{".":{},"f:mountPath":{},"f:name":{}}}}}}`)})
	if !editedByAnother(u, []string{"spec", "template", "spec", "containers"}) {
		t.Error("a list our repair's Update entry co-owns is not edited: the apply would not replace it")
	}
	rendered := deploymentWith(t, "{containers: [{name: runtime, volumeMounts: [{name: data, mountPath: /mnt/data}]}]}")
	wantDrift(t, listsDrift(u, rendered), "Deployment /: spec.template.spec.containers[runtime].volumeMounts[data].mountPath is /data, want /mnt/data")
}

// A pod's tolerations are an atomic list: a hand edit takes all of it from the apply, and every field
// of it is compared, a changed value as one the templates leave unset.
func TestListDiffComparesTolerationsWhole(t *testing.T) {
	rendered := deploymentWith(t, `
tolerations:
- {key: dedicated, operator: Equal, value: rill, effect: NoSchedule}
`)
	edited := []metav1.ManagedFieldsEntry{managedBy("kubectl-edit", `{"f:tolerations":{}}`)}
	for _, tc := range []struct{ name, live, want string }{
		{"value", "{key: dedicated, operator: Equal, value: other, effect: NoSchedule}",
			"Deployment /: spec.template.spec.tolerations[0].value is other, want rill"},
		{"field added", "{key: dedicated, operator: Equal, value: rill, effect: NoSchedule, tolerationSeconds: 60}",
			"Deployment /: spec.template.spec.tolerations[0].tolerationSeconds is 60, want unset (set by kubectl-edit)"},
		{"as rendered", "{key: dedicated, operator: Equal, value: rill, effect: NoSchedule}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := deploymentWith(t, "{tolerations: ["+tc.live+"]}")
			u.SetManagedFields(edited)
			got := listsDrift(u, rendered)
			wantDrift(t, got, tc.want)
		})
	}
}

// After a repair of the containers, other field managers' ownership there goes (an entry that owned
// nothing else with it, another trimmed to the rest), our repair's Update entry folds into the Apply
// entry, and the operations run from the last entry to the first, so that a removal shifts none
// still to patch.
func TestRepairedEntriesDropOtherOwnersOfTheRepairedLists(t *testing.T) {
	containers := `"f:containers":{"k:{\"name\":\"runtime\"}":{"f:imagePullPolicy":{}}}`
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	entries := []metav1.ManagedFieldsEntry{
		entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:template":{"f:spec":{`+containers+`}}}}`),
		entry(FieldManager, metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:template":{"f:spec":{`+containers+`}}}}`),
		entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:template":{"f:spec":{`+containers+`}}}}`),
		entry("kubectl-rollout", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{}},"f:spec":{`+containers+`}}}}`),
		entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{}}}`),
	}
	got, err := json.Marshal(repairedEntries([][]string{{"spec", "template", "spec", "containers"}})(entries))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"replace","path":"/metadata/managedFields/3/fieldsV1","value":{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{}}}}}},` +
		`{"op":"remove","path":"/metadata/managedFields/2"},{"op":"remove","path":"/metadata/managedFields/1"}]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
