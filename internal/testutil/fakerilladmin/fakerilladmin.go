// Package fakerilladmin is a fake of Rill's admin service (which cannot run here) for tests of
// adoption and migration: it creates what Rill's admin would have created for a runtime, so that
// tests can import and adopt it.
//
//   - ApplyKubernetesRuntime applies a runtime's five objects the way Rill's kubernetes provisioner
//     does: templates rendered with Sprig and Rill's template data, names runtime-<id without dashes>,
//     labels managed-by rill-cloud-admin and instance <id>, a checksum/templates annotation, server-side
//     apply with the field manager rill-cloud-admin.
//   - Templates writes templates in the shape Rill documents (see templates/) to a directory.
//   - CreateStaticAssignments creates Rill's static_runtime_assignments table and rows in a
//     PostgreSQL database.
//
// It is written from the behaviour Rill documents, independently of this provider's code, so that a
// test compares the provider with what Rill does rather than with itself.
package fakerilladmin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// FieldManager and ManagedBy are what Rill's admin service applies its objects with.
const (
	FieldManager = "rill-cloud-admin"
	ManagedBy    = "rill-cloud-admin"
)

//go:embed templates/*.yaml
var templatesFS embed.FS

// TemplateFiles are the template files in the order Rill's admin applies their objects, by their
// template_paths key.
var TemplateFiles = []struct{ Key, File string }{
	{"pvc", "pvc.yaml"}, {"deployment", "deployment.yaml"}, {"service", "service.yaml"},
	{"http_ingress", "http_ingress.yaml"}, {"grpc_ingress", "grpc_ingress.yaml"},
}

// Templates writes the Rill-shaped templates to dir and returns their paths by template_paths key.
func Templates(dir string) (map[string]string, error) {
	paths := map[string]string{}
	for _, f := range TemplateFiles {
		b, err := templatesFS.ReadFile("templates/" + f.File)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, f.File)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
		paths[f.Key] = p
	}
	return paths, nil
}

// Runtime describes the runtime Rill's admin service provisions.
type Runtime struct {
	ResourceID  string            // a UUID; the provision ID is it without dashes
	Host        string            // the spec's host, with '*' for the provision ID ("http://*.rill.test")
	Image       string            // "rilldata/rill"
	Version     string            // the image tag
	Slots       int               // 1 CPU, 4 GiB and 40 GiB per slot
	Environment string            // "prod" when empty
	Annotations map[string]string // the project's annotations
}

// Names are the object names Rill's admin gives a runtime's objects.
type Names struct{ HTTPIngress, GRPCIngress, Service, Deployment, PVC string }

// templateData has the fields of Rill's template data.
type templateData struct {
	Image        string
	ImageTag     string
	ProvisionID  string
	Host         string
	CPU          int
	MemoryGB     int
	StorageBytes int64
	Slots        int
	Names        Names
	Annotations  map[string]string
	Environment  string
}

// ApplyKubernetesRuntime renders templates (paths by template_paths key, as Templates returns them)
// for rt and applies the objects to namespace of the cluster of kubeconfig as Rill's admin does.
func ApplyKubernetesRuntime(ctx context.Context, kubeconfig, namespace string, templates map[string]string, rt Runtime) error {
	pid := strings.ReplaceAll(rt.ResourceID, "-", "")
	env := rt.Environment
	if env == "" {
		env = "prod"
	}
	host := strings.ReplaceAll(rt.Host, "*", pid)
	if _, after, ok := strings.Cut(host, "//"); ok {
		host = after
	}
	names := Names{
		HTTPIngress: "http-runtime-" + pid, GRPCIngress: "grpc-runtime-" + pid,
		Service: "runtime-" + pid, Deployment: "runtime-" + pid, PVC: "runtime-" + pid,
	}
	data := &templateData{
		Image: rt.Image, ImageTag: rt.Version, ProvisionID: pid, Host: host,
		CPU: rt.Slots, MemoryGB: 4 * rt.Slots, StorageBytes: int64(rt.Slots) * 40 << 30, Slots: rt.Slots,
		Names: names, Annotations: rt.Annotations, Environment: env,
	}
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	h := sha256.New()
	var objs []*unstructured.Unstructured
	for _, f := range TemplateFiles {
		text, err := os.ReadFile(templates[f.Key])
		if err != nil {
			return err
		}
		h.Write(text)
		tmpl, err := template.New(f.File).Funcs(funcs).Parse(string(text))
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			return fmt.Errorf("%s: %w", f.File, err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return fmt.Errorf("%s: %w", f.File, err)
		}
		obj.SetName(map[string]string{
			"pvc": names.PVC, "deployment": names.Deployment, "service": names.Service,
			"http_ingress": names.HTTPIngress, "grpc_ingress": names.GRPCIngress,
		}[f.Key])
		objs = append(objs, obj)
	}
	checksum := hex.EncodeToString(h.Sum(nil))
	for _, obj := range objs {
		obj.SetNamespace(namespace)
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = ManagedBy
		labels["app.kubernetes.io/instance"] = pid
		obj.SetLabels(labels)
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["checksum/templates"] = checksum
		obj.SetAnnotations(ann)
		gvr := resourceOf(obj.GroupVersionKind())
		if _, err := dyn.Resource(gvr).Namespace(namespace).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	plural := map[string]string{
		"Deployment": "deployments", "Service": "services", "PersistentVolumeClaim": "persistentvolumeclaims", "Ingress": "ingresses",
	}[gvk.Kind]
	return gvk.GroupVersion().WithResource(plural)
}

// StaticAssignment is a row of Rill's static_runtime_assignments table.
type StaticAssignment struct {
	ResourceID string
	Host       string
	Slots      int
}

// CreateStaticAssignments creates Rill's static_runtime_assignments table (as Rill's admin
// migrations define it) in the database of dsn, and inserts rows.
func CreateStaticAssignments(ctx context.Context, dsn string, rows []StaticAssignment) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS static_runtime_assignments (
		id UUID DEFAULT gen_random_uuid() PRIMARY KEY,
		resource_id UUID NOT NULL,
		host TEXT NOT NULL,
		slots INTEGER NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX IF NOT EXISTS static_runtime_assignments_resource_id_idx ON static_runtime_assignments (resource_id)`); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := conn.Exec(ctx, `INSERT INTO static_runtime_assignments (resource_id, host, slots) VALUES ($1, $2, $3)
			ON CONFLICT (resource_id) DO UPDATE SET slots = EXCLUDED.slots`, r.ResourceID, r.Host, r.Slots); err != nil {
			return err
		}
	}
	return nil
}
