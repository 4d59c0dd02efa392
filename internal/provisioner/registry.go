package provisioner

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// ProvisionerInitializer creates a new provisioner.
// Initializers must not reach the network or change anything: they validate and keep their spec, and
// connect lazily on first use, so that building a set is safe during `terraform plan`.
type ProvisionerInitializer func(specJSON []byte, db database.DB, logger *zap.Logger) (Provisioner, error)

// Initializers is a registry of provisioner initializers by type.
var Initializers = make(map[string]ProvisionerInitializer)

// Register registers a new provisioner initializer. It panics on a duplicate type, as registration
// happens in package init functions where a duplicate is a programming error.
func Register(typ string, fn ProvisionerInitializer) {
	if typ == "" || fn == nil {
		panic("provisioner: Register needs a type and an initializer")
	}
	if _, ok := Initializers[typ]; ok {
		panic(fmt.Sprintf("provisioner: type %q is already registered", typ))
	}
	Initializers[typ] = fn
}

// KnownTypes returns the registered provisioner types, sorted.
func KnownTypes() []string { return slices.Sorted(maps.Keys(Initializers)) }

// SetError describes a problem with one provisioner of a set. Field is a JSON path inside that
// provisioner's entry (such as "spec.runtimes[0].slots"), empty when the problem is the entry itself.
type SetError struct {
	Provisioner string
	Field       string
	Err         error
}

func (e *SetError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("provisioner %q: %v", e.Provisioner, e.Err)
	}
	return fmt.Sprintf("provisioner %q: %s: %v", e.Provisioner, e.Field, e.Err)
}

func (e *SetError) Unwrap() error { return e.Err }

// SpecField is the JSON path, in the set, of field path of provisioner name's spec
// ("k8s.spec.kubeconfig_path"): where a FieldError that a built provisioner returns (from a plan-time
// check) points.
func SpecField(name, path string) string { return name + "." + joinPath("spec", path) }

// ErrEmptySet is the error for a set that names no provisioner. ParseSet accepts one, as Rill's
// provisioner.NewSet does; the provider refuses it, with an error rather than a warning, because
// Rill's admin service does not start with one (admin.New refuses a set without its default
// provisioner, and an empty set has none) and no resource could use it.
var ErrEmptySet = errors.New("the provisioner set is empty: it must name at least one provisioner, " +
	"such as {\"pool\": {\"type\": \"static\", \"spec\": {\"runtimes\": [{\"host\": \"http://localhost:9091\", \"slots\": 50}]}}}")

// ParseSet parses a set specification: a JSON object of names to ProvisionerSpecs. Comments (`//`,
// `/* */`) and trailing commas are accepted, so the documented example can be pasted as it is.
// It checks the shape of every entry and that its type is registered, but does not build anything.
// Findings that are only warnings (see ParseSetWithWarnings) are dropped.
func ParseSet(setSpecJSON string) (map[string]ProvisionerSpec, error) {
	specs, _, err := ParseSetWithWarnings(setSpecJSON)
	return specs, err
}

// ParseSetWithWarnings is ParseSet that also returns its warnings, sorted: fields of an entry other
// than "type" and "spec", which Rill's admin service ignores (and so does this provider), and keys
// given twice in one object (whose last value is kept, as Rill keeps it). The set's size,
// nesting depth and UTF-8 encoding are checked before any parser reads it. When an entry is in error,
// the warnings come with the error: a key given twice is worth knowing while fixing the entries (it
// may be why one is in error, its earlier value being the one the user fixed).
func ParseSetWithWarnings(setSpecJSON string) (map[string]ProvisionerSpec, []SetWarning, error) {
	specs, warnings, entryErrs, err := parseSet(setSpecJSON)
	if err != nil {
		return nil, nil, err
	}
	if len(entryErrs) > 0 {
		return nil, warnings, errors.Join(entryErrs...)
	}
	return specs, warnings, nil
}

// withoutLiteral cuts the value out of hujson's "invalid literal: <value>": a bare word that is not
// JSON (an unquoted password pasted into the set, say) is shown nowhere. checkSetText has refused
// the strings hujson would quote so.
func withoutLiteral(msg string) string {
	const literal = "invalid literal"
	if i := strings.Index(msg, literal); i >= 0 {
		return msg[:i] + literal + " (a bare word that is not true, false, null or a number: strings need double quotes)"
	}
	return msg
}

// parseSet is ParseSetWithWarnings that goes on past an entry in error, so that every error of the set
// is reported in one run: it returns the entries that parsed, and a *SetError for each that did not,
// in the order of their names. err is for the set as a whole (not JSON, not an object): then nothing
// else is returned.
func parseSet(setSpecJSON string) (specs map[string]ProvisionerSpec, warnings []SetWarning, entryErrs []error, err error) {
	if err := checkSetText(setSpecJSON); err != nil {
		return nil, nil, nil, err
	}
	std, err := hujson.Standardize([]byte(setSpecJSON))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("provisioner set is not valid JSON: %s", withoutLiteral(err.Error()))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(std, &raw); err != nil {
		// The set is valid JSON (Standardize read it): only its type is wrong. encoding/json's message
		// names the Go type it decodes into; say the set's JSON type instead.
		var v any
		_ = json.Unmarshal(std, &v)
		return nil, nil, nil, fmt.Errorf("provisioner set must be a JSON object of provisioner names to {\"type\": ..., \"spec\": {...}}, got %s", typeName(v))
	}
	if raw == nil {
		return nil, nil, nil, errors.New("provisioner set must be a JSON object of provisioner names to {\"type\": ..., \"spec\": {...}}, got null")
	}
	specs = make(map[string]ProvisionerSpec, len(raw))
	warnings = duplicateKeyWarnings(std)
	for _, name := range sortedKeys(raw) {
		spec, entryWarnings, err := parseEntry(name, raw[name])
		warnings = append(warnings, entryWarnings...)
		if err != nil {
			entryErrs = append(entryErrs, err)
			continue
		}
		specs[name] = spec
	}
	sortWarnings(warnings)
	return specs, warnings, entryErrs, nil
}

// parseEntry parses the entry of provisioner name: its type and spec, and its warnings.
func parseEntry(name string, raw json.RawMessage) (ProvisionerSpec, []SetWarning, error) {
	if strings.TrimSpace(name) == "" {
		return ProvisionerSpec{}, nil, &SetError{Provisioner: name, Err: errors.New("provisioner names must not be empty")}
	}
	members, err := entryMembers(raw)
	if err != nil {
		return ProvisionerSpec{}, nil, &SetError{Provisioner: name, Err: errors.New("must be an object {\"type\": ..., \"spec\": {...}}")}
	}
	var warnings []SetWarning
	// Rill decodes an entry with encoding/json: each key, in the order written, sets "type" or "spec"
	// when it equals it under case folding, so of two spellings the last wins (and warns here); a null
	// "type" leaves it as it was; any other key is ignored.
	var typeKey, specKey string
	var typeJSON, spec json.RawMessage
	for _, m := range members {
		switch {
		case strings.EqualFold(m.key, "type"):
			if string(m.raw) == "null" && typeJSON != nil {
				continue
			}
			if typeKey != "" {
				if err := json.Unmarshal(typeJSON, new(string)); err != nil {
					// encoding/json fails the decode for it, whatever comes later, so Rill refuses the entry.
					return ProvisionerSpec{}, warnings, &SetError{Provisioner: name, Field: typeKey, Err: errors.New("must be a string")}
				}
				if typeKey != m.key {
					warnings = append(warnings, SetWarning{Provisioner: name, Field: typeKey, Message: overriddenMessage(m.key, stringType)})
				}
			}
			typeKey, typeJSON = m.key, m.raw
		case strings.EqualFold(m.key, "spec"):
			if specKey != "" && specKey != m.key {
				// A spec is kept as raw JSON (json.RawMessage, in Rill too): a later one replaces it whole.
				warnings = append(warnings, SetWarning{Provisioner: name, Field: specKey, Message: overriddenMessage(m.key, stringType)})
			}
			specKey, spec = m.key, m.raw
		default:
			warnings = append(warnings, SetWarning{Provisioner: name, Field: m.key, Message: IgnoredFieldMessage + "; an entry has only \"type\" and \"spec\""})
		}
	}
	var typ string
	if typeJSON == nil {
		return ProvisionerSpec{}, warnings, &SetError{Provisioner: name, Field: "type", Err: fmt.Errorf("is required; known types: %s", strings.Join(KnownTypes(), ", "))}
	} else if err := json.Unmarshal(typeJSON, &typ); err != nil {
		return ProvisionerSpec{}, warnings, &SetError{Provisioner: name, Field: "type", Err: errors.New("must be a string")}
	}
	if _, ok := Initializers[typ]; !ok {
		return ProvisionerSpec{}, warnings, &SetError{Provisioner: name, Field: "type", Err: fmt.Errorf("unknown provisioner type %q; known types: %s", typ, strings.Join(KnownTypes(), ", "))}
	}
	if len(spec) == 0 || string(spec) == "null" {
		spec = json.RawMessage("{}")
	}
	if spec[0] != '{' {
		return ProvisionerSpec{}, warnings, &SetError{Provisioner: name, Field: "spec", Err: errors.New("must be a JSON object")}
	}
	return ProvisionerSpec{Type: typ, Spec: spec}, warnings, nil
}

// SplitErrors returns the errors joined in err (by errors.Join, at any depth), or err alone: a set or a
// spec reports every error it finds so, and each is shown on its own.
func SplitErrors(err error) []error {
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, SplitErrors(e)...)
	}
	return out
}

// NewSet initializes a set of provisioners from a JSON specification. The JSON specification should be
// a map of names to ProvisionerSpecs. Every error names the provisioner it concerns. When one
// provisioner fails, those already built are closed. Warnings (see NewSetWithWarnings) are logged.
func NewSet(setSpecJSON string, db database.DB, logger *zap.Logger) (map[string]Provisioner, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	set, warnings, err := NewSetWithWarnings(setSpecJSON, db, logger)
	for _, w := range warnings {
		logger.Warn("provisioner set", zap.String("provisioner", w.Provisioner), zap.String("field", w.Field), zap.String("warning", w.Message))
	}
	return set, err
}

// NewSetWithWarnings is NewSet that also returns the warnings of the set and of every provisioner's
// spec (from provisioners implementing SpecWarner), sorted by provisioner and field. When the set is
// in error, the warnings found come with the error, as ParseSetWithWarnings's do, and those of every
// spec: of those that built, and of those in error (from their error, see WithWarnings).
func NewSetWithWarnings(setSpecJSON string, db database.DB, logger *zap.Logger) (map[string]Provisioner, []SetWarning, error) {
	specs, warnings, errs, err := parseSet(setSpecJSON)
	if err != nil {
		return nil, nil, err
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	// Every entry that parsed is built, even when another is in error, so that one run reports every
	// error of the set.
	set := make(map[string]Provisioner, len(specs))
	for _, name := range sortedKeys(specs) {
		ps := specs[name]
		p, err := Initializers[ps.Type](ps.Spec, db, logger.With(zap.String("provisioner", name), zap.String("type", ps.Type)))
		if err != nil {
			var sw SpecWarner
			if errors.As(err, &sw) {
				warnings = append(warnings, prefixWarnings(name, "spec", sw.SpecWarnings())...)
			}
			for _, e := range SplitErrors(err) {
				var fe *FieldError
				if errors.As(e, &fe) {
					errs = append(errs, &SetError{Provisioner: name, Field: joinPath("spec", fe.Path), Err: fe.Err})
				} else {
					errs = append(errs, &SetError{Provisioner: name, Field: "spec", Err: e})
				}
			}
			continue
		}
		if n, ok := p.(Named); ok {
			n.SetName(name)
		}
		if sw, ok := p.(SpecWarner); ok {
			warnings = append(warnings, prefixWarnings(name, "spec", sw.SpecWarnings())...)
		}
		set[name] = p
	}
	sortWarnings(warnings)
	if len(errs) > 0 {
		for _, built := range set {
			_ = built.Close()
		}
		// By provisioner name; a provisioner's own errors stay in the order its spec reported them.
		slices.SortStableFunc(errs, func(a, b error) int {
			var sa, sb *SetError
			errors.As(a, &sa)
			errors.As(b, &sb)
			return strings.Compare(sa.Provisioner, sb.Provisioner)
		})
		return nil, warnings, errors.Join(errs...)
	}
	return set, warnings, nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
