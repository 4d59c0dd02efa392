// Package kubernetes is the "kubernetes" provisioner: each runtime is a Deployment, a Service, a
// PersistentVolumeClaim and two Ingresses rendered from manifest templates and applied with
// server-side apply. See spec.go for the spec, state.go for what Resource.State holds, and the
// top-level templates/ folder for the default manifests.
package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Type is the provisioner type name in a provisioner set.
const Type = "kubernetes"

func init() {
	provisioner.Register(Type, New)
	// Every state a Provision or CheckResource returns, and what a failed Provision returns (placed),
	// records where the runtime is: another type's provisioner refuses a state that holds one of these
	// (provisioner.CheckStateOwner). StateCluster, always written beside StateClusterID, is left out:
	// clickhouse-static's states have a "cluster" of their own.
	provisioner.RegisterStateKeys(Type, StateNamespace, StateProvisionID, StateClusterID)
}

// Provisioner provisions Rill runtimes in a Kubernetes cluster.
type Provisioner struct {
	spec      *Spec
	templates *templateSet
	clients   *lazyClients
	logger    *zap.Logger
	// httpClient probes runtimes in AwaitReady; replaceable in tests.
	httpClient *http.Client
	// podWatchDelay is how long a rollout may take before AwaitReady watches its pods (the
	// constant of that name; replaceable in tests).
	podWatchDelay time.Duration
	// reads serves CheckResource's object reads from snapshots shared by the calls of a refresh.
	reads *snapshotReader
	// applied hands the Deployments Provision applied to the AwaitReady after it.
	applied *appliedDeployments

	// clusterLock is held while the cluster's identity is read; a channel, so that a waiting caller
	// honours its own ctx instead of waiting out the first caller's GET (as resourceMapper.lock).
	clusterLock chan struct{}
	clusterUID  *string // the cluster's identity once read (see clusterID)

	// SetMember holds the name in the set (provisioner.Named), stamped on every object as its owner, so
	// that an import through another provisioner of the set is refused.
	provisioner.SetMember
}

var (
	_ provisioner.Provisioner      = (*Provisioner)(nil)
	_ provisioner.ProvisionChecker = (*Provisioner)(nil)
	_ provisioner.ConfigPlanner    = (*Provisioner)(nil)
	_ provisioner.Named            = (*Provisioner)(nil)
	_ provisioner.SpecWarner       = (*Provisioner)(nil)
	_ provisioner.CreationReporter = (*Provisioner)(nil)
)

// SpecWarnings implements provisioner.SpecWarner.
func (p *Provisioner) SpecWarnings() []provisioner.FieldWarning { return p.spec.warnings }

// New is the initializer: it decodes and validates the spec, and reads, parses and test-renders the
// templates, so that every mistake in them surfaces during `terraform plan`. It does not contact the
// cluster: clients are built on first use.
func New(specJSON []byte, _ database.DB, logger *zap.Logger) (provisioner.Provisioner, error) {
	return newProvisioner(specJSON, logger)
}

func newProvisioner(specJSON []byte, logger *zap.Logger) (*Provisioner, error) {
	spec, err := ParseSpec(specJSON)
	if err != nil {
		return nil, err
	}
	ts, err := loadTemplates(spec.TemplatePaths, spec)
	if err != nil {
		return nil, provisioner.WithWarnings(err, spec.warnings)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Provisioner{
		spec:          spec,
		templates:     ts,
		clients:       &lazyClients{spec: spec, build: buildClients},
		clusterLock:   make(chan struct{}, 1),
		logger:        logger,
		httpClient:    &http.Client{Timeout: 10 * time.Second},
		podWatchDelay: podWatchDelay,
		reads:         newSnapshotReader(logger),
		applied:       &appliedDeployments{},
	}, nil
}

// Type implements provisioner.Provisioner.
func (p *Provisioner) Type() string { return Type }

// Close implements provisioner.Provisioner.
func (p *Provisioner) Close() error {
	p.httpClient.CloseIdleConnections()
	p.clients.close()
	return nil
}

// ForgetReads implements provisioner.ReadCacher: CheckResource calls after it list the cluster anew
// (see snapshotReader).
func (p *Provisioner) ForgetReads() { p.reads.forget() }

// Supports implements provisioner.Provisioner: runtimes only.
func (p *Provisioner) Supports(rt provisioner.ResourceType) bool {
	return rt == provisioner.ResourceTypeRuntime
}

// errRuntimesOnly refuses a resource that is not a runtime, in every method given one (CheckCreate
// adds the type it was asked for).
var errRuntimesOnly = errors.New("the kubernetes provisioner only provisions runtimes")

// Provision renders the templates for the runtime and applies them (server-side apply, forced, field
// manager "terraform-provider-rill"). It is idempotent and is also the update path: new slots resize
// the Deployment and grow the volume (never shrink it), a new version changes the image, hibernated
// scales to zero and back.
func (p *Provisioner) Provision(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	res, _, err := p.ProvisionReportingCreation(ctx, r, opts)
	return res, err
}

// ProvisionReportingCreation implements provisioner.CreationReporter: it is Provision, and reports
// whether the call created the runtime. A named runtime's ID is shared by everyone who creates the
// name; the create of one whose objects do not exist yet claims it atomically by creating its first
// object with a plain create (claim.go), which the API server grants to one caller only. A runtime
// without a name has a random ID that nobody else creates: a call without a recorded state (a
// create) created it.
func (p *Provisioner) ProvisionReportingCreation(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, bool, error) {
	if r == nil || r.Type != provisioner.ResourceTypeRuntime {
		return nil, false, errRuntimesOnly
	}
	if opts == nil {
		opts = &provisioner.ResourceOptions{}
	}
	args, err := provisioner.NewRuntimeArgs(opts.Args)
	if err != nil {
		return nil, false, err
	}
	pid, err := provisionIDFor(r.ID)
	if err != nil {
		return nil, false, err
	}
	// An update hands over the state it keeps, which must be one a kubernetes provisioner wrote.
	if err := provisioner.CheckStateOwner(Type, r); err != nil {
		return nil, false, err
	}
	prev := parseState(r.State)
	ns := p.namespaceOf(prev)
	log := p.logger.With(zap.String("resource_id", r.ID), zap.String("namespace", ns), zap.String("provision_id", pid))
	creating := len(r.State) == 0
	// Rendered (and checked as CheckProvision checks it) before the cluster is contacted: what the
	// templates refuse with this runtime's data, or render wrong for it, fails before any read or write.
	data := p.runtimeData(pid, ns, args, opts)
	// A create of a named runtime claims it anew, whether it makes it or adopts what is there (what
	// an interrupted apply left, the runtime a create_before_destroy replacement takes over); an
	// update keeps its instance's claim.
	data.claim = prev.Claim
	if creating && opts.Name != "" {
		if data.claim, err = newClaim(); err != nil {
			return nil, false, err
		}
	}
	objs, renderWarnings, err := p.renderRuntime(data)
	if err != nil {
		return nil, false, err
	}
	for _, w := range renderWarnings {
		log.Warn("this runtime's data rendered a template with a warning: " + w)
	}

	c, err := p.clients.get(ctx)
	if err != nil {
		return nil, false, err
	}
	// No CheckResource after this one may answer from a snapshot taken before its writes.
	defer wrote(c, ns)
	// An update must reach the cluster the runtime was provisioned in, or it would apply a new
	// runtime in another one.
	cluster, err := p.checkCluster(ctx, c, r.ID, prev)
	if err != nil {
		return nil, false, err
	}
	var live map[string]*unstructured.Unstructured
	if opts.Name != "" {
		// A named runtime's ID follows from its name: objects at it may be what an interrupted
		// earlier Provision left (adopted: applied over), or another runtime's (a conflict).
		if live, err = p.checkAdoptable(ctx, c, ns, r.ID, pid, opts.Name); err != nil {
			return nil, false, err
		}
		if !creating {
			onObjects := data.claim
			later := ""
			if u := takenOverBy(live, data.claim); u != nil {
				later = u.GetAnnotations()[AnnotationClaim]
			}
			switch {
			case later != "" && data.claim != "":
				// An update of a state whose runtime a later create of its name took over (another
				// workspace's): it applies its arguments but leaves the claim to that create, so that
				// the destroy of the state that adopted the runtime last frees it and this one's leaves
				// it, as a static pool's update keeps the ledger's created_at. Its state keeps its own.
				log.Info("runtime was taken over by a later create of its name: the update keeps that create's claim")
				onObjects = later
			case later != "":
				// A state from before the claim manages the runtime as its objects carry it, as a
				// static pool's update records the ledger's created_at.
				data.claim, onObjects = later, later
			case data.claim == "":
				// A state from before the claim, of objects that carry none: the update claims the
				// runtime, so that the destroy of an earlier instance (the deposed half of a
				// create_before_destroy replacement interrupted later) leaves it.
				if data.claim, err = newClaim(); err != nil {
					return nil, false, err
				}
				onObjects = data.claim
			}
			if onObjects != prev.Claim {
				for _, o := range objs {
					o.obj.SetAnnotations(merge(o.obj.GetAnnotations(), map[string]string{AnnotationClaim: onObjects}))
				}
			}
		}
	}
	created := creating && opts.Name == ""
	claimed := false // the claim below created the first object
	if creating && opts.Name != "" && len(live) == 0 {
		if created, err = claim(ctx, c, objs[0], log); err != nil {
			return placed(r, ns, pid, cluster, c.config.Host), created, err
		}
		claimed = created
		if !created {
			// Another call claimed the ID since the read above: what it made is adopted as any
			// other object at the ID is, or is another's (a conflict).
			if _, err := p.checkAdoptable(ctx, c, ns, r.ID, pid, opts.Name); err != nil {
				return nil, false, err
			}
		}
	}
	if prev.Adopting {
		if err := takeOverFromRill(ctx, c, objs, log); err != nil {
			return placed(r, ns, pid, cluster, c.config.Host), created, err
		}
	}
	log.Info("applying runtime", zap.Int("slots", args.Slots), zap.String("image", data.Image+":"+data.ImageTag), zap.Bool("hibernated", args.Hibernated), zap.Bool("created", created))
	// A runtime whose objects may exist has its Service's ports compared before the apply: from
	// the objects read above (a named runtime), else with one GET of the Service (an update). The
	// create of an unnamed runtime is at a random ID nobody else uses (the Terraform layer makes a
	// new UUID for each create, and a failed create that kept anything passes its State on), so
	// nothing can be there: its Deployment and claim are not read either.
	at := objectsMayExist
	switch {
	case creating && opts.Name == "":
		at = freshID
	case creating && len(live) == 0:
		at = nothingFound
	}
	res, err := p.applyAll(ctx, c, objs, live, at, creating, log)
	if err != nil {
		if res.applied == 0 && !claimed && !prev.Adopting {
			// Refused before its first write (credentials that may not write in the namespace, a
			// volume being deleted): nothing was made or changed, so nothing is to be recorded or
			// undone (see provisioner.Provisioner.Provision), and a create created nothing.
			return nil, false, err
		}
		return placed(r, ns, pid, cluster, c.config.Host), created, err
	}
	foldLeftClaims(ctx, c, objs, live, log)

	st := runtimeState{
		Namespace:         ns,
		ProvisionID:       pid,
		Slots:             args.Slots,
		Version:           args.Version,
		ImageTag:          data.ImageTag,
		Hibernated:        args.Hibernated,
		TemplatesChecksum: p.templates.checksum,
		Warnings:          append(renderWarnings, res.warnings...),
		ClusterID:         cluster,
		Cluster:           c.config.Host,
		Owner:             data.Provisioner,
		Name:              opts.Name,
		Environment:       data.environment,
		Annotations:       nilWhenEmpty(data.Annotations),
		Claim:             data.claim,
	}
	return &provisioner.Resource{
		ID:     r.ID,
		Type:   r.Type,
		State:  st.asMap(),
		Config: p.runtimeConfig(pid, args.Slots, res.storageBytes),
	}, created, nil
}

// CheckProvision implements provisioner.ProvisionChecker: it renders the templates with the runtime's
// own data (its name, annotations, slots, environment, version), as Provision does before its first
// write, and applies nothing. So a template that fails only on some runtime's data (a guard on an
// annotation's value, a limit on the slots) fails that runtime's plan, not its apply. A runtime whose
// ID the create makes (no name) is rendered with the sample's provision ID.
func (p *Provisioner) CheckProvision(r *provisioner.Resource, opts *provisioner.ResourceOptions) ([]string, error) {
	if r == nil || r.Type != provisioner.ResourceTypeRuntime {
		return nil, errRuntimesOnly
	}
	if opts == nil {
		opts = &provisioner.ResourceOptions{}
	}
	args, err := provisioner.NewRuntimeArgs(opts.Args)
	if err != nil {
		return nil, err
	}
	pid := sampleProvisionID
	if r.ID != "" {
		if pid, err = provisionIDFor(r.ID); err != nil {
			return nil, err
		}
	}
	// The plan of an update (-refresh=false has had no refresh to refuse another type's state) fails
	// as its apply's Provision would.
	if err := provisioner.CheckStateOwner(Type, r); err != nil {
		return nil, err
	}
	_, warnings, err := p.renderRuntime(p.runtimeData(pid, p.namespaceOf(parseState(r.State)), args, opts))
	return warnings, err
}

// PlannedConfig implements provisioner.ConfigPlanner: a runtime's host and audience are its URL under
// the spec's host pattern (RuntimeURL of its provision ID), whatever its state and arguments, as
// Provision and CheckResource report them. The pattern may have changed since the state was
// refreshed (a plan with -refresh=false): the plan then shows the new URL, which the update's
// Provision renders the Ingresses for. The sizes are left out: a volume larger than the slots ask for
// is kept (keepLargerVolume), which only the cluster can tell.
func (p *Provisioner) PlannedConfig(r *provisioner.Resource) (map[string]any, error) {
	if r == nil || r.Type != provisioner.ResourceTypeRuntime {
		return nil, errRuntimesOnly
	}
	pid, err := provisionIDFor(r.ID)
	if err != nil {
		return nil, err
	}
	// Another type's state is no runtime of this provisioner, whose URL it cannot promise (its
	// Provision and CheckProvision refuse it).
	if err := provisioner.CheckStateOwner(Type, r); err != nil {
		return nil, err
	}
	u := p.spec.RuntimeURL(pid)
	return map[string]any{"host": u, "audience": u}, nil
}

// renderRuntime renders the templates with a runtime's own data and checks what only that data can
// tell: Provision applies what it returns, and CheckProvision (the plan's check) calls it too, so
// whatever it refuses fails the plan as it would fail the apply before its first write. The sample
// render (loadTemplates) does not make these checks: its data is no runtime's.
//
// The claim must request exactly the runtime's storage (data.StorageBytes: 40 GiB per slot, or
// override_disk_gb), since the runtime's storage_bytes is the size of the claim applied, which
// rill_runtime's plan computes the same way; a claim of another size (a fixed "100Gi",
// {{ mul .StorageBytes 2 }}) makes every create, and every update that changes the size, fail in
// Terraform with an inconsistent result. A live claim larger than the rendered one is kept at
// apply (keepLargerVolume): that is the live size, not the rendered one, and the plan allows for it.
func (p *Provisioner) renderRuntime(data *TemplateData) ([]*renderedObject, []string, error) {
	objs, warnings, err := p.templates.render(data)
	if err != nil {
		return nil, nil, err
	}
	for _, ro := range objs {
		if ro.slot.field != "pvc" {
			continue
		}
		q, err := renderedStorage(ro.obj)
		if err != nil { // checkRendered refused this already
			return nil, nil, fmt.Errorf("%s: %w", ro.source, err)
		}
		if q.CmpInt64(data.StorageBytes) != 0 {
			return nil, nil, fmt.Errorf("%s: the PersistentVolumeClaim requests %s of storage (spec.resources.requests.storage), "+
				"but this runtime's size is %s (40Gi per slot, or override_disk_gb): the runtime's storage_bytes is its claim's size, "+
				"so Terraform would refuse the apply's result; size the claim with \"{{ .StorageBytes }}\" (override_disk_gb sets the size)",
				ro.source, quantityText(q), sizeText(data.StorageBytes))
		}
	}
	return objs, warnings, nil
}

// runtimeData is the template data of the runtime pid in namespace ns: what Provision renders, and
// what CheckResource and CheckProvision render to compare with it or check it.
func (p *Provisioner) runtimeData(pid, ns string, args *provisioner.RuntimeArgs, opts *provisioner.ResourceOptions) *TemplateData {
	data := newTemplateData(p.spec, pid, args, opts)
	data.Namespace = ns
	data.Provisioner = p.NameInSet()
	return data
}

// newClaim returns a random claim token (AnnotationClaim).
func newClaim() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the runtime's claim token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// placed is what a Provision that failed part-way returns with its error (see
// provisioner.Provisioner.Provision): where its objects may be, the namespace and the cluster, so that
// a caller that keeps the failed runtime refreshes and deletes it there, and not in the namespace or
// cluster the spec or kubeconfig name by then.
func placed(r *provisioner.Resource, ns, pid, clusterID, clusterURL string) *provisioner.Resource {
	return &provisioner.Resource{ID: r.ID, Type: r.Type, State: map[string]any{
		StateNamespace: ns, StateProvisionID: pid, StateClusterID: clusterID, StateCluster: clusterURL,
	}}
}

// runtimeConfig is the config clients get: host and audience (the runtime URL) and the sizes.
func (p *Provisioner) runtimeConfig(pid string, slots int, storageBytes int64) map[string]any {
	cpu, mem, storage := provisioner.NewRuntimeSizes(slots)
	if storageBytes > 0 {
		storage = storageBytes
	}
	u := p.spec.RuntimeURL(pid)
	return (&provisioner.RuntimeConfig{Host: u, Audience: u, CPU: cpu, MemoryGB: mem, StorageBytes: storage}).AsMap()
}

func (p *Provisioner) namespaceOf(st runtimeState) string {
	if st.Namespace != "" {
		return st.Namespace
	}
	return p.spec.Namespace
}

// resolve returns the provision ID, namespace and names of an existing resource (for CheckResource,
// Deprovision, AwaitReady and ResourceExists). A state that another type's provisioner wrote is a
// *provisioner.ForeignStateError, before any request: read as a kubernetes state it has no namespace
// and no cluster_id, as a state from before identities, so it was taken to be in the spec's namespace
// of the current cluster, where nothing of the runtime is, and a static runtime was reported gone
// (planned anew, its slots left booked in the ledger) and its destroy deleted nothing and succeeded.
func (p *Provisioner) resolve(r *provisioner.Resource) (runtimeState, string, Names, error) {
	if r == nil {
		return runtimeState{}, "", Names{}, errors.New("no resource given")
	}
	if err := provisioner.CheckStateOwner(Type, r); err != nil {
		return runtimeState{}, "", Names{}, err
	}
	st := parseState(r.State)
	pid, err := provisionIDFor(r.ID)
	if err != nil {
		return st, "", Names{}, err
	}
	st.ProvisionID = pid
	st.Namespace = p.namespaceOf(st)
	return st, pid, NamesFor(pid), nil
}

// checkAdoptable reads the objects at a named runtime's ID and reports, as an
// *provisioner.IDConflictError, any that another provisioner of the set or another name owns. It
// returns the objects it read (by template field), all adoptable.
func (p *Provisioner) checkAdoptable(ctx context.Context, c *clients, ns, id, pid, name string) (map[string]*unstructured.Unstructured, error) {
	live, err := p.readLive(ctx, c, ns, NamesFor(pid), getObject)
	if err != nil {
		return nil, err
	}
	owner := p.NameInSet()
	for _, u := range live {
		a := u.GetAnnotations()
		conflict := &provisioner.IDConflictError{ID: id, Provisioner: a[AnnotationProvisioner], Name: a[AnnotationName]}
		switch {
		case owner != "" && a[AnnotationProvisioner] != "" && a[AnnotationProvisioner] != owner:
			conflict.Reason = fmt.Sprintf("%s %s/%s belongs to provisioner %q, not %q", u.GetKind(), ns, u.GetName(), a[AnnotationProvisioner], owner)
		case a[AnnotationName] != name && u.GetLabels()[LabelNameHash] != NameHash(name):
			// The name-hash label says the object was made for this name when only the annotation
			// was removed or edited by hand: drift, which this apply repairs (it refused, and every
			// plan showed the drift that no apply could repair).
			conflict.Reason = fmt.Sprintf("%s %s/%s carries the name %q, not %q", u.GetKind(), ns, u.GetName(), a[AnnotationName], name)
		default:
			continue
		}
		if conflict.Provisioner == "" {
			conflict.Provisioner = owner
		}
		return nil, conflict
	}
	return live, nil
}

// foldLeftClaims folds the Update entry of this provisioner's field manager that an object read
// before the apply carries into the apply's entry (createdEntryToApply), as the claim does right
// after its create: a claim cut short between the two (a kill -9 of the apply, a lost runner)
// left it, and no apply removes it, so a field that a later template drops would stay on the
// object, owned by that entry. The create that adopts the runtime (a re-apply, from any machine)
// cleans it up. Best effort, as the lists' repair does: the runtime is as rendered either way.
func foldLeftClaims(ctx context.Context, c *clients, objs []*renderedObject, live map[string]*unstructured.Unstructured, log *zap.Logger) {
	for _, ro := range objs {
		u := live[ro.slot.field]
		if u == nil || len(createdEntryToApply(u.GetManagedFields())) == 0 {
			continue
		}
		gvr, err := c.resourceFor(ctx, ro.obj.GroupVersionKind())
		if err == nil {
			log.Info("folding the managed-fields entry that a claim cut short left into the apply's", zap.String("kind", ro.obj.GetKind()), zap.String("name", ro.obj.GetName()))
			err = rewriteManagedFields(ctx, c.dynamic.Resource(gvr).Namespace(ro.obj.GetNamespace()), ro.obj, createdEntryToApply, log)
		}
		if err != nil {
			log.Warn("could not fold the managed-fields entry that a claim cut short left", zap.String("object", ro.obj.GetKind()+" "+ro.obj.GetNamespace()+"/"+ro.obj.GetName()), zap.Error(err))
		}
	}
}
