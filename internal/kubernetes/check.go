package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		return unreachable(c, "", err)
	}
	if _, err := c.apps.Resource(deploymentsResource).Namespace(p.spec.Namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("cannot list deployments in namespace %q: %w%s", p.spec.Namespace, err, rbacHint(err))
	}
	return nil
}

var _ provisioner.CreateChecker = (*Provisioner)(nil)

// CheckCreate implements provisioner.CreateChecker, at plan time: it loads the kubeconfig (restConfig)
// and reads the cluster's identity, what every Provision reads first (clusterID: one GET, remembered
// by the provisioner). It writes nothing, as the static pool's plan-time read of its ledger. Its
// errors are the apply's, on field kubeconfig_path, where the cluster and its credentials come from
// (the spec's empty path names the in-cluster service account); a failure is never ErrCannotCreate:
// a kubeconfig that does not exist at plan time may be written by the apply, before any runtime is
// created (the reason the initializer does not read it).
func (p *Provisioner) CheckCreate(ctx context.Context, rt provisioner.ResourceType) error {
	if !p.Supports(rt) {
		return provisioner.CannotCreate(fmt.Errorf("%w, not %q", errRuntimesOnly, rt))
	}
	c, err := p.clients.get(ctx)
	if err == nil {
		_, err = p.clusterID(ctx, c)
	}
	if err != nil {
		return &provisioner.FieldError{Path: "kubeconfig_path", Err: err}
	}
	return nil
}

// unreachable is the error of a request the API server did not answer (or, from Check, answered
// with an error), in the words the troubleshooting guide lists; doing, when not empty, says what the
// request was for.
func unreachable(c *clients, doing string, err error) error {
	if doing != "" {
		return fmt.Errorf("cannot reach the Kubernetes API server at %s (%s): %w", c.config.Host, doing, err)
	}
	return fmt.Errorf("cannot reach the Kubernetes API server at %s: %w", c.config.Host, err)
}

func serverVersion(ctx context.Context, c *clients) error {
	_, err := c.rest.Get().AbsPath("/version").Do(ctx).Raw()
	return err
}

// CheckResource reads the runtime's objects and reports them as they are; it writes nothing.
//
//   - None of the objects exists (real 404s from a real API server): an error wrapping
//     provisioner.ErrResourceNotFound. Any other failure (unreachable server, 403, ...) is a plain
//     error: the runtime may well exist.
//   - The Deployment is missing but other objects are not (a kubectl delete of the Deployment, say):
//     drift, so Terraform plans an update that re-creates the Deployment under the same name, next to
//     the volume that still holds the runtime's data. Reporting it as gone instead would plan a new
//     runtime under a new ID and leave the old volume, Service and Ingresses behind.
//   - State slots and hibernated are observed (the slots annotation, or the objects' sizes when it is
//     missing or was edited by hand; spec.replicas == 0); version is the args' version unless the
//     image runs another tag than Provision would apply, in which case it is that tag (so it differs
//     from the args and Terraform plans an update).
//   - State drift lists every other difference from what Provision would apply now (see StateDrift);
//     warnings are as Provision reports them (see StateWarnings).
//   - Config storage_bytes is the volume's live requested size.
//
// The objects are read from a snapshot shared by the calls of a refresh (see snapshotReader).
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
	cluster, err := p.checkCluster(ctx, c, r.ID, st)
	if err != nil {
		return nil, err
	}
	ns := st.Namespace
	live, err := p.readLive(ctx, c, ns, names, p.reads.get)
	if err != nil {
		return nil, err
	}
	if len(live) == 0 {
		if verr := serverVersion(ctx, c); verr != nil {
			return nil, fmt.Errorf("reading deployment %s/%s: the server answered 404 but does not look like a Kubernetes API server (GET /version: %v); not treating the runtime as gone", ns, names.Deployment, verr)
		}
		return nil, fmt.Errorf("%w: none of the objects of runtime %s exists in namespace %s (deployment %s)", provisioner.ErrResourceNotFound, pid, ns, names.Deployment)
	}

	var dep *appsv1.Deployment
	if u := live["deployment"]; u != nil {
		dep = &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
			return nil, fmt.Errorf("reading deployment %s/%s: %w", ns, names.Deployment, err)
		}
	}

	want := desiredArgs(opts, st)
	if _, err := provisioner.NewRuntimeArgs(opts.Args); err != nil && st.ImageTag == "" && dep != nil {
		// Imported: neither args nor a state say which version is wanted, so the tag that runs is
		// (reported as the version, not as drift), unless it is the default an unset version gets.
		// Rill's admin service records no version annotation: then the image's tag says.
		tag := dep.Annotations[AnnotationVersion]
		if tag == "" {
			tag = liveImageTag(dep, p.spec.Image)
		}
		if tag != "" && tag != provisioner.ResolveVersion("", opts.RillVersion) {
			want.Version = tag
		}
	}
	obs := *want
	if dep != nil {
		obs.Hibernated = dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0
		if n, err := strconv.Atoi(dep.Annotations[AnnotationSlots]); err == nil && n >= 1 && !annotationEditedByHand(dep.ManagedFields, AnnotationSlots) {
			obs.Slots = n
		} else {
			// No slots annotation (a runtime of Rill's admin service), or one edited by hand, which
			// says nothing of what was applied (annotationsDrift reports it): the objects' sizes say.
			if n := p.slotsFromObjects(dep, live["pvc"], p.runtimeData(pid, ns, &obs, opts)); n > 0 {
				obs.Slots = n
			}
		}
	}

	data := p.runtimeData(pid, ns, &obs, opts)
	objs, renderWarnings, renderErr := p.templates.render(data)
	var drift []string
	if renderErr != nil {
		// The templates fail with this runtime's data (a guard the platform tightened): there is
		// nothing to compare the objects with, but the runtime is there. Reported as drift, the plan
		// is an update, which the plan's own check refuses with the template's message (or which
		// repairs a hand edit), and a destroy, whose refresh this is, still deletes it; a failed read
		// failed plan, apply and destroy alike.
		drift = append(drift, fmt.Sprintf("templates: they do not render with this runtime's data (%v); an apply fails until they do", renderErr))
	}
	warnings := renderWarnings
	var liveChecksum, liveTag string
	var liveInputs string // AnnotationTemplateInputs of the objects
	if dep != nil {
		liveInputs = dep.Annotations[AnnotationTemplateInputs]
		liveChecksum = dep.Annotations[AnnotationTemplatesChecksum]
		liveTag = dep.Annotations[AnnotationVersion]
		switch {
		case adoptedFromRill(live):
			drift = append(drift, fmt.Sprintf("adopting runtime %s from Rill's admin service (objects labelled %s=%s): apply takes them over", pid, LabelManagedBy, RillManagedByValue))
		case liveChecksum != p.templates.checksum:
			drift = append(drift, "templates: the manifest templates differ from those the runtime was applied with")
		}
	} else {
		// Until the Deployment is back, the state carries what the remaining objects were applied
		// with; the drift below plans the update either way.
		for _, ro := range objs {
			if u := live[ro.slot.field]; u != nil {
				liveChecksum = u.GetAnnotations()[AnnotationTemplatesChecksum]
				liveTag = u.GetAnnotations()[AnnotationVersion]
				liveInputs = u.GetAnnotations()[AnnotationTemplateInputs]
				break
			}
		}
	}
	drift = append(drift, inputsDrift(liveInputs, templateInputs(data))...)
	rerendered := len(drift) > 0 // the templates, their inputs or the field manager changed
	// The provisioner's record as the apply writes it (the args'), and as it says what is there: the
	// slots and hibernated observed, the tag the image runs.
	wantRecord := provisionerAnnotations(p.runtimeData(pid, ns, want, opts), p.templates.checksum)
	observed := *data
	if dep != nil {
		if tag := liveImageTag(dep, p.spec.Image); tag != "" {
			observed.ImageTag = tag
		}
	}
	observedRecord := provisionerAnnotations(&observed, p.templates.checksum)

	var storageBytes int64
	for _, ro := range objs {
		u := live[ro.slot.field]
		switch {
		case ro.slot.field == "deployment" && dep == nil:
			msg := fmt.Sprintf("Deployment %s/%s is missing: apply re-creates it under the same name", ns, names.Deployment)
			if pvc := live["pvc"]; pvc != nil && pvc.GetDeletionTimestamp() == nil {
				msg += fmt.Sprintf(", on the existing volume %s/%s", ns, names.PVC)
			}
			drift = append(drift, msg)
		case ro.slot.field == "deployment":
			d, tag := deploymentDrift(dep, ro.obj, p.spec.Image)
			drift = append(drift, d...)
			if tag != "" {
				liveTag = tag
			}
		case u == nil:
			drift = append(drift, fmt.Sprintf("%s %s/%s is missing", ro.obj.GetKind(), ns, ro.obj.GetName()))
		case ro.slot.field == "pvc" && u.GetDeletionTimestamp() != nil:
			// What a destroy that a finalizer held up leaves, or a kubectl delete of the claim: the
			// apply stops the runtime's pods when only they hold it, and refuses it otherwise
			// (freeVolume), so the plan says which rather than promising what it cannot do.
			h, err := readVolumeHold(ctx, c, u, live["deployment"])
			if err != nil {
				// Who mounts it is detail: the refresh (and a destroy's plan) does not fail for it.
				p.logger.Warn("could not read the pods that mount the volume being deleted", zap.String("volume", ns+"/"+u.GetName()), zap.Error(err))
				drift = append(drift, terminatingVolume(u)+": the apply stops this runtime's pods if only they hold it, else fails until it is gone")
				break
			}
			drift = append(drift, h.drift())
		case ro.obj.GetKind() == "Ingress":
			// The host is a template input, not a template: a spec whose host changed renders other
			// Ingress hosts under the same checksum, and the runtime's host attribute follows the spec.
			if have, want := ingressHosts(u), ingressHosts(ro.obj); !slices.Equal(have, want) {
				drift = append(drift, fmt.Sprintf("Ingress %s/%s serves host(s) %s, want %s", ns, u.GetName(), hostList(have), hostList(want)))
			}
		case ro.slot.field == "pvc":
			pvc := &corev1.PersistentVolumeClaim{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pvc); err != nil {
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
		}
		if u != nil && !rerendered {
			// A list edited by hand (a container's port, env or mounts, a volume, a Service's ports,
			// an Ingress's paths): the apply replaces it (ownedList). Templates or inputs that changed
			// render other lists anyway, and their drift above already plans the update.
			drift = append(drift, listsDrift(u, ro.obj)...)
			drift = append(drift, labelsDrift(u, ro.obj)...)
			drift = append(drift, annotationsDrift(u, ro.obj.GetKind(), wantRecord, observedRecord)...)
		}
	}

	drift = append(drift, claimDrift(live, st.Claim)...)

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
		ClusterID:         cluster,
		Cluster:           c.config.Host,
		Adopting:          adoptedFromRill(live),
	}
	for _, u := range live { // every object carries them
		a := u.GetAnnotations()
		out.Owner, out.Name, out.Environment = a[AnnotationProvisioner], a[AnnotationName], a[AnnotationEnvironment]
		out.Annotations = recordedProjectAnnotations(a)
		// The claim this instance made, not the objects': a later create of the name that took the
		// runtime over must not make this (older) instance's destroy delete it. An import manages
		// the runtime as it is.
		out.Claim = st.Claim
		if len(r.State) == 0 {
			out.Claim = a[AnnotationClaim]
		}
		break
	}
	return &provisioner.Resource{
		ID:     canonicalResourceID(r.ID, pid),
		Type:   r.Type,
		State:  out.asMap(),
		Config: p.runtimeConfig(pid, obs.Slots, storageBytes),
	}, nil
}

// objectReader reads one object; a missing one is an error for which apierrors.IsNotFound holds.
type objectReader func(ctx context.Context, c *clients, key batchKey, name string) (*unstructured.Unstructured, error)

// getObject reads one object with a GET: the reads of writes (Provision's), which must not answer
// from a snapshot.
func getObject(ctx context.Context, c *clients, key batchKey, name string) (*unstructured.Unstructured, error) {
	return c.dynamic.Resource(key.gvr).Namespace(key.namespace).Get(ctx, name, metav1.GetOptions{})
}

// readLive reads every object of a runtime at once with read, keyed by template slot (its
// template_paths key); a missing object has no entry.
func (p *Provisioner) readLive(ctx context.Context, c *clients, ns string, names Names, read objectReader) (map[string]*unstructured.Unstructured, error) {
	type result struct {
		field string
		obj   *unstructured.Unstructured
		err   error
	}
	gvrs := make([]schema.GroupVersionResource, len(p.templates.templates))
	for i, mt := range p.templates.templates {
		gvr, err := c.resourceFor(ctx, mt.gvk)
		if err != nil {
			return nil, err
		}
		gvrs[i] = gvr
	}
	results := make([]result, len(p.templates.templates))
	var wg sync.WaitGroup
	for i, mt := range p.templates.templates {
		name := mt.slot.name(names)
		results[i].field = mt.slot.field
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := read(ctx, c, batchKey{namespace: ns, gvr: gvrs[i]}, name)
			if err != nil && !apierrors.IsNotFound(err) {
				err = fmt.Errorf("reading %s %s/%s: %w%s", mt.gvk.Kind, ns, name, err, rbacHint(err))
			}
			results[i].obj, results[i].err = obj, err
		}()
	}
	wg.Wait()
	live := map[string]*unstructured.Unstructured{}
	for _, res := range results {
		switch {
		case res.err == nil:
			live[res.field] = res.obj
		case !apierrors.IsNotFound(res.err):
			return nil, res.err
		}
	}
	return live, nil
}

// inputsDrift compares the template inputs recorded on the objects (AnnotationTemplateInputs, "" when
// absent) with those the spec gives now, one entry per field that changed, sorted by field. Objects
// without the record (applied by an earlier version of this provider, or by Rill's admin service), a
// record that does not parse, and fields the record lacks are no drift: nothing says what they were
// rendered with, and the plan after upgrading the provider must stay empty.
func inputsDrift(recorded string, want map[string]string) []string {
	if recorded == "" {
		return nil
	}
	var have map[string]string
	if json.Unmarshal([]byte(recorded), &have) != nil {
		return nil
	}
	var out []string
	for _, field := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[field]; ok && v != want[field] {
			out = append(out, fmt.Sprintf("spec.%s: the runtime was applied with %s, the spec now says %s", field, v, want[field]))
		}
	}
	return out
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
		if lc.Image != wc.Image && !setByAdmission(live, wc.Name, "f:image") {
			drift = append(drift, fmt.Sprintf("deployment %s: container %s runs image %s, want %s", name, wc.Name, lc.Image, wc.Image))
		}
		for _, r := range []struct {
			kind       string
			have, want corev1.ResourceList
		}{{"requests", lc.Resources.Requests, wc.Resources.Requests}, {"limits", lc.Resources.Limits, wc.Resources.Limits}} {
			admitted := func(res corev1.ResourceName) bool {
				return setByAdmission(live, wc.Name, "f:resources", "f:"+r.kind, "f:"+string(res))
			}
			drift = append(drift, resourceDrift(name, wc.Name, r.kind, r.have, r.want, admitted)...)
		}
	}
	return drift, liveTag
}

// setByAdmission says whether a field of a container (its image, a resource request or limit) whose
// live value is not the rendered one is what the cluster's admission made of the rendered value
// during this provisioner's own apply: the field is owned by no field manager but ours. Admission's
// changes belong to the manager of the request, so a change made on our apply is ours, while one by
// kubectl set image, set resources or edit, say, belongs to that manager. Policy engines and
// platforms rewrite these on every apply: Kyverno's verifyImages pins images to their digest by
// default ("rilldata/rill:v1@sha256:..."; so do k8s-digester and Kubewarden), mutation rules send
// them to a registry mirror, GKE Autopilot rounds resource requests up to what it sells. Calling that
// drift would plan an update after every apply, which admission would rewrite again. A template,
// spec, version or slot count that renders another value is drift anyway: the checksum, inputs,
// version and slots annotations differ. A field that is gone is always drift: ownership cannot tell
// admission's removal from a hand edit's.
func setByAdmission(live *appsv1.Deployment, container string, field ...string) bool {
	key, _ := json.Marshal(map[string]string{"name": container})
	keys := append([]string{"f:spec", "f:template", "f:spec", "f:containers", "k:" + string(key)}, field...)
	return !ownedByAnother(live.ManagedFields, keys...)
}

// resourceDrift compares a container's live resource requests or limits (kind) with the rendered
// ones: one missing, or of another value that admitted (when not nil) does not say the cluster's
// admission set.
func resourceDrift(dep, container, kind string, live, want corev1.ResourceList, admitted func(corev1.ResourceName) bool) []string {
	var out []string
	for _, res := range sortedResourceNames(want) {
		w := want[res]
		l, ok := live[res]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("deployment %s: container %s %s %s nothing, want %s", dep, container, kind, res, w.String()))
		case l.Cmp(w) != 0 && (admitted == nil || !admitted(res)):
			out = append(out, fmt.Sprintf("deployment %s: container %s %s %s %s, want %s", dep, container, kind, res, l.String(), w.String()))
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

// ingressHosts are the host names an Ingress routes and has certificates for (spec.rules[].host,
// spec.tls[].hosts[]), sorted, without repeats.
func ingressHosts(u *unstructured.Unstructured) []string {
	var hosts []string
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok {
			if h, ok := m["host"].(string); ok && h != "" {
				hosts = append(hosts, h)
			}
		}
	}
	tls, _, _ := unstructured.NestedSlice(u.Object, "spec", "tls")
	for _, t := range tls {
		if m, ok := t.(map[string]any); ok {
			hs, _, _ := unstructured.NestedStringSlice(m, "hosts")
			hosts = append(hosts, hs...)
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

func hostList(hosts []string) string {
	if len(hosts) == 0 {
		return "none"
	}
	return strings.Join(hosts, ", ")
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

// labelsDrift says which labels the templates render that the live object lacks or holds with
// another value: a label removed by hand (kubectl label ... app.kubernetes.io/managed-by-) took the
// runtime out of what lists a cluster's runtimes (rill_allocations, the recovery guide's kubectl
// query) while its plan stayed empty (found by a walkthrough). Labels others add are not drift.
func labelsDrift(live, rendered *unstructured.Unstructured) []string {
	have, want := live.GetLabels(), rendered.GetLabels()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := have[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s/%s: label %s is missing, want %q", rendered.GetKind(), live.GetNamespace(), live.GetName(), k, want[k]))
		case v != want[k]:
			out = append(out, fmt.Sprintf("%s %s/%s: label %s is %q, want %q", rendered.GetKind(), live.GetNamespace(), live.GetName(), k, v, want[k]))
		}
	}
	return out
}

// annotationsDrift says which of the provisioner's annotations (provisionerAnnotations) the live
// object, of kind, lacks or holds with a value that is neither want, what the apply writes (the
// args'), nor observed, what the record says of what is there (the slots and hibernated
// CheckResource observed, the tag the image runs). They are the provisioner's record of what it
// applied, which an import, rill_allocations and the recovery guide read back: one edited or removed
// by hand (kubectl annotate, edit) left the plan empty while the objects no longer said what was
// applied. A record that says what is there is no drift: a runtime resized, hibernated or moved to
// another tag outside this configuration plans its update through the state's slots, hibernated or
// version, and the drift would blame the record. The template inputs are inputsDrift's (their
// absence is no drift there). Annotations others add (kubectl's, a controller's) are not drift.
func annotationsDrift(live *unstructured.Unstructured, kind string, want, observed map[string]string) []string {
	have := live.GetAnnotations()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := have[k]
		switch {
		case k == AnnotationTemplateInputs:
		case !ok:
			out = append(out, fmt.Sprintf("%s %s/%s: annotation %s is missing, want %q", kind, live.GetNamespace(), live.GetName(), k, want[k]))
		case v != want[k] && v != observed[k]:
			out = append(out, fmt.Sprintf("%s %s/%s: annotation %s is %q, want %q", kind, live.GetNamespace(), live.GetName(), k, v, want[k]))
		}
	}
	return out
}

// claimDrift reports, for a named runtime whose state recorded claim, the objects that carry another
// claim (AnnotationClaim) while one carries claim: what a create of its name that failed part-way
// leaves (it wrote its claim on the objects it applied, and its error kept no state: this state
// still holds the runtime), or an edit by hand. The apply writes claim on every object again; until
// then this state's destroy would take the runtime for one a later create took over, and leave it
// to no state. Objects that all carry another claim are no drift: a later create took the runtime
// over, and it is that create's (nor are objects without one: runtimes from before the claim).
func claimDrift(live map[string]*unstructured.Unstructured, claim string) []string {
	if claim == "" || !slices.ContainsFunc(slices.Collect(maps.Values(live)), func(u *unstructured.Unstructured) bool {
		return u.GetAnnotations()[AnnotationClaim] == claim
	}) {
		return nil
	}
	var out []string
	for _, field := range slices.Sorted(maps.Keys(live)) {
		u := live[field]
		if c := u.GetAnnotations()[AnnotationClaim]; c != "" && c != claim {
			out = append(out, fmt.Sprintf("%s %s/%s: annotation %s is %q, not this runtime's %q (which its other objects carry: "+
				"a create of its name that failed part-way, or an edit by hand); apply writes this runtime's",
				u.GetKind(), u.GetNamespace(), u.GetName(), AnnotationClaim, c, claim))
		}
	}
	return out
}

// annotationEditedByHand says whether an object's annotation key holds a value that someone other
// than this provisioner wrote: another field manager owns it (an update, kubectl annotate, edit or
// patch, takes over the fields whose values it changes) and this provisioner's Apply entry does not.
// An update that writes the value the apply wrote (kubectl annotate --overwrite with the right
// value, a restore of the object) shares the field with the Apply entry instead, and so does every
// apply after it: that value is the apply's, and taking it for a hand edit forever would let the
// objects' sizes, not the record, say the slots (wrong for templates that do not size by slots).
// This provisioner's own updates (a create's before the claim folds it into the apply's entry, a
// lists repair's) are not hand edits: they wrote what the apply writes.
func annotationEditedByHand(managed []metav1.ManagedFieldsEntry, key string) bool {
	keys := []string{"f:metadata", "f:annotations", "f:" + key}
	var others []metav1.ManagedFieldsEntry
	for _, mf := range managed {
		if mf.Manager != FieldManager {
			others = append(others, mf)
		}
	}
	if !ownedByAnother(others, keys...) {
		return false // the usual case: our Apply entry, the largest, is not parsed
	}
	for _, mf := range managed {
		if mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && fieldsAt(mf, keys...) != nil {
			return false
		}
	}
	return true
}
