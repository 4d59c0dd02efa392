package static

import (
	"strconv"
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
