package fakerilladmin

import (
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// The fake's templates stand for templates Rill's admin service renders, so they may call only the
// functions it has: Sprig's, less env and expandenv (admin/provisioner/kubernetes/kubernetes.go in
// rilldata/rill builds its function map so, and adds none). One calling a function Rill lacks (as
// they once called sanitizeLabel, the provider's own) fails to parse in Rill, and a test adopting
// what it rendered would adopt objects Rill never made.
func TestTemplatesCallOnlyTheFunctionsRillHas(t *testing.T) {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	for _, f := range TemplateFiles {
		text, err := templatesFS.ReadFile("templates/" + f.File)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := template.New(f.File).Funcs(funcs).Parse(string(text)); err != nil {
			t.Errorf("%s does not parse with Rill's functions: %v", f.File, err)
		}
	}
}
