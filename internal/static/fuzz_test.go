package static

import (
	"errors"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/hosturl"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// FuzzParseSpec: a static spec either validates (every host a canonical URL, slots within bounds,
// hosts unique) or fails with a FieldError naming the field; never a panic.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		`{"runtimes": [{"host": "http://localhost:9091", "slots": 50, "data_dir": "/mnt/data", "audience_url": "http://localhost:8081"}]}`,
		`{"runtimes": [{"host": "http://a", "slots": 1}, {"host": "http://b", "slots": 2}], "placement": "pack"}`,
		`{"runtimes": [{"host": "http://a", "slots": 1}, {"host": "http://a/", "slots": 2}]}`,
		`{"runtimes": []}`, `{}`, `{"runtimes": [{}]}`, `{"runtimes": [{"host": "a", "slots": 1}]}`,
		`{"runtimes": [{"host": "http://a", "slots": "1"}]}`, `{"runtimes": [{"host": "http://a", "slots": 1.5}]}`,
		`{"runtimes": [{"host": "http://a", "slots": 1, "x": 1}]}`, `{"placement": 3}`, `[]`, `null`, `{"runtimes": null}`,
		`{"runtimes": [{"host": "http://H1:9091", "slots": 1}, {"host": "http://h1.:9091/.", "slots": 1}]}`,
		`{"runtimes": [{"host": "http://a", "slots": 9223372036854775807}]}`, `{"runtimes": [{"host": "http://[::1]:80", "slots": 0}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		spec, err := ParseSpec(in)
		if err != nil {
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a FieldError: %T %v", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, rt := range spec.Runtimes {
			canonical, err := hosturl.Canonical(rt.Host)
			if rt.Slots < 0 || rt.Slots > MaxHostSlots || err != nil || canonical != rt.Host || seen[rt.Host] {
				t.Fatalf("accepted an invalid runtime %+v", rt)
			}
			seen[rt.Host] = true
		}
	})
}
