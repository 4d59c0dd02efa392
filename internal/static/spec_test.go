package static

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/seterrors"
)

// Hosts are compared, placed and recorded in canonical form: three spellings of one host are one
// host, so a 1-slot host cannot take a runtime per spelling.
func TestParseSpecCanonicalizesHostsBeforeTheDuplicateCheck(t *testing.T) {
	for _, second := range []string{"http://H1:9091", "http://h1:9091/.", "http://h1.:9091", "HTTP://h1:9091/", "http://h1:9091//"} {
		_, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://h1:9091", "slots": 1}, {"host": "` + second + `", "slots": 1}]}`))
		var fe *provisioner.FieldError
		// The error shows the host as written, and the canonical form it shares with runtimes[0].
		if want := `"` + second + `" is the same host as runtimes[0] ("http://h1:9091" in canonical form`; !errors.As(err, &fe) || fe.Path != "runtimes[1].host" || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want a duplicate error on runtimes[1].host, got %v", second, err)
		}
	}
	spec, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://H1.:80/.", "slots": 1}]}`))
	if err != nil || spec.Runtimes[0].Host != "http://h1" {
		t.Fatalf("canonical host: %+v %v", spec, err)
	}
	// The audience is compared verbatim by the runtime: it defaults to the host as written.
	if spec.Runtimes[0].AudienceURL != "http://H1.:80/." {
		t.Fatalf("audience: %q", spec.Runtimes[0].AudienceURL)
	}
	// Less a trailing slash (docs/guides/rill-compatibility.md, "audience_url omitted").
	spec, err = ParseSpec([]byte(`{"runtimes": [{"host": "http://H1:9091/", "slots": 1}]}`))
	if err != nil || spec.Runtimes[0].AudienceURL != "http://H1:9091" {
		t.Fatalf("audience of a host written with a trailing slash: %+v %v", spec, err)
	}
}

func TestParseSpecErrorsAndWarningsNameTheField(t *testing.T) {
	cases := []struct {
		name, spec, field, text string
		warning                 bool
	}{
		{"negative slots", `{"runtimes": [{"host": "http://a", "slots": -1}]}`, "runtimes[0].slots", "must be between 0 (a drained host) and 2147483647, got -1", false},
		{"slots above the bound", `{"runtimes": [{"host": "http://a", "slots": 2147483648}]}`, "runtimes[0].slots", "must be between 0 (a drained host) and 2147483647, got 2147483648", false},
		{"slots 2^63", `{"runtimes": [{"host": "http://a", "slots": 9223372036854775808}]}`, "runtimes[0].slots", "must be between 0 (a drained host) and 2147483647, got 9223372036854775808", false},
		{"slots 1e20", `{"runtimes": [{"host": "http://a", "slots": 1e20}]}`, "runtimes[0].slots", "must be between 0 (a drained host) and 2147483647, got 1e20", false},
		{"slots true", `{"runtimes": [{"host": "http://a", "slots": true}]}`, "runtimes[0].slots", "expected a whole number, got boolean true", false},
		{"fractional slots", `{"runtimes": [{"host": "http://a", "slots": 1.5}]}`, "runtimes[0].slots", "expected a whole number, got 1.5", false},
		{"host without scheme", `{"runtimes": [{"host": "localhost:9091", "slots": 1}]}`, "runtimes[0].host", "must be an http:// or https:// URL", false},
		{"runtimes is an object", `{"runtimes": {"host": "http://a"}}`, "runtimes", "expected a list, got object", false},
		{"a runtime is a string", `{"runtimes": ["http://a"]}`, "runtimes[0]", "expected an object, got string", false},
		{"slots as a string", `{"runtimes": [{"host": "http://a", "slots": "4"}]}`, "runtimes[0].slots", `expected a whole number, got string "4"`, false},
		{"missing host", `{"runtimes": [{"slots": 2}]}`, "runtimes[0].host", "is required", false},
		{"unknown placement", `{"placement": "random", "runtimes": [{"host": "http://a", "slots": 2}]}`, "placement", `must be "spread" or "pack", got "random"`, false},
		{"unknown runtime field", `{"runtimes": [{"host": "http://a", "slots": 1, "slot": 3}]}`, "runtimes[0].slot", "unknown field, ignored (Rill's admin service ignores it too)", true},
		{"unknown top-level field", `{"runtimes": [{"host": "http://a", "slots": 1}], "region": "eu"}`, "region", "unknown field, ignored", true},
		{"empty pool", `{"runtimes": []}`, "runtimes", "lists no runtime host", true},
		{"password in host", `{"runtimes": [{"host": "http://admin:hunter2@a:9091", "slots": 1}]}`, "runtimes[0].host", "carries a password in its user info", true},
		{"password in audience_url", `{"runtimes": [{"host": "http://a", "slots": 1, "audience_url": "http://u:hunter2@a"}]}`, "runtimes[0].audience_url", "carries a password in its user info", true},
		// audience_url takes any string: one that is not a URL with a host is read as text.
		{"password in an audience_url of a bad port", `{"runtimes": [{"host": "http://a", "slots": 1, "audience_url": "https://u:secret@host:abc"}]}`, "runtimes[0].audience_url", "carries a password in its user info", true},
		{"password in an audience_url with a space", `{"runtimes": [{"host": "http://a", "slots": 1, "audience_url": "https://u:secret@ho st/"}]}`, "runtimes[0].audience_url", "carries a password in its user info", true},
		{"password in an audience_url without scheme", `{"runtimes": [{"host": "http://a", "slots": 1, "audience_url": "u:secret@host"}]}`, "runtimes[0].audience_url", "carries a password in its user info", true},
		{"no runtimes at all", `{}`, "runtimes", "lists no runtime host", true},
		{"slots missing", `{"runtimes": [{"host": "http://a", "slots": 1}, {"host": "http://b"}]}`, "runtimes[1].slots", "is missing: the host offers 0 slots", true},
		{"slots null", `{"runtimes": [{"host": "http://a", "Slots": null}]}`, "runtimes[0].slots", "is null: the host offers 0 slots", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ParseSpec([]byte(tc.spec))
			if !tc.warning {
				var fe *provisioner.FieldError
				if !errors.As(err, &fe) || fe.Path != tc.field || !strings.Contains(err.Error(), tc.text) {
					t.Fatalf("want an error on %s containing %q, got %v", tc.field, tc.text, err)
				}
				// That error alone: an entry that is not an object had "host is required" and "slots
				// is missing" besides.
				var sw provisioner.SpecWarner
				if n := len(provisioner.SplitErrors(err)); n != 1 || errors.As(err, &sw) && len(sw.SpecWarnings()) > 0 {
					t.Fatalf("want only the error on %s, got %d errors (%v) and warnings %v", tc.field, n, err, sw)
				}
				return
			}
			if err != nil {
				t.Fatalf("want only a warning, got %v", err)
			}
			for _, w := range spec.warnings {
				if w.Path == tc.field && strings.Contains(w.Message, tc.text) {
					return
				}
			}
			t.Fatalf("want a warning on %s containing %q, got %v", tc.field, tc.text, spec.warnings)
		})
	}
}

// Every error of a spec is reported at once, each naming its field.
func TestParseSpecReportsEveryError(t *testing.T) {
	_, err := ParseSpec([]byte(`{"placement": "x", "runtimes": [{"host": "http://a", "slots": -1}, {"slots": 1}, {"host": "ftp://b", "slots": 1, "audience_url": "aud"}, {"host": "http://A", "slots": 1}]}`))
	got := seterrors.Paths(t, err)
	want := "placement runtimes[0].slots runtimes[1].host runtimes[2].host runtimes[3].host"
	if strings.Join(got, " ") != want {
		t.Fatalf("errors on %q, want %q (%v)", strings.Join(got, " "), want, err)
	}
}

// Every value of the wrong type is reported at once too, each naming its field: the decoder goes on
// past the first, and a slots too large says the slots' range there as well.
func TestParseSpecReportsEveryTypeError(t *testing.T) {
	_, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://a", "slots": "x"}, {"host": 5, "slots": 1}, {"host": "http://c", "slots": 1e20, "data_dir": true}], "placement": 3}`))
	var got []string
	for _, e := range provisioner.SplitErrors(err) {
		var fe *provisioner.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%T %v is not a *FieldError", e, e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		`runtimes[0].slots: expected a whole number, got string "x"`,
		"runtimes[1].host: expected a string, got number",
		"runtimes[2].slots: must be between 0 (a drained host) and 2147483647, got 1e20",
		"runtimes[2].data_dir: expected a string, got boolean",
		"placement: expected a string, got number",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A value of the wrong type does not hide the other fields' errors: they come in the same run, and
// the field in error is not reported twice (a host of the wrong type is not "required" as well).
// Before, the decoder's errors ended the checks, and the bad host of a second entry showed only
// once the first entry's slots were fixed (found by a walkthrough of the migration guide).
func TestParseSpecReportsTypeErrorsWithTheOtherFieldsErrors(t *testing.T) {
	_, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://r1:9091", "slots": "50"}, {"host": "r2:9091", "slots": 5}, {"host": 5, "slots": -1}, {"host": "http://R1:9091"}]}`))
	got := seterrors.Paths(t, err)
	want := "runtimes[0].slots runtimes[2].host runtimes[1].host runtimes[2].slots runtimes[3].host"
	if strings.Join(got, " ") != want {
		t.Fatalf("errors on %q, want %q (%v)", strings.Join(got, " "), want, err)
	}
}

// A host given 0 slots on purpose is drained without a warning; one whose slots are missing or null
// is warned about (TestParseSpecErrorsAndWarningsNameTheField).
func TestExplicitZeroSlotsIsNoWarning(t *testing.T) {
	spec, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://a", "slots": 0}, {"host": "http://b", "SLOTS": 0}]}`))
	if err != nil || len(spec.warnings) != 0 {
		t.Fatalf("got %v %v", spec.warnings, err)
	}
}

// Two spellings of slots on one host read as Rill reads them (the last wins; a null after a value
// changes nothing), on every run, and the unset-slots warning agrees with the value read.
func TestTwoSpellingsOfSlotsReadAsRillReadsThem(t *testing.T) {
	for text, want := range map[string]struct {
		slots   int
		warning string
	}{
		`{"runtimes": [{"host": "http://a", "slots": 1, "Slots": 50}]}`:   {50, `runtimes[0].slots: not used: "Slots", later`},
		`{"runtimes": [{"host": "http://a", "SLOTS": 1, "Slots": 5}]}`:    {5, `runtimes[0].SLOTS: not used: "Slots", later`},
		`{"runtimes": [{"host": "http://a", "SLOTS": null, "Slots": 2}]}`: {2, `runtimes[0].SLOTS: not used: "Slots", later`},
		`{"runtimes": [{"host": "http://a", "Slots": 2, "slots": null}]}`: {2, ""},
		// The later list applies element by element: host b keeps the 5 slots of the earlier element.
		`{"runtimes": [{"host": "http://a", "slots": 5}], "Runtimes": [{"host": "http://b"}]}`: {5, `runtimes: "Runtimes", later`},
	} {
		for range 20 {
			spec, err := ParseSpec([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, w := range spec.warnings {
				warnings = append(warnings, w.String())
			}
			wantWarnings := 0
			if want.warning != "" {
				wantWarnings = 1
			}
			if spec.Runtimes[0].Slots != want.slots || len(warnings) != wantWarnings || (wantWarnings == 1 && !strings.HasPrefix(warnings[0], want.warning)) {
				t.Fatalf("%s: slots %d, warnings %q; want %d, %q", text, spec.Runtimes[0].Slots, warnings, want.slots, want.warning)
			}
		}
	}
}

// A drained host (0 slots, as Rill allows) keeps its runtimes and takes no new one.
func TestDrainedHostTakesNoNewRuntime(t *testing.T) {
	p, _, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 0}, {"host": "http://b", "slots": 1}]}`)
	r, err := provision(t, p, "rt-1", 1)
	if err != nil || hostOf(r) != "http://b" {
		t.Fatalf("placed %v, %v", r, err)
	}
	if _, err := provision(t, p, "rt-2", 1); !errors.Is(err, ErrInsufficientCapacity) {
		t.Fatalf("want no capacity, got %v", err)
	}
}

// The share comparison of placement cannot overflow, whatever the host sizes.
func TestCompareProductsDoesNotOverflow(t *testing.T) {
	big := math.MaxInt64
	if compareProducts(big, big, big, big-1) != 1 || compareProducts(big-1, big, big, big) != -1 || compareProducts(big, 2, 2, big) != 0 {
		t.Fatal("128-bit comparison is wrong")
	}
	p, _, _ := newPool(t, `{"runtimes": [{"host": "http://a", "slots": 2147483647}, {"host": "http://b", "slots": 2147483647}]}`)
	for i, want := range []string{"http://a", "http://b", "http://a"} {
		r, err := provision(t, p, "rt-"+string(rune('0'+i)), 214748364)
		if err != nil || hostOf(r) != want {
			t.Fatalf("provision %d: %v %v, want %s", i, r, err, want)
		}
	}
}

// A spec in error keeps its warnings (provisioner.WithWarnings): the field Rill ignores, and the
// spelling of slots that the later one overrides, come with the errors, those of the decoder (slots too
// large, rewritten to the slots' range) and those of the checks (placement) alike.
func TestASpecInErrorKeepsItsWarnings(t *testing.T) {
	for spec, want := range map[string]struct{ err, warnings string }{
		`{"placement": "x", "runtimes": [{"host": "http://a", "slots": 1, "slot": 2}]}`: {
			`placement: must be "spread" or "pack", got "x"`, `runtimes[0].slot: ` + provisioner.IgnoredFieldMessage},
		`{"runtimes": [{"host": "http://a", "Slots": 1, "slots": 9223372036854775808}]}`: {
			`runtimes[0].slots: must be between 0 (a drained host) and 2147483647, got 9223372036854775808`,
			`runtimes[0].Slots: not used: "slots", later in the same object, names the same field`},
	} {
		_, err := New([]byte(spec), nil, nil)
		var fe *provisioner.FieldError
		if errs := provisioner.SplitErrors(err); len(errs) != 1 || !errors.As(errs[0], &fe) || errs[0].Error() != want.err {
			t.Errorf("%s: errors %v, want %s", spec, errs, want.err)
		}
		var sw provisioner.SpecWarner
		if !errors.As(err, &sw) {
			t.Errorf("%s: the error carries no warnings", spec)
			continue
		}
		if w := sw.SpecWarnings(); len(w) != 1 || !strings.HasPrefix(w[0].String(), want.warnings) {
			t.Errorf("%s: warnings %v, want %s", spec, w, want.warnings)
		}
	}
}
