package kubernetes

import (
	"encoding/json"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// templateFuncs is what manifest templates may call: Sprig's function map (the library Rill's admin
// service renders its templates with, so Rill's templates render here as in Rill) without the two
// functions that read the provider's process environment (env, expandenv: a template must not leak
// the host's secrets into a cluster), plus two of this provider's own, sanitizeLabel and toJSON, which
// Rill's admin service lacks (its function map is Sprig's less env and expandenv, and nothing else).
func templateFuncs() template.FuncMap {
	fm := sprig.TxtFuncMap()
	delete(fm, "env")
	delete(fm, "expandenv")
	fm["sanitizeLabel"] = sanitizeLabel
	// toJSON renders a value as JSON, which YAML accepts inline (e.g. a map of annotations). Sprig's
	// toJson swallows marshalling errors; this one reports them.
	fm["toJSON"] = func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	return fm
}

var (
	labelInvalidRun = regexp.MustCompile(`[^a-z0-9._-]+`)
	labelEdge       = regexp.MustCompile(`^[^a-z0-9]+|[^a-z0-9]+$`)
)

// sanitizeLabel turns any string (an organization or project name, say) into a valid Kubernetes label
// value: lower case, every run of other characters than letters, digits, '.', '_' and '-' becomes
// one '-', at most 63 characters, and it starts and ends with a letter or digit (so it may come out
// empty). This provider's addition: a template calling it does not parse in Rill's admin service.
func sanitizeLabel(s string) string {
	v := labelInvalidRun.ReplaceAllString(strings.ToLower(s), "-")
	if r := []rune(v); len(r) > 63 {
		v = string(r[:63])
	}
	return labelEdge.ReplaceAllString(v, "")
}
