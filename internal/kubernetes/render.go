package kubernetes

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/templates"
)

// Labels and annotations the provisioner puts on every object it applies.
const (
	FieldManager = "terraform-provider-rill"

	LabelManagedBy   = "app.kubernetes.io/managed-by"
	LabelInstance    = "app.kubernetes.io/instance"
	ManagedByValue   = "terraform-provider-rill"
	AnnotationPrefix = "rill.provisioner/"

	AnnotationTemplatesChecksum = AnnotationPrefix + "templates-checksum"
	// AnnotationTemplateInputs holds the spec-derived data the templates were rendered with (a JSON
	// object keyed by spec field, see templateInputs): the checksum covers the templates' text only.
	AnnotationTemplateInputs = AnnotationPrefix + "template-inputs"
	AnnotationSlots          = AnnotationPrefix + "slots"
	// AnnotationVersion holds the image tag that was applied (args.version, else the Rill version,
	// else "latest").
	AnnotationVersion    = AnnotationPrefix + "version"
	AnnotationHibernated = AnnotationPrefix + "hibernated"
	// AnnotationName holds a named runtime's name (rill_runtime's `name`). A name may be longer than
	// a label value may be (63), so the label LabelNameHash carries a hash of it, for selectors.
	AnnotationName = AnnotationPrefix + "name"
	// AnnotationProvisioner holds the name of the provisioner (in the provider's set) that applied
	// the objects: an import through another provisioner is refused.
	AnnotationProvisioner = AnnotationPrefix + "provisioner"
	LabelNameHash         = AnnotationPrefix + "name-hash"
	// AnnotationClaim holds a random token that a named runtime's create writes when it creates or
	// adopts the runtime, and its updates keep (the state records it): the destroy of an earlier
	// instance (the old half of an interrupted create_before_destroy replacement) finds another
	// token and leaves the runtime (provisioner.ErrTakenOver). CheckResource compares it only when
	// the objects carry this state's token and another one (claimDrift).
	AnnotationClaim = AnnotationPrefix + "claim"
	// AnnotationEnvironment and AnnotationProjectAnnotations (a JSON object, absent when there are
	// none) hold rill_runtime's environment and annotations, so that an import restores them as a
	// static pool's ledger does.
	AnnotationEnvironment        = AnnotationPrefix + "environment"
	AnnotationProjectAnnotations = AnnotationPrefix + "annotations"
)

// nilWhenEmpty is annotations, nil when it has none: what recordedProjectAnnotations reads when the
// objects record none, so that Provision and CheckResource report the same state.
func nilWhenEmpty(annotations map[string]string) map[string]string {
	if len(annotations) == 0 {
		return nil
	}
	return annotations
}

// recordedProjectAnnotations reads AnnotationProjectAnnotations back; nil when absent or not a JSON
// object of strings (objects applied before it existed, or by Rill's admin service).
func recordedProjectAnnotations(objectAnnotations map[string]string) map[string]string {
	raw, ok := objectAnnotations[AnnotationProjectAnnotations]
	if !ok {
		return nil
	}
	var out map[string]string
	if json.Unmarshal([]byte(raw), &out) != nil {
		return nil
	}
	return out
}

// NameHash is the LabelNameHash value of a runtime name: the first 20 hex digits of its SHA-256.
func NameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:10])
}

// What Rill's admin service puts on the objects it applies (same names and instance label as ours),
// so that its runtimes can be imported and adopted (see adopt.go).
const (
	RillFieldManager   = "rill-cloud-admin"
	RillManagedByValue = "rill-cloud-admin"
	// RillAnnotationTemplatesChecksum is Rill's checksum of its templates; it means nothing here.
	RillAnnotationTemplatesChecksum = "checksum/templates"
)

// Names are the object names of one runtime.
type Names struct {
	Deployment  string
	Service     string
	PVC         string
	HTTPIngress string
	GRPCIngress string
}

// NamesFor returns the object names for a provision ID.
func NamesFor(provisionID string) Names {
	return Names{
		Deployment:  "runtime-" + provisionID,
		Service:     "runtime-" + provisionID,
		PVC:         "runtime-" + provisionID,
		HTTPIngress: "http-runtime-" + provisionID,
		GRPCIngress: "grpc-runtime-" + provisionID,
	}
}

// TemplateData is what every manifest template is rendered with. It has every field of Rill's
// admin service's template data, with the same names and meanings (Image, ImageTag, ProvisionID,
// Host, CPU, MemoryGB, StorageBytes, Slots, Names, Annotations, Environment), so that Rill's templates
// render as in Rill (docs/guides/rill-compatibility.md, "Templates", lists what differs); the others
// are additions.
type TemplateData struct {
	Image        string // image repository, from the spec ("rilldata/rill")
	ImageTag     string // args.version; "" and "latest" follow the Rill version when one is set
	ProvisionID  string // the resource ID without dashes
	Host         string // the runtime's host without scheme (host[:port])
	Hostname     string // Host without port, as an Ingress rule wants it
	Namespace    string
	DataDir      string
	CPU          int   // cores: 1 per slot
	MemoryGB     int   // GiB: 4 per slot
	StorageBytes int64 // 40 GiB per slot, or args.override_disk_gb GiB
	Slots        int
	Environment  string // args.environment, default "prod"
	Replicas     int    // 1, or 0 while hibernated
	Hibernated   bool
	Names        Names
	// Annotations are the owning project's annotations, as in Rill: without the environment
	// annotation the Terraform layer adds (.Environment has it). A missing key renders empty.
	Annotations map[string]string
	Name        string // the runtime's name (rill_runtime's `name`), "" when it has none
	Provisioner string // the provisioner's name in the provider's set ("" when unknown)
	// environment is the environment argument as given ("" when unset, unlike .Environment): what the
	// objects record for an import (stampMetadata). Unexported, so templates cannot see it.
	environment string
	// claim is a named runtime's claim token (AnnotationClaim), "" for none. Unexported too.
	claim string
}

// templateSlot describes one of the five templates.
type templateSlot struct {
	field string // key in template_paths
	file  string // default file in the templates/ folder
	// kind, when set, is the only kind the template may render (the provisioner reads these back).
	kind schema.GroupKind
	// rillKind is what Rill's admin service applies the template as; the kind a template whose
	// sample render failed is taken for (see loadTemplates).
	rillKind schema.GroupVersionKind
	path     func(*TemplatePaths) *string
	name     func(Names) string
}

// templateSlots in apply order: the volume before the pods that mount it, the Service before the
// Ingresses that route to it.
var templateSlots = []templateSlot{
	{field: "pvc", file: "pvc.yaml", kind: schema.GroupKind{Kind: "PersistentVolumeClaim"},
		rillKind: schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"},
		path:     func(p *TemplatePaths) *string { return &p.PVC }, name: func(n Names) string { return n.PVC }},
	{field: "deployment", file: "deployment.yaml", kind: schema.GroupKind{Group: "apps", Kind: "Deployment"},
		rillKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		path:     func(p *TemplatePaths) *string { return &p.Deployment }, name: func(n Names) string { return n.Deployment }},
	{field: "service", file: "service.yaml", kind: schema.GroupKind{Kind: "Service"},
		rillKind: schema.GroupVersionKind{Version: "v1", Kind: "Service"},
		path:     func(p *TemplatePaths) *string { return &p.Service }, name: func(n Names) string { return n.Service }},
	{field: "http_ingress", file: "http_ingress.yaml", rillKind: rillIngress,
		path: func(p *TemplatePaths) *string { return &p.HTTPIngress }, name: func(n Names) string { return n.HTTPIngress }},
	{field: "grpc_ingress", file: "grpc_ingress.yaml", rillKind: rillIngress,
		path: func(p *TemplatePaths) *string { return &p.GRPCIngress }, name: func(n Names) string { return n.GRPCIngress }},
}

var rillIngress = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}

// rillParseOrder is the order in which Rill's admin service parses the templates into its one set
// (template.ParseFiles): of two definitions of one name, the later file's wins, here as there.
var rillParseOrder = []string{"http_ingress", "grpc_ingress", "service", "deployment", "pvc"}

// manifestTemplate is one parsed template.
type manifestTemplate struct {
	slot   templateSlot
	source string // file name used in errors: the path on disk, or "templates/<file> (embedded default)"
	tmpl   *template.Template
	gvk    schema.GroupVersionKind // of the sample render, or the slot's rillKind when it failed
	// kindAssumed: the sample render failed, and gvk is the slot's rillKind; a render of another
	// kind is an error, since reads and deletes look for gvk.
	kindAssumed bool
	// sampleWarnings counts the warnings of the sample render, which the plan shows, by their text
	// without the line (mt.withoutLine): a runtime's data may render more or fewer lines before the
	// same key. A render with more of one than the sample's has new ones.
	sampleWarnings map[string]int
}

// templateSet is the parsed set of five templates.
type templateSet struct {
	templates []*manifestTemplate
	checksum  string
}

// renderedObject is one object ready to apply.
type renderedObject struct {
	slot   templateSlot
	source string // the template's file, as errors name it (manifestTemplate.source)
	obj    *unstructured.Unstructured
}

// loadTemplates reads, parses and test-renders the five templates. Errors are FieldErrors on
// template_paths.<name> and name the file and line, every template in error reported (joined); what
// the sample render found that Rill's admin service accepts is added to spec.warnings (see
// sampleRenderWarning and decodeSingleObject).
//
// The five are parsed into one set, as Rill's admin service parses them (template.ParseFiles), so
// that a template may use what another defines ({{ define "labels" }} in one, {{ template "labels" . }}
// in another); each is executed by its own name, the file's path.
func loadTemplates(paths TemplatePaths, spec *Spec) (*templateSet, error) {
	set := &templateSet{}
	h := sha256.New()
	texts := map[string]string{}
	bySlot := map[string]*manifestTemplate{}
	var errs []error
	for _, slot := range templateSlots {
		var text []byte
		var source string
		if p := *slot.path(&paths); p != "" {
			b, err := os.ReadFile(p)
			if err != nil {
				// Whether the file is there is the machine's (provisioner.ErrFromEnvironment): a path may name
				// a file only the apply's runner has.
				errs = append(errs, provisioner.EnvironmentErrorf("template_paths."+slot.field, "cannot read template: %v", err))
				continue
			}
			text, source = b, p
		} else {
			b, err := fs.ReadFile(templates.FS, slot.file)
			if err != nil {
				errs = append(errs, provisioner.Errorf("template_paths."+slot.field, "embedded default template missing: %v", err))
				continue
			}
			text, source = b, "templates/"+slot.file+" (embedded default)"
		}
		mt := &manifestTemplate{slot: slot, source: source}
		set.templates = append(set.templates, mt)
		bySlot[slot.field], texts[slot.field] = mt, string(text)
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00", slot.field, len(text))
		h.Write(text)
	}
	set.checksum = hex.EncodeToString(h.Sum(nil))
	// missingkey=zero: an annotation the project does not have renders empty (and pipes into
	// functions as ""), where missingkey=error would fail the plan.
	root := template.New("").Funcs(templateFuncs()).Option("missingkey=zero")
	// Each phase goes on past a template in error, so that one run reports every template's errors.
	for _, field := range rillParseOrder {
		mt := bySlot[field]
		if mt == nil { // not read
			continue
		}
		tmpl, err := root.New(mt.source).Parse(texts[field])
		if err != nil {
			errs = append(errs, &provisioner.FieldError{Path: "template_paths." + field, Err: cleanTemplateError(err, mt.source)})
			continue
		}
		mt.tmpl = tmpl
	}
	// A call by a base name two files share is an error of the calling file, found in the parse trees
	// whether or not the sample render reaches it; that file is not rendered.
	callsAmbiguous := ambiguousCalls(root, nameByBaseName(root, set.templates, paths))
	for _, mt := range set.templates {
		if mt.tmpl != nil && len(callsAmbiguous[mt.source]) > 0 {
			errs = append(errs, &provisioner.FieldError{Path: "template_paths." + mt.slot.field, Err: errors.Join(callsAmbiguous[mt.source]...)})
			mt.tmpl = nil
		}
	}
	// A file that could not be read or parsed may define what another uses: the set is incomplete.
	incomplete := len(errs) > 0
	var found *projectDataNodes
	projectDataReaders := func() *projectDataNodes { // analysed once, when a sample render fails
		if found == nil {
			var roots []string
			for _, mt := range set.templates {
				if mt.tmpl != nil {
					roots = append(roots, mt.tmpl.Name())
				}
			}
			found = newProjectDataNodes(root, roots)
		}
		return found
	}
	// Test-render with sample data, once every definition is parsed, so that mistakes surface at
	// plan time, not at apply.
	for _, mt := range set.templates {
		if mt.tmpl == nil { // did not parse
			continue
		}
		obj, warnings, err := mt.render(sampleData(spec))
		path := "template_paths." + mt.slot.field
		if xe := (*executionError)(nil); incomplete && errors.As(err, &xe) && undefinedTemplateRE.MatchString(xe.raw) {
			continue // perhaps defined in a file in error; it is reported once that file reads and parses
		}
		if xe := (*executionError)(nil); errors.As(err, &xe) && failedOnTheData(xe.raw, projectDataReaders) {
			mt.gvk, mt.kindAssumed = mt.slot.rillKind, true
			spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: path, Message: sampleRenderWarning(err, mt.gvk)})
			continue
		}
		if err != nil {
			errs = append(errs, &provisioner.FieldError{Path: path, Err: err})
			continue
		}
		mt.sampleWarnings = make(map[string]int, len(warnings))
		for _, w := range warnings {
			spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: path, Message: w})
			mt.sampleWarnings[mt.withoutLine(w)]++
		}
		mt.gvk = obj.GroupVersionKind()
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// nameByBaseName names the template of each file given in paths by the file's base name too, as
// Rill's admin service's template.ParseFiles names it, so that one file may call another by it
// ({{ template "http_ingress.yaml" . }}); a {{ define }} of that name keeps it. A base name that two
// of the files share is returned with the files' paths (Rill renders the later file for both; a call
// by it is an error here, ambiguousCalls).
func nameByBaseName(root *template.Template, mts []*manifestTemplate, paths TemplatePaths) map[string][]string {
	isFile := map[string]bool{}
	byBase := map[string][]*manifestTemplate{}
	for _, mt := range mts {
		isFile[mt.source] = true
		if mt.tmpl != nil && *mt.slot.path(&paths) != "" { // an embedded default has no file to call
			base := filepath.Base(mt.source)
			byBase[base] = append(byBase[base], mt)
		}
	}
	ambiguous := map[string][]string{}
	for base, named := range byBase {
		if root.Lookup(base) != nil && !isFile[base] {
			continue // a define has the name
		}
		if len(named) > 1 {
			for _, mt := range named {
				ambiguous[base] = append(ambiguous[base], mt.source)
			}
			continue
		}
		if !isFile[base] { // else the file's path is its base name already
			_, _ = root.AddParseTree(base, named[0].tmpl.Tree) // a tree already parsed into this set adds
		}
	}
	return ambiguous
}

// ambiguousCalls returns the errors of the calls ({{ template "<name>" }}) of the set by a base name
// in ambiguous, by the file they are in.
func ambiguousCalls(root *template.Template, ambiguous map[string][]string) map[string][]error {
	out := map[string][]error{}
	if len(ambiguous) == 0 {
		return out
	}
	walked := map[*parse.Tree]bool{} // a file's tree is also under its base name (nameByBaseName)
	for _, t := range root.Templates() {
		if t.Tree == nil || t.Root == nil || walked[t.Tree] {
			continue
		}
		walked[t.Tree] = true
		eachTemplateCall(t.Root, func(call *parse.TemplateNode) {
			files := ambiguous[call.Name]
			if len(files) == 0 {
				return
			}
			location, _ := t.ErrorContext(call)
			out[t.ParseName] = append(out[t.ParseName], fmt.Errorf("%s: {{ template %q }} calls the base name of %d files (%s), so it is "+
				"ambiguous (Rill's admin service renders the later one for both); move what they share into a {{ define }}",
				location, call.Name, len(files), strings.Join(files, ", ")))
		})
	}
	return out
}

// eachTemplateCall calls f with every {{ template }} of the list n, however deep.
func eachTemplateCall(n parse.Node, f func(*parse.TemplateNode)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			eachTemplateCall(c, f)
		}
	case *parse.IfNode:
		eachTemplateCall(n.List, f)
		eachTemplateCall(n.ElseList, f)
	case *parse.WithNode:
		eachTemplateCall(n.List, f)
		eachTemplateCall(n.ElseList, f)
	case *parse.RangeNode:
		eachTemplateCall(n.List, f)
		eachTemplateCall(n.ElseList, f)
	case *parse.TemplateNode:
		f(n)
	}
}

// sampleRenderWarning is the warning for a template whose execution failed on the sample data: Rill's
// admin service renders it only at provision time, with the project's data, so it may be fine there
// (a guard such as {{ if not .Annotations.team }}{{ fail "..." }}{{ end }} on an annotation of the
// project's own). It is not an error: it would block every plan, even one that changes no runtime.
// Each runtime's plan renders it with that runtime's data (CheckProvision).
func sampleRenderWarning(err error, assumed schema.GroupVersionKind) string {
	return fmt.Sprintf("%v: it failed with the plan's sample data (Rill's annotations %s, with placeholder values, and no runtime name), so the set cannot be checked with it; "+
		"each runtime's plan renders it with that runtime's own data (once all of it is known) and fails if that data makes it fail; until it renders, it is taken for kind %s (what Rill's admin service applies it as)",
		err, strings.Join(sampleAnnotationKeys(), ", "), kindString(assumed.GroupKind()))
}

// sampleAnnotations are the annotations Rill's admin service gives every runtime it provisions
// (admin's DeploymentAnnotations.ToMap, besides the project's own), with placeholder values, so
// that a template that needs them renders at plan time as it does in Rill.
var sampleAnnotations = map[string]string{
	"organization_id":     "00000000-0000-0000-0000-000000000001",
	"organization_name":   "sample-org",
	"organization_plan":   "team",
	"project_id":          "00000000-0000-0000-0000-000000000002",
	"project_name":        "sample-project",
	"project_prod_slots":  "1",
	"project_provisioner": "default",
}

func sampleAnnotationKeys() []string {
	keys := make([]string, 0, len(sampleAnnotations))
	for k := range sampleAnnotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sampleProvisionID is the provision ID of the sample data, and of a plan's check of a runtime whose
// ID its create makes (CheckProvision): a resource ID's shape, as a UUID without dashes.
const sampleProvisionID = "0123456789abcdef0123456789abcdef"

// sampleData is the data templates are test-rendered with at initialization.
func sampleData(spec *Spec) *TemplateData {
	return newTemplateData(spec, sampleProvisionID, &provisioner.RuntimeArgs{Slots: 1, Version: "v0.0.0"}, &provisioner.ResourceOptions{Annotations: sampleAnnotations})
}

// newTemplateData builds the template data of a runtime.
func newTemplateData(spec *Spec, pid string, args *provisioner.RuntimeArgs, opts *provisioner.ResourceOptions) *TemplateData {
	cpu, mem, _ := provisioner.NewRuntimeSizes(args.Slots)
	host, hostname := spec.hostParts(pid)
	replicas := 1
	if args.Hibernated {
		replicas = 0
	}
	var options map[string]string
	var rillVersion, name string
	if opts != nil {
		name, options, rillVersion = opts.Name, opts.Annotations, opts.RillVersion
	}
	return &TemplateData{
		Image:        spec.Image,
		ImageTag:     provisioner.ResolveVersion(args.Version, rillVersion),
		ProvisionID:  pid,
		Host:         host,
		Hostname:     hostname,
		Namespace:    spec.Namespace,
		DataDir:      spec.DataDir,
		CPU:          cpu,
		MemoryGB:     mem,
		StorageBytes: args.StorageBytes(),
		Slots:        args.Slots,
		Environment:  args.EnvironmentOrDefault(),
		Replicas:     replicas,
		Hibernated:   args.Hibernated,
		Names:        NamesFor(pid),
		Annotations:  args.ProjectAnnotations(options),
		Name:         name,
		environment:  args.Environment,
	}
}

// render renders every template for a runtime and stamps the provisioner's metadata on the objects.
// What decoding accepted with a warning (a duplicate key, a second document) is accepted as Rill's
// admin service accepts it; the warnings the plan's sample render did not show (a runtime's data made
// them) are returned, for the apply to report.
func (s *templateSet) render(data *TemplateData) ([]*renderedObject, []string, error) {
	out := make([]*renderedObject, 0, len(s.templates))
	var unshown []string
	for _, mt := range s.templates {
		obj, warnings, err := mt.render(data)
		if err != nil {
			return nil, nil, err
		}
		seen := map[string]int{}
		for _, w := range warnings {
			key := mt.withoutLine(w)
			if seen[key]++; seen[key] > mt.sampleWarnings[key] { // more than the plan showed
				unshown = append(unshown, w)
			}
		}
		stampMetadata(obj, mt.slot, data, s.checksum)
		out = append(out, &renderedObject{slot: mt.slot, source: mt.source, obj: obj})
	}
	return out, unshown, nil
}

// stampMetadata sets what the provisioner owns on every object: name, namespace, labels,
// annotations; for the Deployment also the replica count and the pod labels.
func stampMetadata(obj *unstructured.Unstructured, slot templateSlot, data *TemplateData, checksum string) {
	obj.SetName(slot.name(data.Names))
	obj.SetNamespace(data.Namespace)
	ours := map[string]string{LabelManagedBy: ManagedByValue, LabelInstance: data.ProvisionID}
	if data.Name != "" {
		ours[LabelNameHash] = NameHash(data.Name)
	}
	obj.SetLabels(merge(obj.GetLabels(), ours))
	obj.SetAnnotations(merge(obj.GetAnnotations(), provisionerAnnotations(data, checksum)))
	if slot.field == "deployment" {
		_ = unstructured.SetNestedField(obj.Object, int64(data.Replicas), "spec", "replicas")
		podLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
		_ = unstructured.SetNestedStringMap(obj.Object, merge(podLabels, ours), "spec", "template", "metadata", "labels")
	}
}

// provisionerAnnotations are the annotations the provisioner puts on every object of a runtime with
// data, whose templates have checksum: its record of what it applied, which CheckResource compares
// with the live objects (annotationsDrift).
func provisionerAnnotations(data *TemplateData, checksum string) map[string]string {
	annotations := map[string]string{
		AnnotationTemplatesChecksum: checksum,
		AnnotationSlots:             strconv.Itoa(data.Slots),
		AnnotationVersion:           data.ImageTag,
		AnnotationHibernated:        strconv.FormatBool(data.Hibernated),
	}
	b, _ := json.Marshal(templateInputs(data)) // a map of strings always encodes; the keys come out sorted
	annotations[AnnotationTemplateInputs] = string(b)
	if data.Name != "" {
		annotations[AnnotationName] = data.Name
	}
	if data.Provisioner != "" {
		annotations[AnnotationProvisioner] = data.Provisioner
	}
	if data.claim != "" {
		annotations[AnnotationClaim] = data.claim
	}
	// The environment as rill_runtime set it (absent when unset, as a static ledger keeps it), not
	// .Environment's default; the project's annotations as the templates see them.
	if data.environment != "" {
		annotations[AnnotationEnvironment] = data.environment
	}
	if len(data.Annotations) > 0 {
		b, _ := json.Marshal(data.Annotations) // a map of strings always encodes; the keys come out sorted
		annotations[AnnotationProjectAnnotations] = string(b)
	}
	return annotations
}

// templateInputs are the spec fields that feed the templates as data, keyed by spec field, with the
// values the templates see: a change of one renders other objects under the same templates checksum,
// so AnnotationTemplateInputs records them and CheckResource compares (see inputsDrift). The host is
// the rendered one (host[:port], no scheme). The namespace is not among them: it is where the objects
// are (the state's namespace), not what they say. No secret may go here: it is an annotation.
func templateInputs(data *TemplateData) map[string]string {
	return map[string]string{"data_dir": data.DataDir, "host": data.Host, "image": data.Image}
}

func merge(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// render executes one template and decodes its output into one object; warnings are what decoding
// accepted as Rill's admin service does (see decodeSingleObject), as "<file>:<line>: ..." messages.
// An execution error is an *executionError.
func (mt *manifestTemplate) render(data *TemplateData) (*unstructured.Unstructured, []string, error) {
	var buf bytes.Buffer
	if err := mt.tmpl.Execute(&buf, data); err != nil {
		return nil, nil, &executionError{err: cleanTemplateError(err, mt.source), raw: err.Error()}
	}
	obj, found, err := decodeSingleObject(buf.Bytes())
	if le := (*lineError)(nil); errors.As(err, &le) {
		return nil, nil, fmt.Errorf("%s:%d: %s", mt.source, le.line, le.msg)
	} else if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", mt.source, err)
	}
	warnings := make([]string, 0, len(found))
	for _, w := range found {
		warnings = append(warnings, fmt.Sprintf("%s:%d: %s", mt.source, w.line, w.msg))
	}
	if err := mt.checkRendered(obj); err != nil {
		// A duplicate key or an ignored document may be why (a second kind: the last one kept), and
		// the failed render's warnings would be lost.
		if len(warnings) > 0 {
			err = fmt.Errorf("%w (perhaps because of: %s)", err, strings.Join(warnings, "; "))
		}
		return nil, nil, err
	}
	return obj, warnings, nil
}

// withoutLine is a render warning of mt ("<source>:<line>: <message>", manifestTemplate.render's)
// without its line number.
func (mt *manifestTemplate) withoutLine(warning string) string {
	rest, ok := strings.CutPrefix(warning, mt.source+":")
	if !ok {
		return warning
	}
	return mt.source + ":" + strings.TrimLeft(rest, "0123456789")
}

// checkRendered checks a rendered object against its slot: its kind, and what the provisioner reads
// from it (a PVC's storage, a Deployment's containers). That the storage is the runtime's size is
// checked with a runtime's own data only (Provisioner.renderRuntime), never the sample's.
func (mt *manifestTemplate) checkRendered(obj *unstructured.Unstructured) error {
	if mt.slot.kind.Kind != "" && obj.GroupVersionKind().GroupKind() != mt.slot.kind {
		return fmt.Errorf("%s: must render a %s, got %s", mt.source, kindString(mt.slot.kind), kindString(obj.GroupVersionKind().GroupKind()))
	}
	if mt.kindAssumed && obj.GroupVersionKind().GroupKind() != mt.gvk.GroupKind() {
		return fmt.Errorf("%s: renders kind %s, but it failed with the plan's sample data, so the provisioner took it for kind %s "+
			"(what Rill's admin service applies it as) and would read and delete that kind; make it render with the sample data, or render kind %s",
			mt.source, kindString(obj.GroupVersionKind().GroupKind()), kindString(mt.gvk.GroupKind()), kindString(mt.gvk.GroupKind()))
	}
	if mt.slot.field == "pvc" {
		if _, err := renderedStorage(obj); err != nil {
			return fmt.Errorf("%s: %w", mt.source, err)
		}
	}
	if mt.slot.field == "deployment" {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if len(containers) == 0 {
			return fmt.Errorf("%s: the Deployment has no containers (spec.template.spec.containers)", mt.source)
		}
	}
	return nil
}

// executionError is a template's execution error; raw is text/template's message (see failedOnTheData).
type executionError struct {
	err error
	raw string
}

func (e *executionError) Error() string { return e.err.Error() }
func (e *executionError) Unwrap() error { return e.err }

// failedOnTheData reports whether an execution error of the plan's sample render may be the sample
// data's alone, and so is a warning (see sampleRenderWarning): a `fail` (Sprig's; a guard on the
// data), or a failure at a node that may depend on the part of the data the sample can only make up,
// the annotations (the keys are Rill's, the values placeholders) and the runtime's name
// (projectDataNodes: read there, or through a variable, a with, a range, a template call, or in a
// branch they choose), such as a function given an annotation's value. Anything else fails with
// every runtime's data, whose other fields and types are fixed (a field or index the type does not
// have, a value of the wrong type for a function, a template not defined), so it fails the plan, as
// it would fail every apply. text/template's message names the failing node by its place,
// "template: <file>:<line>:<col>: executing "<name>" at <<node>>: <problem>".
func failedOnTheData(raw string, nodes func() *projectDataNodes) bool {
	if strings.Contains(raw, ">: error calling fail: ") {
		return true
	}
	m := execPlaceRE.FindStringSubmatch(raw)
	return m != nil && nodes().has(m[1])
}

var (
	undefinedTemplateRE = regexp.MustCompile(`: template "[^"]*" not defined$`)
	execPlaceRE         = regexp.MustCompile(`^template: (.*?:\d+:\d+): executing "`)
)

func kindString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

var duplicateKeyRE = regexp.MustCompile(`line (\d+): key (.+?) already set in map`)

// decodeSingleObject decodes rendered YAML into one Kubernetes object (documents that are empty or
// hold only comments are skipped). What Rill's admin service accepts (its yaml.NewYAMLOrJSONDecoder)
// is accepted, with a warning each: a duplicate key keeps its last value, and documents after the
// object are ignored (Rill decodes the first only).
func decodeSingleObject(rendered []byte) (*unstructured.Unstructured, []lineError, error) {
	var found *unstructured.Unstructured
	var warnings []lineError
	for _, d := range splitDocuments(string(rendered)) {
		if found != nil {
			if js, err := yaml.YAMLToJSON([]byte(d.text)); err != nil || !isNull(js) {
				warnings = append(warnings, lineError{line: d.startLine, msg: "a second document, ignored (Rill's admin service decodes the first only)"})
			}
			continue
		}
		js, err := yaml.YAMLToJSONStrict([]byte(d.text))
		if err != nil {
			// Strict decoding refuses only duplicate keys that the lenient one accepts, keeping the last.
			lenient, lerr := yaml.YAMLToJSON([]byte(d.text))
			if lerr != nil {
				return nil, nil, yamlError(lerr, d.text, d.startLine)
			}
			for _, m := range duplicateKeyRE.FindAllStringSubmatch(err.Error(), -1) {
				n, _ := strconv.Atoi(m[1])
				warnings = append(warnings, lineError{line: d.startLine + n - 1, msg: "duplicate key " + m[2] + ", the last value kept (as Rill's admin service keeps it)"})
			}
			js = lenient
		}
		if isNull(js) {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, nil, fmt.Errorf("rendered manifest is not a Kubernetes object (it needs apiVersion and kind): %v", err)
		}
		found = obj
	}
	if found == nil {
		return nil, nil, errors.New("rendered manifest is empty")
	}
	return found, warnings, nil
}

func isNull(js []byte) bool {
	s := strings.TrimSpace(string(js))
	return s == "null" || s == ""
}

type yamlDocument struct {
	text      string
	startLine int // line of the rendered output the document starts at (1-based)
}

// splitDocuments splits YAML at "---" separator lines, keeping track of line numbers.
func splitDocuments(s string) []yamlDocument {
	var docs []yamlDocument
	var cur strings.Builder
	start := 1
	for i, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "---") && (len(line) == 3 || strings.ContainsAny(line[3:4], " \t\r\n#")) {
			docs = append(docs, yamlDocument{text: cur.String(), startLine: start})
			cur.Reset()
			start = i + 2
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, yamlDocument{text: cur.String(), startLine: start})
}

// lineError is a problem at a line of the rendered output (which matches the template's lines unless
// actions expand to several lines).
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// yamlError turns a YAML error into a lineError that quotes the offending rendered line.
func yamlError(err error, doc string, startLine int) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	msg = strings.Join(strings.Fields(msg), " ")
	m := yamlLineRE.FindStringSubmatchIndex(msg)
	if m == nil {
		return fmt.Errorf("rendered manifest is not valid YAML: %s", msg)
	}
	n, _ := strconv.Atoi(msg[m[2]:m[3]])
	rest := strings.TrimLeft(msg[m[1]:], ": ")
	if before := strings.TrimRight(msg[:m[0]], ": "); before != "" {
		rest = before + ": " + rest
	}
	snippet := ""
	if lines := strings.Split(doc, "\n"); n >= 1 && n <= len(lines) {
		snippet = fmt.Sprintf(" (rendered as %q)", strings.TrimRight(lines[n-1], "\r"))
	}
	return &lineError{line: startLine + n - 1, msg: "not valid YAML: " + rest + snippet}
}

// cleanTemplateError drops text/template's "template: " prefix; the rest already reads
// "<file>:<line>[:<col>]: <problem>".
func cleanTemplateError(err error, source string) error {
	msg := strings.TrimPrefix(err.Error(), "template: ")
	msg = strings.Replace(msg, "executing "+strconv.Quote(source)+" ", "", 1)
	return errors.New(msg)
}
