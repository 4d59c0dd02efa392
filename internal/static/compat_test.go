package static

import (
	"strconv"
	"strings"
	"testing"
)

// audience_url is the runtime's JWT audience, which Rill passes to the runtime's config as it is
// written, whatever it is: any non-empty string is accepted, without a word, and kept verbatim.
// Before, one that was not an http(s) URL was an error, refusing sets Rill accepts.
func TestAudienceURLIsAnyStringAsInRill(t *testing.T) {
	for _, aud := range []string{"aud", "rill-runtime", "urn:rill:runtime", " http://h1:8081/ "} {
		spec, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://a", "slots": 2, "audience_url": ` + strconv.Quote(aud) + `}]}`))
		if err != nil {
			t.Fatalf("audience_url %q: %v", aud, err)
		}
		if got := spec.Runtimes[0].AudienceURL; got != aud {
			t.Errorf("audience_url %q became %q", aud, got)
		}
		if w := spec.warnings; len(w) != 0 {
			t.Errorf("audience_url %q: warnings %v", aud, w)
		}
	}
}

// Where this provider reads a static spec differently from Rill's admin service, as the
// compatibility guide says: a whole number written as a decimal or with an exponent (Rill's
// encoding/json refuses "cannot unmarshal number 2.0") is read as the whole number; data_dir, which
// Rill's static spec does not know (and so ignores whatever it holds), must be a string here.
func TestStaticSpecReadsWhereRillDiffers(t *testing.T) {
	for _, slots := range []string{"2.0", "2e0", "0.2e1"} {
		spec, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://a", "slots": ` + slots + `}]}`))
		if err != nil || spec.Runtimes[0].Slots != 2 {
			t.Errorf("slots %s: %+v, %v; want 2", slots, spec, err)
		}
	}
	_, err := ParseSpec([]byte(`{"runtimes": [{"host": "http://a", "slots": 2, "data_dir": 5}]}`))
	if err == nil || !strings.Contains(err.Error(), "runtimes[0].data_dir: expected a string, got number") {
		t.Errorf("data_dir 5: %v", err)
	}
}
