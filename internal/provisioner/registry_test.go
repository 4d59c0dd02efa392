package provisioner_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/static"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/seterrors"
)

func TestRegisterRefusesADuplicateType(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"static" is already registered`) {
			t.Fatalf("want a panic naming the type, got %v", r)
		}
	}()
	provisioner.Register("static", func([]byte, database.DB, *zap.Logger) (provisioner.Provisioner, error) { return nil, nil })
}

func TestNewSetErrorsNameTheProvisionerAndField(t *testing.T) {
	cases := map[string]struct{ set, provisioner, field, text string }{
		"unknown type lists known types":  {`{"k8s": {"type": "kube", "spec": {}}}`, "k8s", "type", `unknown provisioner type "kube"; known types: `},
		"spec field":                      {`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": -1}]}}}`, "pool", "spec.runtimes[0].slots", "must be between 0"},
		"entry is a string":               {`{"p": "static"}`, "p", "", "must be an object"},
		"entry without type":              {`{"p": {"spec": {}}}`, "p", "type", "is required; known types: "},
		"type is a number":                {`{"p": {"type": 7, "spec": {}}}`, "p", "type", "must be a string"},
		"type is a number, then a string": {`{"p": {"TYPE": 7, "type": "static", "spec": {}}}`, "p", "TYPE", "must be a string"}, // Rill refuses it too
		"spec is a list":                  {`{"p": {"type": "static", "spec": []}}`, "p", "spec", "must be a JSON object"},
		"initializer error":               {`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1}]}}}`, "pool", "spec", "ledger"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := provisioner.NewSet(tc.set, nil, nil)
			var se *provisioner.SetError
			if !errors.As(err, &se) {
				t.Fatalf("want a *SetError, got %T %v", err, err)
			}
			if se.Provisioner != tc.provisioner || se.Field != tc.field || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("got provisioner %q field %q error %q", se.Provisioner, se.Field, err)
			}
			if !strings.HasPrefix(err.Error(), `provisioner "`+tc.provisioner+`"`) {
				t.Fatalf("error does not start with the provisioner's name: %q", err)
			}
		})
	}
}

// A set that is not a JSON object of provisioner names is refused saying what it must be.
func TestNewSetRefusesASetThatIsNotAnObjectOfProvisioners(t *testing.T) {
	for set, want := range map[string]string{
		`{"p": {"type": "static",`: "provisioner set is not valid JSON",
		`[{"type": "static"}]`:     "provisioner set must be a JSON object of provisioner names",
		`null`:                     "provisioner set must be a JSON object of provisioner names",
	} {
		if _, err := provisioner.NewSet(set, nil, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewSet(%s) = %v, want an error containing %q", set, err, want)
		}
	}
}

func TestKnownTypesIncludesRegisteredOnes(t *testing.T) {
	found := false
	for _, typ := range provisioner.KnownTypes() {
		found = found || typ == "static"
	}
	if !found {
		t.Fatalf("KnownTypes() = %v", provisioner.KnownTypes())
	}
}

// Every error of a set is reported at once, each naming its provisioner and field: the entries'
// errors (an unknown type, a spec that is not an object) and every spec error of the entries that
// could be built, in the order of the provisioners' names.
func TestNewSetReportsEveryError(t *testing.T) {
	set := `{
		"p": {"type": "static", "spec": {"placement": "x", "runtimes": [{"host": "http://a", "slots": -1}]}},
		"q": {"type": "nope"},
		"r": {"type": "static", "spec": []}
	}`
	for _, tc := range []struct {
		name  string
		build func() error
		want  []string
	}{
		{"NewSet", func() error { _, err := provisioner.NewSet(set, nil, nil); return err }, []string{"p spec.placement", "p spec.runtimes[0].slots", "q type", "r spec"}},
		{"ParseSet", func() error { _, err := provisioner.ParseSet(set); return err }, []string{"q type", "r spec"}},
	} {
		name, want := tc.name, tc.want
		err := tc.build()
		got := seterrors.Fields(t, err)
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s: errors on %q, want %q (%v)", name, got, want, err)
		}
	}
}

// A set of the wrong JSON type is refused in JSON's terms, not Go's.
func TestASetOfTheWrongTypeSaysItsJSONType(t *testing.T) {
	for set, want := range map[string]string{`[]`: "got list", `"p"`: "got string", `7`: "got number", `true`: "got boolean"} {
		_, err := provisioner.ParseSet(set)
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "Go value") {
			t.Errorf("ParseSet(%s) = %v, want an error ending in %q", set, err, want)
		}
	}
}

// A set in error still returns its warnings, so that the keys given twice and the fields ignored are
// shown with the errors rather than only once the errors are fixed: those of the set's text when an
// entry is in error, and when a spec is.
// TestASpecInErrorKeepsItsWarnings: the warnings of a spec that does not build come with its errors, as
// the set's own do; they dropped whenever the spec was in error, and here "Slots" overriding the
// slots the user wrote is what explains the error.
func TestASpecInErrorKeepsItsWarnings(t *testing.T) {
	set := `{"p": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1, "Slots": -1}]}}}`
	_, warnings, err := provisioner.NewSetWithWarnings(set, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `spec.runtimes[0].slots: must be between 0`) {
		t.Fatalf("want the slots' error, got %v", err)
	}
	if got := seterrors.Fields(t, err); len(got) != 1 || got[0] != "p spec.runtimes[0].slots" {
		t.Errorf("errors %v, want only p's slots", got)
	}
	if len(warnings) != 1 || warnings[0].Provisioner != "p" || warnings[0].Field != "spec.runtimes[0].slots" ||
		!strings.HasPrefix(warnings[0].Message, `not used: "Slots", later in the same object, names the same field`) {
		t.Errorf("want the warning that \"Slots\" overrides slots, got %v", warnings)
	}
}

// TestWithWarnings: the error WithWarnings returns is the error it wraps to SplitErrors, errors.As and
// errors.Is, and hands its warnings to errors.As as a SpecWarner.
func TestWithWarnings(t *testing.T) {
	a, b := provisioner.Errorf("x", "bad"), errors.New("other")
	w := []provisioner.FieldWarning{{Path: "y", Message: "ignored"}}
	err := provisioner.WithWarnings(errors.Join(a, b), w)
	if err.Error() != "x: bad\nother" {
		t.Errorf("Error() = %q", err.Error())
	}
	if got := provisioner.SplitErrors(err); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("SplitErrors = %v, want the two errors joined", got)
	}
	var fe *provisioner.FieldError
	if !errors.As(err, &fe) || fe.Path != "x" || !errors.Is(err, b) {
		t.Errorf("errors.As/Is do not see the errors inside %v", err)
	}
	var sw provisioner.SpecWarner
	if !errors.As(err, &sw) || len(sw.SpecWarnings()) != 1 || sw.SpecWarnings()[0] != w[0] {
		t.Errorf("want the warnings through errors.As, got %v", sw)
	}
	if provisioner.WithWarnings(nil, w) != nil {
		t.Error("WithWarnings(nil, ...) is not nil")
	}
	if provisioner.WithWarnings(a, nil) != a {
		t.Error("WithWarnings(err, nil) is not err")
	}
}

func TestASetInErrorKeepsItsWarnings(t *testing.T) {
	set := `{
		"p": {"type": "static", "spec": {"runtimes": [{"host": "http://a", "slots": 1, "slots": -1}]}, "x": 1},
		"q": {"type": "nope", "spec": {}, "spec": {}}
	}`
	want := `provisioner "p": spec.runtimes[0].slots: ` + provisioner.DuplicateKeyMessage +
		"|" + `provisioner "p": x: ` + provisioner.IgnoredFieldMessage + `; an entry has only "type" and "spec"` +
		"|" + `provisioner "q": spec: ` + provisioner.DuplicateKeyMessage
	for name, build := range map[string]func() ([]provisioner.SetWarning, error){
		"ParseSetWithWarnings": func() ([]provisioner.SetWarning, error) {
			_, w, err := provisioner.ParseSetWithWarnings(set)
			return w, err
		},
		"NewSetWithWarnings": func() ([]provisioner.SetWarning, error) {
			_, w, err := provisioner.NewSetWithWarnings(set, nil, nil)
			return w, err
		},
	} {
		warnings, err := build()
		if err == nil {
			t.Fatalf("%s: want the errors of p and q", name)
		}
		var got []string
		for _, w := range warnings {
			got = append(got, w.String())
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: warnings\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
		}
	}
}
