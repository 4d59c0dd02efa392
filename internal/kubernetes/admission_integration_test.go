package kubernetes

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	admissionregclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// admitted is what the test's admission webhook makes of every image without a digest in the
// namespace, as policy engines do: pinned to a digest (Kyverno's verifyImages with mutateDigest, its
// default; k8s-digester; Kubewarden's verify-image-signatures) and sent to a registry mirror (a
// Kyverno mutation rule for a pull-through cache).
func admitted(image string) string {
	return "mirror.rill.test/" + image + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
}

// A cluster whose admission rewrites a runtime's image, resources or env values gives it no drift:
// the Deployment runs "mirror.rill.test/rilldata/rill:v1@sha256:...", requests 1250m of CPU and has
// its data directory under /mnt, which is the rendered image, request and env var as admission
// rewrote them during the provisioner's own apply (a policy engine pinning digests or sending images
// to a mirror; GKE Autopilot rounding requests up; a policy moving data directories onto a mounted
// disk). Before,
// every refresh reported them as drift ("runs image ...@sha256:..., want rilldata/rill:v1"), so every
// plan after every apply was an update, whose apply admission rewrote again: the perpetual diff Argo
// CD users of Kyverno know. An image or a limit that another field manager set (kubectl set image,
// set resources, set env) is still drift, and the apply takes it back.
func TestIntegrationContainerFieldsRewrittenByAdmissionAreNoDrift(t *testing.T) {
	e := newEnv(t, "")
	e.rewriteContainersOnAdmission()

	r, name := e.provisionedRuntime()
	e.wantAdmitted(name)
	if drift := e.driftOf(e.p, r); len(drift) != 0 {
		t.Fatalf("an image, a request and an env value rewritten by admission on our own apply are drift: %q", drift)
	}

	for _, edit := range []struct {
		manager, patch, drift string
	}{
		// Another manager pins the image to another digest (which the webhook leaves alone).
		{"kubectl-set", `{"spec":{"template":{"spec":{"containers":[{"name":"runtime","image":"rilldata/rill:v1@sha256:` + strings.Repeat("f", 64) + `"}]}}}}`,
			"runs image rilldata/rill:v1@sha256:" + strings.Repeat("f", 64) + ", want rilldata/rill:v1"},
		{"kubectl-set", `{"spec":{"template":{"spec":{"containers":[{"name":"runtime","resources":{"limits":{"memory":"5Gi"}}}]}}}}`,
			"container runtime limits memory 5Gi, want 4Gi"},
		{"kubectl", `{"spec":{"template":{"spec":{"containers":[{"name":"runtime","env":[{"name":"RILL_RUNTIME_DATA_DIR","value":"/tmp"}]}]}}}}`,
			"env[RILL_RUNTIME_DATA_DIR].value differs from the template's"},
	} {
		if _, err := e.apps.Deployments(e.ns).Patch(e.ctx, name, types.StrategicMergePatchType, []byte(edit.patch), metav1.PatchOptions{FieldManager: edit.manager}); err != nil {
			t.Fatal(err)
		}
		drift := e.driftOf(e.p, r)
		if len(drift) != 1 || !strings.Contains(drift[0], edit.drift) {
			t.Fatalf("a field set by another field manager: drift %q, want %q", drift, edit.drift)
		}
		e.provision(e.p, r, args(1, "v1", false))
		e.wantAdmitted(name)
		if drift := e.driftOf(e.p, r); len(drift) != 0 {
			t.Fatalf("drift after the apply that repaired %q: %q", edit.drift, drift)
		}
	}
}

// wantAdmitted fails unless the Deployment runs the rendered image and CPU, and has the rendered data
// directory, as the test's webhook rewrites them.
func (e *env) wantAdmitted(deployment string) {
	e.t.Helper()
	dep, err := e.apps.Deployments(e.ns).Get(e.ctx, deployment, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != admitted("rilldata/rill:v1") || c.Resources.Requests.Cpu().String() != "1250m" || c.Resources.Limits.Cpu().String() != "1250m" {
		e.t.Fatalf("the Deployment runs %q with %s / %s CPU, want the rendered image and CPU as the webhook rewrites them", c.Image, c.Resources.Requests.Cpu(), c.Resources.Limits.Cpu())
	}
	for _, env := range c.Env {
		if env.Name == dataDirEnv && !strings.HasPrefix(env.Value, "/mnt/") {
			e.t.Fatalf("the Deployment's %s is %q, want the rendered one as the webhook rewrites it", dataDirEnv, env.Value)
		}
	}
}

// dataDirEnv is the env var of the runtime's data directory, which the test's webhook moves under /mnt.
const dataDirEnv = "RILL_RUNTIME_DATA_DIR"

// rewriteContainersOnAdmission registers, for the test's namespace only, a mutating admission webhook
// (an HTTPS server in this process, which the local API server calls) that rewrites every container
// image of a Deployment that has no digest as admitted does, a CPU request and limit of 1 to 1250m
// (as GKE Autopilot rounds them), and a data directory (dataDirEnv) not under /mnt to one under it,
// and waits until the API server uses it.
func (e *env) rewriteContainersOnAdmission() {
	e.t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		var dep appsv1.Deployment
		_ = json.Unmarshal(review.Request.Object.Raw, &dep)
		var ops []map[string]any
		for i, c := range dep.Spec.Template.Spec.Containers {
			if !strings.Contains(c.Image, "@") {
				ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/containers/%d/image", i), "value": admitted(c.Image)})
			}
			for kind, l := range map[string]corev1.ResourceList{"requests": c.Resources.Requests, "limits": c.Resources.Limits} {
				if cpu, ok := l[corev1.ResourceCPU]; ok && cpu.Cmp(resource.MustParse("1")) == 0 {
					ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/containers/%d/resources/%s/cpu", i, kind), "value": "1250m"})
				}
			}
			for j, env := range c.Env {
				if env.Name == dataDirEnv && env.Value != "" && !strings.HasPrefix(env.Value, "/mnt/") {
					ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/containers/%d/env/%d/value", i, j), "value": "/mnt" + env.Value})
				}
			}
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if len(ops) > 0 {
			resp.Patch, _ = json.Marshal(ops)
			pt := admissionv1.PatchTypeJSONPatch
			resp.PatchType = &pt
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	e.t.Cleanup(srv.Close)

	hooks, err := admissionregclient.NewForConfig(e.c.config)
	if err != nil {
		e.t.Fatal(err)
	}
	url := srv.URL + "/rewrite"
	none := admissionregv1.SideEffectClassNone
	fail := admissionregv1.Fail
	cfg := &admissionregv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "rewrite-images-" + e.ns},
		Webhooks: []admissionregv1.MutatingWebhook{{
			Name:                    "rewrite-images.rill.test",
			ClientConfig:            admissionregv1.WebhookClientConfig{URL: &url, CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
			Rules:                   []admissionregv1.RuleWithOperations{{Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update}, Rule: admissionregv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: e.ns}},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := hooks.MutatingWebhookConfigurations().Create(e.ctx, cfg, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = hooks.MutatingWebhookConfigurations().Delete(e.ctx, cfg.Name, metav1.DeleteOptions{})
	})

	// The API server picks the configuration up from a watch: a dry run shows when it has.
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe:v1"}}},
			},
		},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := e.apps.Deployments(e.ns).Create(e.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && got.Spec.Template.Spec.Containers[0].Image == admitted("probe:v1") {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the API server did not call the webhook within 30 s (last dry run: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
