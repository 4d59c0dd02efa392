package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ownedList is a list of a runtime's object that the provisioner owns as a whole: the live list must
// be the rendered one, entry for entry. Server-side apply merges most such lists by their keys
// (a container's name, a port's containerPort, a mount's mountPath), so an entry another field
// manager added or re-keyed (kubectl edit, patch, set env) stays beside the rendered one: the apply
// is refused ("Duplicate value") or leaves the edit in place. CheckResource reports such a list as
// drift (listsDrift), and Provision replaces it before its apply (repairLists).
type ownedList struct {
	kind schema.GroupKind
	path []string
	// skip are entry fields compared elsewhere with their own drift message (deploymentDrift's image
	// and resources, ingressHosts' hosts), which the forced apply takes back by itself.
	skip []string
	// atomic: the API server's schema makes the list atomic, so the forced apply replaces it whole
	// and only the drift is needed (an Ingress's rules and tls, a pod's tolerations) when the
	// template renders it. One the template leaves unset, which a hand edit added, is no field of
	// the apply's: it is removed like the keyed lists, before the apply when the object was read
	// anyway (the Deployment), else after it, from the object the apply answered with (applyAll).
	atomic bool
}

var ownedLists = []ownedList{
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "containers"}, skip: []string{"image", "resources"}},
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "initContainers"}, skip: []string{"image", "resources"}},
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "volumes"}},
	// Pod lists a template may render or a platform engineer add by hand (scheduling onto tainted
	// nodes, pulling from a private registry): tolerations are atomic, so a hand edit takes the
	// whole list from the apply; the others are keyed, so an entry added by hand stays beside the
	// rendered ones.
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "tolerations"}, atomic: true},
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "imagePullSecrets"}},
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "topologySpreadConstraints"}},
	{kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, path: []string{"spec", "template", "spec", "hostAliases"}},
	{kind: schema.GroupKind{Kind: "Service"}, path: []string{"spec", "ports"}},
	{kind: schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}, path: []string{"spec", "rules"}, skip: []string{"host"}, atomic: true},
	{kind: schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}, path: []string{"spec", "tls"}, skip: []string{"hosts"}, atomic: true},
}

// listsOf are the owned lists of a rendered object's kind.
func listsOf(rendered *unstructured.Unstructured) []ownedList {
	gk := rendered.GroupVersionKind().GroupKind()
	var out []ownedList
	for _, l := range ownedLists {
		if l.kind == gk {
			out = append(out, l)
		}
	}
	return out
}

// admissionEdits says which differences of a live list from the rendered one are what the cluster's
// admission made of the provisioner's own apply, and so no difference: entries the live list has
// beyond the rendered ones (added), and values of the rendered fields that it holds in another
// form (rewritten) where no other field manager owns them (others: their sets of owned fields at
// the value compared). See listsDrift.
type admissionEdits struct {
	added, rewritten bool
	others           owners
}

// diff says how the live object's list differs from the rendered one: "" when not, else its first
// difference ("spec.ports[http].port is 1234, want 8080", "... has 4 entries, want 3"). What the
// templates leave unset, or set to the value the API server omits ("", 0, false, {}), is not
// compared: the server's defaults (a port's protocol, a container's imagePullPolicy and
// terminationMessagePath, a probe's timeoutSeconds) are no drift. Quantities compare by value. With
// adm.added, entries of the live list (at any depth) that the rendered one lacks are no difference
// either, as long as every rendered entry is there, in order; with adm.rewritten, neither is a field
// the live list sets to another value than the rendered one, unless another field manager owns it
// or it names the entry (keyFields; a field it lacks always is).
func (l ownedList) diff(live, rendered *unstructured.Unstructured, adm admissionEdits) string {
	want, _, _ := unstructured.NestedFieldNoCopy(rendered.Object, l.path...)
	have, _, _ := unstructured.NestedFieldNoCopy(live.Object, l.path...)
	w, _ := want.([]any)
	h, _ := have.([]any)
	return listDiff(strings.Join(l.path, "."), h, w, l.skip, adm)
}

func listDiff(path string, have, want []any, skip []string, adm admissionEdits) string {
	if adm.added && len(have) > len(want) && holdsInOrder(path, have, want, skip, adm) {
		return ""
	}
	if len(have) != len(want) {
		return fmt.Sprintf("%s has %d entries, want %d", path, len(have), len(want))
	}
	for i, w := range want {
		if d := valueDiff(path+"["+entryName(w, i)+"]", have[i], w, skip, adm.entry(have[i])); d != "" {
			return d
		}
	}
	return ""
}

// holdsInOrder reports whether every entry of want matches an entry of have, in order, with other
// entries of have between or after them.
func holdsInOrder(path string, have, want []any, skip []string, adm admissionEdits) bool {
	j := 0
	for i, w := range want {
		for j < len(have) && valueDiff(path+"["+entryName(w, i)+"]", have[j], w, skip, adm.entry(have[j])) != "" {
			j++
		}
		if j == len(have) {
			return false
		}
		j++
	}
	return true
}

func valueDiff(path string, have, want any, skip []string, adm admissionEdits) string {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if slices.Contains(skip, k) {
				continue
			}
			if d := valueDiff(path+"."+k, h[k], w[k], nil, adm.field(k)); d != "" {
				return d
			}
		}
		return ""
	case []any:
		h, _ := have.([]any)
		return listDiff(path, h, w, nil, adm)
	}
	if isUnset(want) && isUnset(have) || scalarEqual(have, want) || adm.rewritten && !isUnset(have) && len(adm.others) == 0 && !isKeyField(path) {
		return ""
	}
	if what := secretBearing(path); what != "" {
		return path + " differs from the template's (" + what + " are not shown: they may be secrets)"
	}
	return fmt.Sprintf("%s is %s, want %s", path, valueText(have), valueText(want))
}

// keyFields are the fields whose values name the entries of the owned lists in the API server's
// merge keys (a container's, env var's or volume's name, a port's containerPort or port and
// protocol, a mount's mountPath, a host alias's ip, a spread constraint's topologyKey and
// whenUnsatisfiable). A live entry whose key field is not the rendered one is another entry, not the
// rendered one rewritten: an entry removed by hand, with one that admission added in its place,
// stays drift.
var keyFields = []string{"name", "containerPort", "port", "protocol", "mountPath", "ip", "topologyKey", "whenUnsatisfiable"}

// isKeyField says whether the value at path is a field of keyFields.
func isKeyField(path string) bool {
	return slices.Contains(keyFields, path[strings.LastIndex(path, ".")+1:])
}

// owners are the sets of fields (FieldsV1) that field managers other than this provisioner's applies
// own at one value of a live object: an empty set owns the value whole (an atomic list or map, or a
// scalar).
type owners []map[string]any

// field descends to the map field k.
func (adm admissionEdits) field(k string) admissionEdits {
	adm.others = adm.others.descend(func(set map[string]any) []map[string]any {
		sub, _ := set["f:"+k].(map[string]any)
		return []map[string]any{sub}
	})
	return adm
}

// entry descends to a list's entry, the live one (which the sets name by its key fields).
func (adm admissionEdits) entry(have any) admissionEdits {
	adm.others = adm.others.descend(func(set map[string]any) []map[string]any {
		var out []map[string]any
		for k, sub := range set {
			var fields map[string]any
			if key, ok := strings.CutPrefix(k, "k:"); ok && json.Unmarshal([]byte(key), &fields) == nil && keyed(have, fields, false) {
				s, _ := sub.(map[string]any)
				out = append(out, s)
			}
		}
		return out
	})
	return adm
}

// descend maps each set to its sets below (next), keeping a set that owns its value whole, and
// dropping what owns nothing there.
func (o owners) descend(next func(map[string]any) []map[string]any) owners {
	var out owners
	for _, set := range o {
		if len(set) == 0 {
			out = append(out, set)
			continue
		}
		for _, sub := range next(set) {
			if sub != nil {
				out = append(out, sub)
			}
		}
	}
	return out
}

// secretBearing names what path is when it is a value that credentials are often passed in, "" when
// not: the drift shows in the plan, the state and the repair's log. An env var's value (kubectl set
// env), a container's command-line argument (`--token=...`), and an HTTP header of a probe
// (`Authorization: Bearer ...`); an env var's valueFrom only names a Secret, and is shown.
func secretBearing(path string) string {
	switch {
	case strings.HasSuffix(path, ".value") && strings.Contains(path, ".env["):
		return "env values"
	case strings.HasSuffix(path, ".value") && strings.Contains(path, ".httpHeaders["):
		return "HTTP header values"
	}
	i := strings.LastIndex(path, ".")
	if last := path[i+1:]; strings.HasSuffix(last, "]") && (strings.HasPrefix(last, "args[") || strings.HasPrefix(last, "command[")) {
		return "command-line arguments"
	}
	return ""
}

// entryName names a list entry by its name field, else by its index.
func entryName(entry any, i int) string {
	if m, ok := entry.(map[string]any); ok {
		if n, ok := m["name"].(string); ok && n != "" {
			return n
		}
	}
	return strconv.Itoa(i)
}

// isUnset: the API server stores these as an absent field (omitempty).
func isUnset(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case int64:
		return v == 0
	case float64:
		return v == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func scalarEqual(have, want any) bool {
	h, w := scalarText(have), scalarText(want)
	if h == w {
		return true
	}
	// The API server writes quantities in their canonical form: "4294967296" is stored as "4Gi".
	hq, herr := resource.ParseQuantity(h)
	wq, werr := resource.ParseQuantity(w)
	return herr == nil && werr == nil && hq.Cmp(wq) == 0
}

func scalarText(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(v)
}

func valueText(v any) string {
	switch v.(type) {
	case nil:
		return "unset"
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return scalarText(v)
}

// addedDiff names the first field (at any depth) of the live list that a field manager other than
// this provisioner's owns and the templates leave unset (or set to a value the API server omits):
// `kubectl edit` adding `readOnly: true` to a mount or a `hostPort` to a port, which diff does not
// see (it compares what the templates set) and the forced apply does not remove (not its field).
// Only a field manager's ownership makes it drift: the API server's defaults (a port's protocol, a
// container's imagePullPolicy) and what admission adds on the provisioner's own apply belong to no
// field manager (an update owns only what it changed), and this provisioner's own entries (a
// repair's update) own only what it rendered or what defaulting filled in again. An atomic list (or
// map) another field manager took whole from the apply (a hand edit of args, tolerations or an
// Ingress's rules) is compared whole: every field of it the templates leave unset is named. "" when
// there is none.
func (l ownedList) addedDiff(live, rendered *unstructured.Unstructured) string {
	want, _, _ := unstructured.NestedFieldNoCopy(rendered.Object, l.path...)
	have, _, _ := unstructured.NestedFieldNoCopy(live.Object, l.path...)
	var found []string
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == FieldManager || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var at any
		if json.Unmarshal(mf.FieldsV1.Raw, &at) != nil {
			continue
		}
		for _, p := range l.path {
			m, _ := at.(map[string]any)
			if at = m["f:"+p]; at == nil {
				break
			}
		}
		owned, ok := at.(map[string]any)
		if !ok {
			continue
		}
		if d := addedIn(strings.Join(l.path, "."), owned, have, want, l.skip, mf.Manager); d != "" {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return slices.Min(found) // the same one whatever the order of the managed fields
}

// addedIn walks one field manager's set of owned fields (FieldsV1: "f:<field>", "k:<key of an
// entry>") down the live value and the rendered one, returning the first owned field that the
// rendered value leaves unset and the live one sets. skip applies to the fields of the list's entries,
// as in listDiff, for the lists compared whole.
func addedIn(path string, owned map[string]any, have, want any, skip []string, manager string) string {
	if isUnset(want) {
		if isUnset(have) {
			return ""
		}
		return addedText(path, have, manager)
	}
	if len(owned) == 0 {
		// The manager owns this value whole (an atomic list or map, which FieldsV1 records as a leaf):
		// whatever it holds beyond the rendered value is its.
		switch want.(type) {
		case map[string]any, []any:
			return extraIn(path, have, want, skip, manager)
		}
		return ""
	}
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(owned)) {
			name, ok := strings.CutPrefix(k, "f:")
			sub, _ := owned[k].(map[string]any)
			if !ok || sub == nil {
				continue
			}
			if d := addedIn(path+"."+name, sub, h[name], w[name], nil, manager); d != "" {
				return d
			}
		}
	case []any:
		h, _ := have.([]any)
		for _, k := range slices.Sorted(maps.Keys(owned)) {
			key, ok := strings.CutPrefix(k, "k:")
			sub, _ := owned[k].(map[string]any)
			if !ok || sub == nil {
				continue // a set's value ("v:") or an index ("i:"): compared by diff
			}
			var fields map[string]any
			if json.Unmarshal([]byte(key), &fields) != nil {
				continue
			}
			hi := slices.IndexFunc(h, func(e any) bool { return keyed(e, fields, false) })
			wi := slices.IndexFunc(w, func(e any) bool { return keyed(e, fields, true) })
			if hi < 0 || wi < 0 {
				continue // an entry the rendered list lacks: diff names it (the list's length)
			}
			if d := addedIn(path+"["+entryName(w[wi], wi)+"]", sub, h[hi], w[wi], skip, manager); d != "" {
				return d
			}
		}
	}
	return ""
}

// extraIn is the first field of have, at any depth, that want leaves unset: have is a value another
// field manager owns whole, which diff found equal to want in every field want sets.
func extraIn(path string, have, want any, skip []string, manager string) string {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if slices.Contains(skip, k) {
				continue
			}
			if isUnset(w[k]) {
				if !isUnset(h[k]) {
					return addedText(path+"."+k, h[k], manager)
				}
				continue
			}
			if d := extraIn(path+"."+k, h[k], w[k], nil, manager); d != "" {
				return d
			}
		}
	case []any:
		h, _ := have.([]any)
		for i := range min(len(h), len(w)) {
			if d := extraIn(path+"["+entryName(w[i], i)+"]", h[i], w[i], skip, manager); d != "" {
				return d
			}
		}
	}
	return ""
}

// keyed reports whether a list entry has the key fields of a managed-fields key ("k:{...}"). A
// rendered entry may leave a key field to the API server's default (a port's protocol): with
// defaulted, a key field the entry lacks matches.
func keyed(entry any, key map[string]any, defaulted bool) bool {
	m, _ := entry.(map[string]any)
	if m == nil {
		return false
	}
	for k, v := range key {
		e, ok := m[k]
		if !ok && defaulted {
			continue
		}
		if !ok || !scalarEqual(e, v) {
			return false
		}
	}
	return true
}

// addedText is the drift of a field a field manager set that the templates leave unset, without
// its value when it is, or holds, one that may be a secret (see secretBearing).
func addedText(path string, have any, manager string) string {
	if what := secretsIn(path, have); what != "" {
		return fmt.Sprintf("%s is set by %s, want unset (%s are not shown: they may be secrets)", path, manager, what)
	}
	return fmt.Sprintf("%s is %s, want unset (set by %s)", path, valueText(have), manager)
}

// secretsIn names what v, at path, holds that may be a secret (secretBearing), "" when nothing.
func secretsIn(path string, v any) string {
	if what := secretBearing(path); what != "" {
		return what
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if what := secretsIn(path+"."+k, v[k]); what != "" {
				return what
			}
		}
	case []any:
		for i, e := range v {
			if what := secretsIn(path+"["+entryName(e, i)+"]", e); what != "" {
				return what
			}
		}
	}
	return ""
}

// listsDrift is the drift of the rendered object's owned lists on the live one, one entry per list
// that differs, naming the object and the field. What no field manager but this provisioner owns is
// what its applies wrote, as the cluster's admission made it: an entry the live list has beyond the
// rendered ones (a policy that injects an env var, a volume or a sidecar into every Deployment, as
// Kyverno's do) and a value it holds in another form (an env value or argument a policy rewrites, a
// port a platform moves) are then no drift, since the apply cannot undo them: as drift they would
// plan an update for ever. A template, spec or version that renders another value is drift anyway
// (the checksum, inputs and version annotations differ), and so is an entry or value that is
// missing: ownership cannot tell admission's removal from a hand edit's. Extra entries are drift
// once another field manager owns a field of the list (editedByAnother: a hand edit, kubectl set env,
// say), and a value other than the rendered one when another field manager owns it.
func listsDrift(live, rendered *unstructured.Unstructured) []string {
	var out []string
	for _, l := range listsOf(rendered) {
		adm := admissionEdits{added: true, rewritten: true, others: othersOwning(live.GetManagedFields(), fieldKeys(l.path)...)}
		d := l.diff(live, rendered, adm)
		if d == "" && editedByAnother(live, l.path) {
			// Checked after, as the first difference beside extra entries names a hand edit better
			// than their count.
			adm.added = false
			d = l.diff(live, rendered, adm)
		}
		if d == "" {
			d = l.addedDiff(live, rendered)
		}
		if d != "" {
			out = append(out, fmt.Sprintf("%s %s/%s: %s", rendered.GetKind(), live.GetNamespace(), live.GetName(), d))
		}
	}
	return out
}

// repairLists replaces, with one JSON merge patch, each owned list (not atomic, or atomic and not
// rendered) of the live object that differs from the rendered one (diff), or holds a field another
// field manager added that the templates leave unset (addedDiff), and holds fields another field
// manager set: a hand edit, which
// the forced apply after it could not take back (see ownedList), or an earlier repair (see
// editedByAnother). A list only this provisioner's applies wrote (a new image or data_dir, which the
// apply changes by itself) and a list that matches are left
// alone, so an object that was not edited by hand costs no write. live is the object already read
// (nil when it was not there); when read is set, nothing was read and the object is read here (one
// GET), but only for a kind that has such a list. It reports whether it wrote, or may have written,
// and the paths of the lists it replaced.
func repairLists(ctx context.Context, c *clients, gvr schema.GroupVersionResource, obj, live *unstructured.Unstructured, read bool, log *zap.Logger) (bool, [][]string, error) {
	var lists []ownedList
	for _, l := range listsOf(obj) {
		// An atomic list the templates render, the forced apply replaces whole. One they leave unset
		// (tolerations added by hand) is repaired here, but only on an object read anyway (the
		// Deployment): reading an Ingress for its tls would cost every update a GET.
		rendered, _, _ := unstructured.NestedFieldNoCopy(obj.Object, l.path...)
		if !l.atomic || !read && isUnset(rendered) {
			lists = append(lists, l)
		}
	}
	if len(lists) == 0 {
		return false, nil, nil
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	ri := c.dynamic.Resource(gvr).Namespace(ns)
	if read {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil, nil
		}
		if err != nil {
			return false, nil, fmt.Errorf("reading %s %s/%s: %w", obj.GetKind(), ns, name, err)
		}
		live = u
	}
	if live == nil {
		return false, nil, nil
	}
	patch := map[string]any{}
	var fields, diffs []string
	var paths [][]string
	for _, l := range lists {
		d := l.diff(live, obj, admissionEdits{})
		if d == "" {
			d = l.addedDiff(live, obj)
		}
		if d == "" || !editedByAnother(live, l.path) {
			continue
		}
		want, _, _ := unstructured.NestedFieldNoCopy(obj.Object, l.path...)
		setPath(patch, l.path, want) // nil (JSON null) removes a list the templates do not render
		fields = append(fields, strings.Join(l.path, "."))
		paths = append(paths, l.path)
		diffs = append(diffs, d)
	}
	if len(fields) == 0 {
		return false, nil, nil
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return false, nil, err
	}
	if _, err := ri.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil, nil // gone since: the apply re-creates it
		}
		return !refused(err), nil, fmt.Errorf("replacing %s of %s %s/%s (%s): %w", strings.Join(fields, ", "), obj.GetKind(), ns, name, strings.Join(diffs, "; "), err)
	}
	log.Info("replaced lists edited outside Terraform", zap.String("object", obj.GetKind()+" "+ns+"/"+name), zap.Strings("lists", fields), zap.Strings("had", diffs))
	return true, paths, nil
}

// editedByAnother says whether an entry of the live object's managedFields other than this
// provisioner's Apply entry owns a field at or under path. That includes the Update entry of our own
// field manager that an earlier repair's merge patch left: it co-owns the entries it put back, so a
// later apply that no longer renders one of them (a new data_dir, a template's new port) cannot
// remove it, and the list must be replaced again (as claim.go folds the create's Update entry away).
func editedByAnother(live *unstructured.Unstructured, path []string) bool {
	return ownedByAnother(live.GetManagedFields(), fieldKeys(path)...)
}

// fieldKeys are the keys of a field set (FieldsV1) that lead to the field at path.
func fieldKeys(path []string) []string {
	keys := make([]string, len(path))
	for i, p := range path {
		keys[i] = "f:" + p
	}
	return keys
}

// ownedByAnother says whether an entry of managedFields other than this provisioner's Apply entry
// owns the field at or under the field set's keys ("f:spec", `k:{"name":"runtime"}`, ...).
func ownedByAnother(managed []metav1.ManagedFieldsEntry, keys ...string) bool {
	return len(othersOwning(managed, keys...)) > 0
}

// othersOwning are the sets of fields that the entries of managedFields other than this
// provisioner's Apply entry own at the field set's keys.
func othersOwning(managed []metav1.ManagedFieldsEntry, keys ...string) owners {
	var out owners
	for _, mf := range managed {
		if mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			continue
		}
		if at := fieldsAt(mf, keys...); at != nil {
			out = append(out, at)
		}
	}
	return out
}

// fieldsAt is the set of fields that a managedFields entry (of the object itself, not of a
// subresource) owns at or under the field set's keys, or nil when it owns none there.
func fieldsAt(mf metav1.ManagedFieldsEntry, keys ...string) map[string]any {
	if mf.Subresource != "" || mf.FieldsV1 == nil {
		return nil
	}
	var at map[string]any
	if json.Unmarshal(mf.FieldsV1.Raw, &at) != nil {
		return nil
	}
	for _, k := range keys {
		if at, _ = at[k].(map[string]any); at == nil {
			return nil
		}
	}
	return at
}

// repairedEntries is the managedFieldsRewrite after a repair of the lists at paths: our create's or
// repair's Update entry folded into the Apply entry (createdEntryToApply), and every other field
// manager's ownership of those lists dropped. The repair replaced them with the rendered ones, so
// what another manager still owns there is a value the repair did not change: the API server's
// default, which a hand edit had set back (`imagePullPolicy: IfNotPresent` after an `Always`).
// Left owned, it stays drift (addedDiff) after every apply, which cannot remove a default.
func repairedEntries(paths [][]string) managedFieldsRewrite {
	return func(entries []metav1.ManagedFieldsEntry) []jsonPatchOp {
		ops := map[int]jsonPatchOp{}
		for _, op := range createdEntryToApply(entries) {
			i, _ := strconv.Atoi(strings.Split(op.Path, "/")[3])
			ops[i] = op
		}
		for i, mf := range entries {
			if mf.Manager == FieldManager || mf.Subresource != "" || mf.FieldsV1 == nil {
				continue
			}
			var fields map[string]any
			if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
				continue
			}
			dropped := false
			for _, p := range paths {
				dropped = dropOwned(fields, p) || dropped
			}
			switch {
			case !dropped:
			case len(fields) == 0:
				ops[i] = jsonPatchOp{Op: "remove", Path: managedFieldsPath(i, "")}
			default:
				ops[i] = jsonPatchOp{Op: "replace", Path: managedFieldsPath(i, "fieldsV1"), Value: fields}
			}
		}
		// From the last entry to the first, so that a removed entry shifts none still to patch.
		var out []jsonPatchOp
		for _, i := range slices.Backward(slices.Sorted(maps.Keys(ops))) {
			out = append(out, ops[i])
		}
		return out
	}
}

// dropOwned removes the field at path from a managed-fields entry's set (FieldsV1), and the sets
// on the way that it leaves empty. It reports whether the entry owned anything there.
func dropOwned(fields map[string]any, path []string) bool {
	k := "f:" + path[0]
	if len(path) == 1 {
		_, ok := fields[k]
		delete(fields, k)
		return ok
	}
	sub, _ := fields[k].(map[string]any)
	if sub == nil || !dropOwned(sub, path[1:]) {
		return false
	}
	if len(sub) == 0 || len(sub) == 1 && sub["."] != nil {
		delete(fields, k)
	}
	return true
}

// setPath sets m[path[0]][path[1]]... = v, making the maps on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// checkedOwners are the entries of an object's managedFields that CheckResource reads: those that
// editedByAnother reads (of other field managers, or of our own updates, that own a field of one of
// its owned lists), and, when its slots annotation was edited by hand (annotationEditedByHand, which
// needs our Apply entry to tell), the other managers' that own it, for the snapshots, which drop the
// rest: usually none, and this provisioner's Apply entry is most of an object's size.
func checkedOwners(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	lists := listsOf(u)
	slotsEdited := annotationEditedByHand(u.GetManagedFields(), AnnotationSlots)
	var out []metav1.ManagedFieldsEntry
	for _, mf := range u.GetManagedFields() {
		probe := &unstructured.Unstructured{Object: map[string]any{}}
		probe.SetManagedFields([]metav1.ManagedFieldsEntry{mf})
		read := slotsEdited && mf.Manager != FieldManager && fieldsAt(mf, "f:metadata", "f:annotations", "f:"+AnnotationSlots) != nil
		for _, l := range lists {
			read = read || editedByAnother(probe, l.path)
		}
		if read {
			out = append(out, mf)
		}
	}
	return out
}
