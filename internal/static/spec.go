package static

import (
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/rill-provisioner/terraform-provider-rill/internal/hosturl"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Placement strategies for new runtimes.
const (
	// PlacementSpread puts a new runtime on the least used eligible host (by share of its slots in
	// use), ties broken by spec order. It is the default: it keeps load even across hosts.
	PlacementSpread = "spread"
	// PlacementPack puts a new runtime on the fullest eligible host, ties broken by spec order. It keeps
	// whole hosts free, for pools that scale hosts down.
	PlacementPack = "pack"
)

// MaxHostSlots is the most slots a host may offer. Rill accepts any int; this bound keeps every sum
// over a pool (rill_provisioners' totals, the placement's share comparison) far from overflowing,
// and no host runs two billion runtimes.
const MaxHostSlots = math.MaxInt32

// slotsRange is the error for a host's slots out of range (formatted with MaxHostSlots and the number
// as written).
const slotsRange = "must be between 0 (a drained host) and %d, got %s"

// Spec is the JSON spec of a static pool.
type Spec struct {
	Runtimes  []RuntimeSpec `json:"runtimes"`
	Placement string        `json:"placement"`

	// warnings are what parsing found worth a warning (fields Rill ignores too, an empty pool).
	warnings []provisioner.FieldWarning
}

// RuntimeSpec is one pre-provisioned runtime host of the pool.
type RuntimeSpec struct {
	// Host is the runtime's base URL, e.g. "http://localhost:9091", in canonical form after ParseSpec
	// (see hosturl.Canonical): the ledger records it so.
	Host string `json:"host"`
	// Slots is how many slots the host offers; 0 drains it (its runtimes stay, no new one is placed).
	Slots int `json:"slots"`
	// DataDir is where the runtime keeps its data (informational for static pools).
	DataDir string `json:"data_dir"`
	// AudienceURL is the JWT audience of the runtime, any string (Rill passes it on as written); the
	// host when empty.
	AudienceURL string `json:"audience_url"`
}

// ParseSpec decodes and validates a static pool spec. Errors are provisioner.FieldErrors naming the
// field. Fields Rill ignores are ignored here too, and reported by the provisioner's SpecWarnings, or
// with the error (provisioner.WithWarnings) when the spec is in error.
func ParseSpec(specJSON []byte) (*Spec, error) {
	spec := &Spec{}
	warnings, err := provisioner.DecodeSpecCompat(specJSON, spec)
	spec.warnings = warnings
	// Every error is collected, so that one run reports them all: the decoder's (every field of the
	// wrong type, left at its zero value) and then the checks of every other field. failed holds the
	// paths the decoder refused, which the checks skip (a host of the wrong type is not also
	// "required"); a spec or runtimes list that did not decode at all stops here.
	var errs []error
	failed := map[string]bool{}
	for _, e := range provisioner.SplitErrors(err) {
		var fe *provisioner.FieldError
		if !errors.As(e, &fe) || fe.Path == "" || fe.Path == "runtimes" {
			return nil, provisioner.WithWarnings(err, warnings)
		}
		// A slots too large to decode is against the slots' range, which its error says rather than
		// the decoder's.
		var oor *provisioner.OutOfRangeError
		if errors.As(e, &oor) && strings.HasPrefix(fe.Path, "runtimes[") && strings.HasSuffix(fe.Path, "].slots") {
			e = provisioner.Errorf(fe.Path, slotsRange, MaxHostSlots, oor.Number)
		}
		failed[fe.Path] = true
		errs = append(errs, e)
	}
	switch spec.Placement {
	case "":
		spec.Placement = PlacementSpread
	case PlacementSpread, PlacementPack:
	default:
		errs = append(errs, provisioner.Errorf("placement", "must be %q or %q, got %q", PlacementSpread, PlacementPack, spec.Placement))
	}
	if len(spec.Runtimes) == 0 {
		spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: "runtimes",
			Message: "lists no runtime host: no runtime can be placed in this pool (Rill accepts an empty pool too)"})
	}
	unset := unsetSlots(specJSON)
	seen := make(map[string]int, len(spec.Runtimes))
	for i := range spec.Runtimes {
		rt := &spec.Runtimes[i]
		if failed["runtimes["+strconv.Itoa(i)+"]"] {
			// Not an object ("runtimes": ["http://h:9091"]): its error says so, and it has no host
			// or slots to be missing.
			continue
		}
		path := func(field string) string { return "runtimes[" + strconv.Itoa(i) + "]." + field }
		written := strings.TrimRight(strings.TrimSpace(rt.Host), "/")
		canonical, hostErr := hosturl.Canonical(rt.Host)
		switch {
		case failed[path("host")]: // the decoder's error says it
		case written == "":
			errs = append(errs, provisioner.Errorf(path("host"), "is required (the runtime's base URL, e.g. \"http://localhost:9091\")"))
		case hostErr != nil:
			errs = append(errs, provisioner.Errorf(path("host"), "%v", &urlError{rt.Host}))
		default:
			// The error shows the host as the user wrote it (the canonical form may not appear in the
			// set at all), and the canonical form that makes it a duplicate.
			asWritten := rt.Host
			rt.Host = canonical
			if prev, dup := seen[rt.Host]; dup {
				errs = append(errs, provisioner.Errorf(path("host"), "%q is the same host as runtimes[%d] (%q in canonical form: lower-case scheme and host, no trailing dot, default port or trailing slash)", asWritten, prev, rt.Host))
			} else {
				seen[rt.Host] = i
			}
		}
		if i < len(unset) && unset[i] != "" && !failed[path("slots")] {
			spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: path("slots"), Message: "is " + unset[i] +
				": the host offers 0 slots, so no runtime is placed on it, as on a drained host (Rill's admin service reads it as 0 too); " +
				"give the host's capacity, or 0 to drain it"})
		}
		if rt.Slots < 0 || rt.Slots > MaxHostSlots {
			errs = append(errs, provisioner.Errorf(path("slots"), slotsRange, MaxHostSlots, strconv.Itoa(rt.Slots)))
		}
		if rt.AudienceURL == "" {
			// The audience is compared verbatim by the runtime: keep the host as written.
			rt.AudienceURL = written
		} else if hasPassword(rt.AudienceURL) { // any other string is an audience, as in Rill
			spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: path("audience_url"), Message: passwordInURL})
		}
		if hasPassword(rt.Host) {
			spec.warnings = append(spec.warnings, provisioner.FieldWarning{Path: path("host"), Message: passwordInURL})
		}
	}
	if len(errs) > 0 {
		return nil, provisioner.WithWarnings(errors.Join(errs...), spec.warnings)
	}
	return spec, nil
}

// unsetSlots says, for each entry of the spec's runtimes, whether its slots is "missing" or "null" ("" when
// given): the decoder reads both as 0, a drained host, which is what Rill does too, but a host listed
// without its capacity is more likely an omission than a drain. encoding/json, which Rill decodes specs
// with, matches the keys, so that they match as they do in Rill (whatever their case, the last of two
// spellings winning, a null after a value changing nothing). specJSON has been decoded already, so it
// is valid JSON; a part of the wrong type is left out here, the decoder has reported it.
func unsetSlots(specJSON []byte) []string {
	var spec struct {
		Runtimes []struct {
			Slots slotsGiven `json:"slots"`
		} `json:"runtimes"`
	}
	_ = json.Unmarshal(specJSON, &spec)
	out := make([]string, len(spec.Runtimes))
	for i, rt := range spec.Runtimes {
		switch {
		case rt.Slots.value:
		case rt.Slots.null:
			out[i] = "null"
		default:
			out[i] = "missing"
		}
	}
	return out
}

// slotsGiven records what the keys that set one host's slots gave: a value, or only null.
type slotsGiven struct{ value, null bool }

func (s *slotsGiven) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		s.null = true // after a value, null changes nothing (encoding/json's rule for an int)
	} else {
		s.value = true
	}
	return nil
}

// passwordInURL is the warning for a host or audience URL with a password in its user info. Rill
// accepts one, so it is no error; but the URL becomes the runtime's host and audience attributes,
// which Terraform shows in plans and keeps in the state unmasked (and the ledger records the host).
const passwordInURL = "carries a password in its user info (user:password@): the runtime's host and audience " +
	"attributes, shown in plans and logs and kept in the state, and the ledger's record of the host would hold it; " +
	"remove it from the URL"

// hasPassword reports whether s carries a password in its user info. audience_url takes any string,
// so one that is not a URL with a host (it does not parse: a bad port, a space; no "//": "u:pw@h") is
// read as text: a ':' in what comes before the last '@' of the part before the path.
func hasPassword(s string) bool {
	s = strings.TrimSpace(s)
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		_, ok := u.User.Password() // nil-safe: no user info, no password
		return ok
	}
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if end := strings.IndexAny(s, "/?#"); end >= 0 {
		s = s[:end]
	}
	at := strings.LastIndex(s, "@")
	return at >= 0 && strings.Contains(s[:at], ":")
}

type urlError struct{ value string }

func (e *urlError) Error() string {
	return "must be an http:// or https:// URL with a host, got \"" + e.value + "\""
}

// host returns the spec of a host, or nil when it is not in the pool. A host recorded by an older
// provider in another spelling ("http://H1:9091/") is found too: plans read the ledger before the
// migration that canonicalizes its hosts has run (it runs on the first write).
func (s *Spec) host(h string) *RuntimeSpec {
	c := canonicalHost(h)
	for i := range s.Runtimes {
		if s.Runtimes[i].Host == c {
			return &s.Runtimes[i]
		}
	}
	return nil
}

// canonicalHost is hosturl.Canonical for hosts read from the ledger: one that does not parse is
// returned as it is.
func canonicalHost(h string) string {
	if c, err := hosturl.Canonical(h); err == nil {
		return c
	}
	return h
}
