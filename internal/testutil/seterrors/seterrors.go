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
	var out []string
	for _, e := range provisioner.SplitErrors(err) {
		var se *provisioner.SetError
		if !errors.As(e, &se) {
			t.Fatalf("%T %v is not a *provisioner.SetError", e, e)
		}
		out = append(out, se.Provisioner+" "+se.Field)
	}
	return out
}
