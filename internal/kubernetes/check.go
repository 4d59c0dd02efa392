package kubernetes

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Check verifies that the cluster answers (GET /version) and that the credentials may list
// Deployments in the spec's namespace.
func (p *Provisioner) Check(ctx context.Context) error {
	c, err := p.clients.get(ctx)
	if err != nil {
		return err
	}
	if err := serverVersion(ctx, c); err != nil {
		return fmt.Errorf("cannot reach the Kubernetes API server at %s: %w", c.config.Host, err)
	}
	if _, err := c.apps.Deployments(p.spec.Namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("cannot list deployments in namespace %q: %w", p.spec.Namespace, err)
	}
	return nil
}

func serverVersion(ctx context.Context, c *clients) error {
	_, err := c.discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	return err
}

// CheckResource reads the runtime's objects and reports them as they are; it writes nothing.
//
//   - The Deployment is missing (a real 404 from a real API server): an error wrapping
//     provisioner.ErrResourceNotFound. Any other failure (unreachable server, 403, ...) is a plain
//     error: the runtime may well exist.
//   - State slots and hibernated are observed (slots annotation, spec.replicas == 0); version is the
//     args' version unless the image runs another tag than Provision would apply, in which case it is
//     that tag (so it differs from the args and Terraform plans an update).
//   - State drift lists every other difference from what Provision would apply now (see StateDrift);
//     warnings are as Provision reports them (see StateWarnings).
//   - Config storage_bytes is the volume's live requested size.
func (p *Provisioner) CheckResource(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	st, pid, names, err := p.resolve(r)
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &provisioner.ResourceOptions{}
	}
	c, err := p.clients.get(ctx)
	if err != nil {
		return nil, err
	}
	ns := st.Namespace
	dep, err := c.apps.Deployments(ns).Get(ctx, names.Deployment, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			if verr := serverVersion(ctx, c); verr != nil {
				return nil, fmt.Errorf("reading deployment %s/%s: the server answered 404 but does not look like a Kubernetes API server (GET /version: %v); not treating the runtime as gone", ns, names.Deployment, verr)
			}
			return nil, fmt.Errorf("%w: deployment %s/%s does not exist", provisioner.ErrResourceNotFound, ns, names.Deployment)
		}
		return nil, fmt.Errorf("reading deployment %s/%s: %w", ns, names.Deployment, err)
	}

	want := desiredArgs(opts, st)
	if _, err := provisioner.NewRuntimeArgs(opts.Args); err != nil && st.ImageTag == "" {
		// Imported: neither args nor a state say which version is wanted, so the tag that runs is
		// (reported as the version, not as drift), unless it is the default an unset version gets.
		if tag := dep.Annotations[AnnotationVersion]; tag != "" && tag != imageTag("", opts.RillVersion) {
			want.Version = tag
		}
	}
	obs := *want
	if n, err := strconv.Atoi(dep.Annotations[AnnotationSlots]); err == nil && n >= 1 {
		obs.Slots = n
	}
	obs.Hibernated = dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0

	data := newTemplateData(p.spec, pid, &obs, opts)
	data.Namespace = ns
	objs, err := p.templates.render(data)
	if err != nil {
		return nil, err
	}

	var drift, warnings []string
	liveChecksum := dep.Annotations[AnnotationTemplatesChecksum]
	if liveChecksum != p.templates.checksum {
		drift = append(drift, "templates: the manifest templates differ from those the runtime was applied with")
	}

	var storageBytes int64
	liveTag := dep.Annotations[AnnotationVersion]
	for _, ro := range objs {
		switch ro.slot.field {
		case "deployment":
			d, tag := deploymentDrift(dep, ro.obj, p.spec.Image)
			drift = append(drift, d...)
			if tag != "" {
				liveTag = tag
			}
		case "pvc":
			pvc, err := c.core.PersistentVolumeClaims(ns).Get(ctx, ro.obj.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				drift = append(drift, fmt.Sprintf("PersistentVolumeClaim %s/%s is missing", ns, ro.obj.GetName()))
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", ns, ro.obj.GetName(), err)
			}
			want, err := renderedStorage(ro.obj)
			if err != nil {
				return nil, err
			}
			have := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
			storageBytes = have.Value()
			switch have.Cmp(want) {
			case 1:
				warnings = append(warnings, volumeKeptWarning(ns, pvc.Name, have, want, strconv.Itoa(obs.Slots)))
			case -1:
				drift = append(drift, fmt.Sprintf("volume %s/%s requests %d bytes, %d slot(s) ask for %d", ns, pvc.Name, have.Value(), obs.Slots, want.Value()))
			}
		default:
			gvr, err := c.resourceFor(ro.obj.GroupVersionKind())
			if err != nil {
				return nil, err
			}
			_, err = c.dynamic.Resource(gvr).Namespace(ns).Get(ctx, ro.obj.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				drift = append(drift, fmt.Sprintf("%s %s/%s is missing", ro.obj.GetKind(), ns, ro.obj.GetName()))
			} else if err != nil {
				return nil, fmt.Errorf("reading %s %s/%s: %w", ro.obj.GetKind(), ns, ro.obj.GetName(), err)
			}
		}
	}

	version := want.Version
	if liveTag != "" && liveTag != data.ImageTag {
		version = liveTag
	}
	out := runtimeState{
		Namespace:         ns,
		ProvisionID:       pid,
		Slots:             obs.Slots,
		Version:           version,
		ImageTag:          liveTag,
		Hibernated:        obs.Hibernated,
		TemplatesChecksum: liveChecksum,
		Warnings:          warnings,
		Drift:             drift,
	}
	return &provisioner.Resource{
		ID:     r.ID,
		Type:   r.Type,
		State:  out.asMap(),
		Config: p.runtimeConfig(pid, obs.Slots, storageBytes),
	}, nil
}

// deploymentDrift compares the live Deployment with the rendered one: replicas, and each rendered
// container's image and resources. It also returns the tag the live image of spec.image runs ("" when
// no container runs that repository).
func deploymentDrift(live *appsv1.Deployment, rendered *unstructured.Unstructured, image string) (drift []string, liveTag string) {
	want := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, want); err != nil {
		return []string{"deployment: cannot compare with the template: " + err.Error()}, ""
	}
	name := live.Namespace + "/" + live.Name
	if want.Spec.Replicas != nil && live.Spec.Replicas != nil && *want.Spec.Replicas != *live.Spec.Replicas {
		drift = append(drift, fmt.Sprintf("deployment %s has %d replicas, want %d", name, *live.Spec.Replicas, *want.Spec.Replicas))
	}
	liveContainers := map[string]corev1.Container{}
	for _, ct := range live.Spec.Template.Spec.Containers {
		liveContainers[ct.Name] = ct
		if repo, tag := splitImage(ct.Image); repo == image && liveTag == "" {
			liveTag = tag
		}
	}
	for _, wc := range want.Spec.Template.Spec.Containers {
		lc, ok := liveContainers[wc.Name]
		if !ok {
			drift = append(drift, fmt.Sprintf("deployment %s has no container %q", name, wc.Name))
			continue
		}
		if lc.Image != wc.Image {
			drift = append(drift, fmt.Sprintf("deployment %s: container %s runs image %s, want %s", name, wc.Name, lc.Image, wc.Image))
		}
		drift = append(drift, resourceDrift(name, wc.Name, "requests", lc.Resources.Requests, wc.Resources.Requests)...)
		drift = append(drift, resourceDrift(name, wc.Name, "limits", lc.Resources.Limits, wc.Resources.Limits)...)
	}
	return drift, liveTag
}

func resourceDrift(dep, container, kind string, live, want corev1.ResourceList) []string {
	var out []string
	for _, res := range sortedResourceNames(want) {
		w := want[res]
		l, ok := live[res]
		if !ok || l.Cmp(w) != 0 {
			have := "nothing"
			if ok {
				have = l.String()
			}
			out = append(out, fmt.Sprintf("deployment %s: container %s %s %s %s, want %s", dep, container, kind, res, have, w.String()))
		}
	}
	return out
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// splitImage splits "repo[:tag][@digest]" into repository and tag ("" when untagged).
func splitImage(image string) (repo, tag string) {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[:i], image[i+1:]
	}
	return image, ""
}
