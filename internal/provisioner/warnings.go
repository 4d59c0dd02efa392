package provisioner

import (
	"fmt"
	"sort"
	"strings"
)

// FieldWarning is a finding about one field of a spec that does not stop the provisioner from working:
// a field Rill's admin service ignores too (a typo, or a field of a newer version), or a value Rill
// accepts that behaves differently from what one may expect. Path is dotted like FieldError's.
type FieldWarning struct {
	Path    string
	Message string
}

func (w FieldWarning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}

// SpecWarner is implemented by provisioners whose spec had findings worth a warning, and by the errors of
// initializers whose spec is in error (WithWarnings). NewSetWithWarnings collects them right after
// building each provisioner; the provider shows them as plan-time warnings.
type SpecWarner interface {
	SpecWarnings() []FieldWarning
}

// SetWarning is a FieldWarning about one provisioner of a set. Field is a JSON path inside that
// provisioner's entry ("spec.runtimes[0].slot"), like SetError's.
type SetWarning struct {
	Provisioner string
	Field       string
	Message     string
}

func (w SetWarning) String() string {
	if w.Field == "" {
		return fmt.Sprintf("provisioner %q: %s", w.Provisioner, w.Message)
	}
	return fmt.Sprintf("provisioner %q: %s: %s", w.Provisioner, w.Field, w.Message)
}

// IgnoredFieldMessage is the warning for a field that is not part of a spec. Such a field is ignored,
// as Rill's admin service ignores it (it decodes specs with encoding/json), so a set written for Rill
// keeps working; the warning catches typos.
const IgnoredFieldMessage = "unknown field, ignored (Rill's admin service ignores it too); check its spelling"

// prefixWarnings returns the warnings of one provisioner as SetWarnings, under prefix ("spec").
func prefixWarnings(provisioner, prefix string, ws []FieldWarning) []SetWarning {
	out := make([]SetWarning, 0, len(ws))
	for _, w := range ws {
		out = append(out, SetWarning{Provisioner: provisioner, Field: joinPath(prefix, w.Path), Message: w.Message})
	}
	return out
}

// sortWarnings orders warnings by provisioner, then field, so that plans show them in a stable order.
func sortWarnings(ws []SetWarning) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Provisioner != ws[j].Provisioner {
			return ws[i].Provisioner < ws[j].Provisioner
		}
		return strings.Compare(ws[i].Field, ws[j].Field) < 0
	})
}

// WithWarnings returns err carrying the warnings of the spec it is about: how an initializer hands back
// its spec's warnings with its error, the ProvisionerInitializer returning no provisioner to be a
// SpecWarner then. A warning may be what explains the error (a key spelled in another case overriding
// the value the user wrote), so NewSetWithWarnings returns them with the set's errors. The result is
// err to SplitErrors, errors.As and errors.Is; it is err itself when there is no warning, nil when err is.
func WithWarnings(err error, warnings []FieldWarning) error {
	if err == nil || len(warnings) == 0 {
		return err
	}
	return &warnedError{err: err, warnings: warnings}
}

// warnedError is an error with the warnings of its spec (WithWarnings).
type warnedError struct {
	err      error
	warnings []FieldWarning
}

func (e *warnedError) Error() string { return e.err.Error() }

// Unwrap returns err as a list, so that SplitErrors goes on into the errors it joins.
func (e *warnedError) Unwrap() []error { return []error{e.err} }

// SpecWarnings implements SpecWarner.
func (e *warnedError) SpecWarnings() []FieldWarning { return e.warnings }
