package provisioner

import (
	"errors"
	"fmt"
)

// ErrFromEnvironment is wrapped by an initializer's error that comes from the environment of the
// process building the set rather than from the set's text: the value of an environment variable a
// spec names (clickhouse-static's dsn_env), whether a file it names can be read (kubernetes's
// template_paths), the home directory a "~" in a path stands for. The same set may be right where it
// is applied: `terraform validate` runs on a machine, or in a CI job, that lacks the apply's secrets
// and files, so the provider reports none of these there (it does wherever it configures the set).
// What a file that reads says (a template that does not parse) is not marked: it is checked the same
// wherever the file is.
var ErrFromEnvironment = errors.New("depends on the environment of the process")

// EnvironmentErrorf is Errorf for an error that comes from the environment (ErrFromEnvironment): a
// FieldError for path whose text is the format's alone.
func EnvironmentErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Err: FromEnvironment(fmt.Errorf(format, args...))}
}

// FromEnvironment returns err marked as coming from the environment (ErrFromEnvironment): its text,
// and what errors.As finds in it, are err's. Mark each error on its own, the Err of a FieldError:
// NewSetWithWarnings keeps a FieldError's Err, not the FieldError, and SplitErrors does not look
// into a marked join.
func FromEnvironment(err error) error {
	if err == nil {
		return nil
	}
	return &environmentError{err: err}
}

type environmentError struct{ err error }

func (e *environmentError) Error() string { return e.err.Error() }

// Unwrap returns err alone, not ErrFromEnvironment beside it: SplitErrors would split the two.
func (e *environmentError) Unwrap() error { return e.err }

// Is reports the mark (errors.Is(err, ErrFromEnvironment)).
func (e *environmentError) Is(target error) bool { return target == ErrFromEnvironment }
