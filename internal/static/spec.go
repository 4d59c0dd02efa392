package static

import (
	"net/url"
	"strconv"
	"strings"

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

// Spec is the JSON spec of a static pool.
type Spec struct {
	Runtimes  []RuntimeSpec `json:"runtimes"`
	Placement string        `json:"placement"`
}

// RuntimeSpec is one pre-provisioned runtime host of the pool.
type RuntimeSpec struct {
	// Host is the runtime's base URL, e.g. "http://localhost:9091".
	Host string `json:"host"`
	// Slots is how many slots the host offers.
	Slots int `json:"slots"`
	// DataDir is where the runtime keeps its data (informational for static pools).
	DataDir string `json:"data_dir"`
	// AudienceURL is the JWT audience of the runtime; the host when empty.
	AudienceURL string `json:"audience_url"`
}

// ParseSpec decodes and validates a static pool spec. Errors are provisioner.FieldErrors naming the field.
func ParseSpec(specJSON []byte) (*Spec, error) {
	spec := &Spec{}
	if err := provisioner.DecodeSpec(specJSON, spec); err != nil {
		return nil, err
	}
	switch spec.Placement {
	case "":
		spec.Placement = PlacementSpread
	case PlacementSpread, PlacementPack:
	default:
		return nil, provisioner.Errorf("placement", "must be %q or %q, got %q", PlacementSpread, PlacementPack, spec.Placement)
	}
	if len(spec.Runtimes) == 0 {
		return nil, provisioner.Errorf("runtimes", "must list at least one runtime host")
	}
	seen := make(map[string]int, len(spec.Runtimes))
	for i := range spec.Runtimes {
		rt := &spec.Runtimes[i]
		path := func(field string) string { return "runtimes[" + strconv.Itoa(i) + "]." + field }
		rt.Host = strings.TrimRight(strings.TrimSpace(rt.Host), "/")
		if rt.Host == "" {
			return nil, provisioner.Errorf(path("host"), "is required (the runtime's base URL, e.g. \"http://localhost:9091\")")
		}
		if err := checkURL(rt.Host); err != nil {
			return nil, provisioner.Errorf(path("host"), "%v", err)
		}
		if prev, dup := seen[rt.Host]; dup {
			return nil, provisioner.Errorf(path("host"), "%q is already listed at runtimes[%d]", rt.Host, prev)
		}
		seen[rt.Host] = i
		if rt.Slots < 1 {
			return nil, provisioner.Errorf(path("slots"), "must be at least 1, got %d", rt.Slots)
		}
		if rt.AudienceURL == "" {
			rt.AudienceURL = rt.Host
		} else if err := checkURL(rt.AudienceURL); err != nil {
			return nil, provisioner.Errorf(path("audience_url"), "%v", err)
		}
	}
	return spec, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &urlError{s}
	}
	return nil
}

type urlError struct{ value string }

func (e *urlError) Error() string {
	return "must be an http:// or https:// URL with a host, got \"" + e.value + "\""
}

// host returns the spec of a host, or nil when it is not in the pool.
func (s *Spec) host(h string) *RuntimeSpec {
	for i := range s.Runtimes {
		if s.Runtimes[i].Host == h {
			return &s.Runtimes[i]
		}
	}
	return nil
}
