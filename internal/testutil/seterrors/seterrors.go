// Package seterrors takes apart the errors a provisioner set reports, for the tests of the set and of
// every provisioner type: one home for the check that each error joined by NewSet names its
// provisioner and field.
package seterrors

import (
	"errors"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Fields returns "<provisioner> <field>" for every error joined in err (provisioner.SplitErrors), in
// their order. An error that is not a *provisioner.SetError fails t: every error of a set names its
// provisioner.
func Fields(t testing.TB, err error) []string {
	t.Helper()
	return each(t, err, func(se *provisioner.SetError) string { return se.Provisioner + " " + se.Field })
}

// Paths returns the field path of every error joined in err (provisioner.SplitErrors), in their order:
// the errors of one spec, before the set names its provisioner. An error that is not a
// *provisioner.FieldError fails t: every error of a spec names its field.
func Paths(t testing.TB, err error) []string {
	t.Helper()
	return each(t, err, func(fe *provisioner.FieldError) string { return fe.Path })
}

// each names every error joined in err, each of which must be an E.
func each[E error](t testing.TB, err error, name func(E) string) []string {
	t.Helper()
	var out []string
	for _, e := range provisioner.SplitErrors(err) {
		var target E
		if !errors.As(e, &target) {
			t.Fatalf("%T %v is not a %T", e, e, target)
		}
		out = append(out, name(target))
	}
	return out
}
