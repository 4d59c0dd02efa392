package kubernetes

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// The hand edits a platform engineer makes to a runtime's lists (kubectl patch or edit, another field
// manager) show in the plan as drift naming the field, and the next apply leaves each list exactly as
// the templates render it, with one write more only where server-side apply alone cannot take the
// edit back, and none on the apply after. Before: none of them was drift (the plan was empty, so
// nothing repaired them); an apply after the container port's edit was refused by the API server
// ("spec.template.spec.containers[0].ports[2].name: Duplicate value: \"http\""), and after the env
// var's or the mount path's it succeeded but kept the edited entry beside the rendered one, as after
// a toleration, an image pull secret, a mount's readOnly or a port's hostPort added by hand. A tls
// added by hand to an Ingress whose template has none was drift, which no apply removed.
func TestIntegrationListEditedByHandIsDriftAndRepairedByTheApply(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource string // of gvrOf
		prefix   string // of the object's name before runtime-<pid>
		patch    string // JSON patch
		list     []string
		drift    string // in the drift
		repaired bool   // the apply writes the list first (logged)
	}{
		{"container port", "deployments", "",
			`[{"op": "replace", "path": "/spec/template/spec/containers/0/ports/0/containerPort", "value": 8081}]`,
			[]string{"spec", "template", "spec", "containers"}, "spec.template.spec.containers[runtime].ports[http].containerPort is 8081, want 8080", true},
		{"env var added", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "DEBUG", "value": "1"}}]`,
			[]string{"spec", "template", "spec", "containers"}, "spec.template.spec.containers[runtime].env has 4 entries, want 3", true},
		{"mount path", "deployments", "",
			`[{"op": "replace", "path": "/spec/template/spec/containers/0/volumeMounts/0/mountPath", "value": "/mnt/elsewhere"}]`,
			[]string{"spec", "template", "spec", "containers"}, "spec.template.spec.containers[runtime].volumeMounts[data].mountPath is /mnt/elsewhere, want /data", true},
		{"volume", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "scratch", "emptyDir": {}}}]`,
			[]string{"spec", "template", "spec", "volumes"}, "spec.template.spec.volumes has 2 entries, want 1", true},
		{"toleration added", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/tolerations", "value": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]}]`,
			[]string{"spec", "template", "spec", "tolerations"}, "spec.template.spec.tolerations has 1 entries, want 0", true},
		{"image pull secret added", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/imagePullSecrets", "value": [{"name": "regcred"}]}]`,
			[]string{"spec", "template", "spec", "imagePullSecrets"}, "spec.template.spec.imagePullSecrets has 1 entries, want 0", true},
		{"mount made read-only", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/0/readOnly", "value": true}]`,
			[]string{"spec", "template", "spec", "containers"}, "spec.template.spec.containers[runtime].volumeMounts[data].readOnly is true, want unset (set by kubectl-edit)", true},
		{"host port added", "deployments", "",
			`[{"op": "add", "path": "/spec/template/spec/containers/0/ports/0/hostPort", "value": 18080}]`,
			[]string{"spec", "template", "spec", "containers"}, "spec.template.spec.containers[runtime].ports[http].hostPort is 18080, want unset (set by kubectl-edit)", true},
		{"ingress tls added", "ingresses", "http-",
			`[{"op": "add", "path": "/spec/tls", "value": [{"secretName": "elsewhere"}]}]`,
			[]string{"spec", "tls"}, "spec.tls has 1 entries, want 0", true},
		{"ingress path and backend", "ingresses", "http-",
			`[{"op": "replace", "path": "/spec/rules/0/http/paths/0/path", "value": "/v2"},
			  {"op": "replace", "path": "/spec/rules/0/http/paths/0/backend/service/port", "value": {"number": 9090}}]`,
			[]string{"spec", "rules"}, "spec.rules[0].http.paths[0].backend.service.port.name is unset, want http", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			core, logs := observer.New(zap.InfoLevel)
			e.p.logger = zap.New(core)
			r := e.newRuntime()
			e.provision(e.p, r, args(1, "v1", false))
			name := tc.prefix + "runtime-" + pidOf(r)
			objects := e.c.dynamic.Resource(gvrOf(tc.resource)).Namespace(e.ns)
			read := func() *unstructured.Unstructured {
				t.Helper()
				u, err := objects.Get(e.ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			rendered, _, _ := unstructured.NestedSlice(read().Object, tc.list...)
			// The field manager of kubectl edit, whose update owns what it changed.
			if _, err := objects.Patch(e.ctx, name, types.JSONPatchType, []byte(tc.patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
			drift := e.driftOf(e.p, r)
			if len(drift) != 1 || !strings.Contains(drift[0], tc.drift) {
				t.Errorf("drift %q, want one entry with %q", drift, tc.drift)
			}
			if _, err := e.p.Provision(e.ctx, r, args(1, "v1", false)); err != nil {
				t.Fatalf("Provision after the edit: %v", err)
			}
			after := read()
			if got, _, _ := unstructured.NestedSlice(after.Object, tc.list...); !reflect.DeepEqual(got, rendered) {
				t.Errorf("after the apply %s is\n%v\nwant, as applied before the edit,\n%v", strings.Join(tc.list, "."), got, rendered)
			}
			if drift := e.driftOf(e.p, r); len(drift) != 0 {
				t.Errorf("drift after the apply %q, want none", drift)
			}
			logged := logs.FilterMessage("replaced lists edited outside Terraform").All()
			if want := map[bool]int{true: 1}[tc.repaired]; len(logged) != want {
				t.Errorf("repair logged %d times, want %d: %v", len(logged), want, logged)
			}
			// The generation counts changes of the spec (the Deployment's status changes meanwhile).
			e.provision(e.p, r, args(1, "v1", false))
			if again := read(); again.GetGeneration() != after.GetGeneration() {
				t.Errorf("a second Provision changed the object (generation %d -> %d)", after.GetGeneration(), again.GetGeneration())
			}
		})
	}
}

// A repair's merge patch is an update under this provisioner's field manager, and leaves its entry
// owning what it put back. Once a list was repaired, a later change that moves an entry of it (the
// spec's data_dir moves the data volume's mount; a template moves the HTTP container port) must
// still leave the list exactly as rendered, with no drift after. Before, the repair's own entry
// counted as the apply's, so no repair ran again and the forced apply could not remove the old entry:
// the mount stayed beside the new one (drift "volumeMounts has 2 entries, want 1" after every apply),
// and the port made the apply fail ("Duplicate value: \"http\"").
func TestIntegrationRepairedListFollowsTheTemplatesAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  string // JSON patch of the Deployment, by hand
		spec  func(t *testing.T) string
		field func(dep *appsv1.Deployment) []string
		want  []string
	}{
		{"data_dir moves the mount",
			`[{"op": "replace", "path": "/spec/template/spec/containers/0/volumeMounts/0/mountPath", "value": "/mnt/elsewhere"}]`,
			func(*testing.T) string { return `, "data_dir": "/mnt/data"` },
			func(dep *appsv1.Deployment) (out []string) {
				for _, m := range dep.Spec.Template.Spec.Containers[0].VolumeMounts {
					out = append(out, m.Name+" "+m.MountPath)
				}
				return out
			},
			[]string{"data /mnt/data"}},
		{"a template moves the port",
			`[{"op": "replace", "path": "/spec/template/spec/containers/0/ports/0/containerPort", "value": 8082}]`,
			func(t *testing.T) string {
				const port = "- name: http\n              containerPort: 8080\n"
				moved := deploymentTemplateWith(t, port, strings.Replace(port, "8080", "8081", 1))
				return `, "template_paths": {"deployment": "` + moved + `"}`
			},
			func(dep *appsv1.Deployment) (out []string) {
				for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
					out = append(out, fmt.Sprintf("%s %d", p.Name, p.ContainerPort))
				}
				return out
			},
			[]string{"http 8081", "grpc 9090"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			r, name := e.provisionedRuntime()
			deployments := e.apps.Deployments(e.ns)
			if _, err := deployments.Patch(e.ctx, name, types.JSONPatchType, []byte(tc.edit), metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
				t.Fatal(err)
			}
			e.provision(e.p, r, args(1, "v1", false)) // repairs the list
			if drift := e.driftOf(e.p, r); len(drift) != 0 {
				t.Fatalf("drift after the repair %q, want none", drift)
			}
			repaired, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range repaired.ManagedFields {
				if mf.Manager == FieldManager && mf.Operation != metav1.ManagedFieldsOperationApply {
					t.Errorf("after the repair the managed fields keep an %s entry of %s: %s", mf.Operation, FieldManager, mf.FieldsV1.Raw)
				}
			}

			changed := e.provisioner(tc.spec(t), zaptest.NewLogger(t))
			out, err := changed.Provision(e.ctx, r, args(1, "v1", false))
			if err != nil {
				t.Fatalf("Provision after the change: %v", err)
			}
			r.State, r.Config = out.State, out.Config
			dep, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.field(dep); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("after the change the Deployment has %q, want %q", got, tc.want)
			}
			if drift := e.driftOf(changed, r); len(drift) != 0 {
				t.Errorf("drift after the change %q, want none", drift)
			}
		})
	}
}

// A cluster policy that injects into every Deployment (Kyverno's pod-controller rules, a proxy
// injector; here a MutatingAdmissionPolicy was walked by hand) adds its entry on the provisioner's
// own apply, and no field manager owns it: the forced apply cannot remove it, and as drift it would
// plan an update after every apply. The test adds such an entry and drops its manager's entry of
// the managed fields, which is what the walk showed admission leaves. Before, the plan after the
// create already showed "env has 4 entries, want 3", and every one after it.
func TestIntegrationEntryNoFieldManagerOwnsIsNoDrift(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	objects := e.c.dynamic.Resource(gvrOf("deployments")).Namespace(e.ns)
	inject := []byte(`[{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "HTTP_PROXY", "value": "http://proxy:3128"}}]`)
	if _, err := objects.Patch(e.ctx, name, types.JSONPatchType, inject, metav1.PatchOptions{FieldManager: "admission"}); err != nil {
		t.Fatal(err)
	}
	target := &unstructured.Unstructured{}
	target.SetName(name)
	if err := rewriteManagedFields(e.ctx, objects, target, func(entries []metav1.ManagedFieldsEntry) []jsonPatchOp {
		for i, f := range entries {
			if f.Manager == "admission" {
				return []jsonPatchOp{{Op: "remove", Path: managedFieldsPath(i, "")}}
			}
		}
		return nil
	}, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Errorf("drift %q, want none: no field manager set the entry", drift)
	}
	before, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.provision(e.p, r, args(1, "v1", false))
	after, err := e.apps.Deployments(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Generation != before.Generation {
		t.Errorf("the apply changed the Deployment (generation %d -> %d): it has nothing to repair", before.Generation, after.Generation)
	}
}

// A hand edit of tolerations the templates render (a platform engineer moving the runtime to other
// nodes) takes the atomic list from the apply; the forced apply takes it back whole, with no write
// more. Before, neither a changed toleration nor a field added to one was drift (tolerations were
// not compared), so the plan was empty and nothing put the rendered ones back.
func TestIntegrationTolerationsEditedByHandAreDriftAndRepairedByTheApply(t *testing.T) {
	const at = "      securityContext:\n        fsGroup: 1000\n"
	const tolerations = "      tolerations:\n        - key: dedicated\n          operator: Exists\n          effect: NoExecute\n"
	template := deploymentTemplateWith(t, at, at+tolerations)
	for _, tc := range []struct{ name, patch, drift string }{
		{"key", `[{"op": "replace", "path": "/spec/template/spec/tolerations/0/key", "value": "other"}]`,
			"spec.template.spec.tolerations[0].key is other, want dedicated"},
		{"field added", `[{"op": "add", "path": "/spec/template/spec/tolerations/0/tolerationSeconds", "value": 60}]`,
			"spec.template.spec.tolerations[0].tolerationSeconds is 60, want unset (set by kubectl-edit)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, `, "template_paths": {"deployment": "`+template+`"}`)
			core, logs := observer.New(zap.InfoLevel)
			e.p.logger = zap.New(core)
			r, name := e.provisionedRuntime()
			deployments := e.apps.Deployments(e.ns)
			if _, err := deployments.Patch(e.ctx, name, types.JSONPatchType, []byte(tc.patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
			if drift := e.driftOf(e.p, r); len(drift) != 1 || !strings.Contains(drift[0], tc.drift) {
				t.Errorf("drift %q, want one entry with %q", drift, tc.drift)
			}
			e.provision(e.p, r, args(1, "v1", false))
			dep, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(dep.Spec.Template.Spec.Tolerations)
			if want := `[{"key":"dedicated","operator":"Exists","effect":"NoExecute"}]`; string(got) != want {
				t.Errorf("after the apply the tolerations are %s, want %s", got, want)
			}
			if drift := e.driftOf(e.p, r); len(drift) != 0 {
				t.Errorf("drift after the apply %q, want none", drift)
			}
			if logged := logs.FilterMessage("replaced lists edited outside Terraform").All(); len(logged) != 0 {
				t.Errorf("the list was replaced before the apply (%v): the forced apply takes an atomic list back by itself", logged)
			}
		})
	}
}

// What the API server defaults in a container (imagePullPolicy, terminationMessagePath, a port's
// protocol when the template leaves it out) is in the live object but in no field manager's fields,
// even beside a hand edit of the same container by an update that sent the whole object: no drift
// but the edit's own. A default changed by hand is the editor's, and drift until the apply puts the
// default back. Counting a field the templates leave unset as drift without asking who owns it, the
// first refresh after a create would already show drift, and every one after it.
func TestIntegrationFieldsTheAPIServerDefaultsAreNoDrift(t *testing.T) {
	const protocol = "              protocol: TCP\n"
	template := writeTemplate(t, "deployment.yaml", strings.ReplaceAll(defaultDeploymentTemplate(t), protocol, ""))
	e := newEnv(t, `, "template_paths": {"deployment": "`+template+`"}`)
	r, name := e.provisionedRuntime()
	deployments := e.apps.Deployments(e.ns)
	dep, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct := dep.Spec.Template.Spec.Containers[0]
	if ct.ImagePullPolicy == "" || ct.TerminationMessagePath == "" || ct.Ports[0].Protocol == "" {
		t.Fatalf("the API server defaulted nothing in %+v: this test needs defaults", ct)
	}
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Errorf("drift after the create %q, want none", drift)
	}

	// An update of the whole object (defaults included) that changes the container's image; the
	// controller's status updates may come between the read and the write.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		dep.Spec.Template.Spec.Containers[0].Image = "rilldata/rill:hacked"
		_, err = deployments.Update(e.ctx, dep, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "container runtime runs image rilldata/rill:hacked, want rilldata/rill:v1"
	if drift := e.driftOf(e.p, r); len(drift) != 1 || !strings.Contains(drift[0], want) {
		t.Errorf("drift %q, want only %q", drift, want)
	}

	// A default changed by hand.
	patch := `[{"op": "replace", "path": "/spec/template/spec/containers/0/terminationMessagePath", "value": "/tmp/message"}]`
	if _, err := deployments.Patch(e.ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	want = "spec.template.spec.containers[runtime].terminationMessagePath is /tmp/message, want unset (set by kubectl-edit)"
	e.driftRepairedByTheApply(t, r, want)
	if dep, err = deployments.Get(e.ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].TerminationMessagePath; got != ct.TerminationMessagePath {
		t.Errorf("after the apply terminationMessagePath is %s, want the default %s", got, ct.TerminationMessagePath)
	}
}

// A default changed by hand and then set back by hand (imagePullPolicy: Always while debugging, then
// IfNotPresent again) is owned by the hand edit with the default's value: drift, which the apply's
// repair cannot change (the API server defaults it again, to the same value, so the edit keeps it).
// The apply must drop that ownership, or the plan shows the drift after every apply.
func TestIntegrationDefaultSetBackByHandIsRepairedOnce(t *testing.T) {
	e := newEnv(t, "")
	r, name := e.provisionedRuntime()
	deployments := e.apps.Deployments(e.ns)
	dep, err := deployments.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	def := dep.Spec.Template.Spec.Containers[0].TerminationMessagePath
	for _, v := range []string{"/tmp/message", def} {
		patch := `[{"op": "replace", "path": "/spec/template/spec/containers/0/terminationMessagePath", "value": "` + v + `"}]`
		if _, err := deployments.Patch(e.ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	}
	want := "spec.template.spec.containers[runtime].terminationMessagePath is " + def + ", want unset (set by kubectl-edit)"
	e.driftRepairedByTheApply(t, r, want)
	if dep, err = deployments.Get(e.ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].TerminationMessagePath; got != def {
		t.Errorf("after the apply terminationMessagePath is %s, want the default %s", got, def)
	}
}

// driftRepairedByTheApply: the refresh of r reports drift containing want, and after an apply of r
// (1 slot, v1) none.
func (e *env) driftRepairedByTheApply(t *testing.T, r *provisioner.Resource, want string) {
	t.Helper()
	if drift := strings.Join(e.driftOf(e.p, r), "\n"); !strings.Contains(drift, want) {
		t.Errorf("drift %q, want %q", drift, want)
	}
	e.provision(e.p, r, args(1, "v1", false))
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Errorf("drift after the apply %q, want none", drift)
	}
}
