package kubernetes

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Defaults for optional spec fields.
const (
	DefaultTimeoutSeconds = 600
	DefaultDataDir        = "/data"
	DefaultNamespace      = "default"
	DefaultImage          = "rilldata/rill"
	DefaultPingPath       = "/v1/ping"
	// DefaultQPS and DefaultBurst are well above client-go's 5/10, which make plans with a few
	// dozen runtimes take minutes.
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Spec is the JSON spec of a kubernetes provisioner. Every field is optional except host.
//
//	{
//	  "host": "https://*.runtime.example.com",  // required; '*' becomes the provision ID
//	  "namespace": "rill",                       // default "default"
//	  "image": "rilldata/rill",                  // default "rilldata/rill"; the tag comes from the runtime's version
//	  "data_dir": "/data",                       // default "/data"; where the PVC is mounted
//	  "timeout_seconds": 600,                    // default 600; bounds each wait: AwaitReady, Deprovision, an update's wait for a claim being deleted (awaitVolumeGone)
//	  "kubeconfig_path": "~/.kube/config",       // default "" = in-cluster service account
//	  "kubeconfig_context": "prod",              // default "" = the kubeconfig's current context
//	  "qps": 50, "burst": 100,                   // client-side rate limits
//	  "ping_path": "/v1/ping",                   // default "/v1/ping"; "" switches the HTTP probe off
//	  "unschedulable_grace_seconds": 0,          // default 0: an unschedulable pod fails AwaitReady once seen
//	  "template_paths": {"deployment": "k8s/deployment.yaml", ...}  // each optional; default: embedded
//	}
type Spec struct {
	TimeoutSeconds    int     `json:"timeout_seconds"`
	DataDir           string  `json:"data_dir"`
	Host              string  `json:"host"`
	Namespace         string  `json:"namespace"`
	Image             string  `json:"image"`
	KubeconfigPath    string  `json:"kubeconfig_path"`
	KubeconfigContext string  `json:"kubeconfig_context"`
	QPS               float64 `json:"qps"`
	Burst             int     `json:"burst"`
	PingPath          *string `json:"ping_path"`
	// UnschedulableGraceSeconds is how long a pod may stay unschedulable before AwaitReady fails
	// with the scheduler's reason. 0 (the default) fails as soon as AwaitReady sees it (it watches
	// the pods of a rollout that takes longer than podWatchDelay); clusters with a node autoscaler
	// want the time a scale-up takes. Pods waiting for their volume to bind are always waited for.
	UnschedulableGraceSeconds int           `json:"unschedulable_grace_seconds"`
	TemplatePaths             TemplatePaths `json:"template_paths"`

	// warnings are what parsing found worth a warning (fields Rill ignores too, values Rill accepts
	// that behave differently from what one may expect); the provisioner's SpecWarnings returns them.
	warnings []provisioner.FieldWarning
}

// TemplatePaths points at manifest templates on disk. An empty path selects the embedded default
// (the top-level templates/ folder of this repository). Relative paths are relative to the working
// directory of the process (for Terraform: the directory `terraform` runs in).
type TemplatePaths struct {
	HTTPIngress string `json:"http_ingress"`
	GRPCIngress string `json:"grpc_ingress"`
	Service     string `json:"service"`
	Deployment  string `json:"deployment"`
	PVC         string `json:"pvc"`
}

var (
	dnsLabel  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	imageName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:-]*$`)
)

// ParseSpec decodes and validates a spec, filling in defaults. Errors are *provisioner.FieldError
// naming the offending field. Fields Rill ignores are ignored here too, with a warning, which comes
// with the error (provisioner.WithWarnings) when the spec is in error.
func ParseSpec(specJSON []byte) (*Spec, error) {
	s := &Spec{}
	warnings, err := provisioner.DecodeSpecCompat(specJSON, s)
	if err != nil {
		return nil, provisioner.WithWarnings(err, warnings)
	}
	s.warnings = warnings
	if err := s.applyDefaultsAndValidate(); err != nil {
		return nil, provisioner.WithWarnings(err, s.warnings)
	}
	return s, nil
}

// maxDurationSeconds is the most seconds a time.Duration holds: a larger timeout_seconds or
// unschedulable_grace_seconds would wrap around to a negative wait that ends at once.
const maxDurationSeconds = int(math.MaxInt64 / int64(time.Second))

// applyDefaultsAndValidate fills in defaults and checks every field, returning every error it finds
// (joined), so that one run reports them all: with an error, those of the templates too (which
// newProvisioner loads once the spec is right).
func (s *Spec) applyDefaultsAndValidate() error {
	var errs []error
	if s.TimeoutSeconds == 0 {
		s.TimeoutSeconds = DefaultTimeoutSeconds
	} else if s.TimeoutSeconds < 0 {
		errs = append(errs, provisioner.Errorf("timeout_seconds", "must be positive, got %d", s.TimeoutSeconds))
	} else if s.TimeoutSeconds > maxDurationSeconds {
		errs = append(errs, provisioner.Errorf("timeout_seconds", "must be at most %d (a wait longer than that overflows), got %d", maxDurationSeconds, s.TimeoutSeconds))
	}

	if s.DataDir == "" {
		s.DataDir = DefaultDataDir
	} else if !strings.HasPrefix(s.DataDir, "/") {
		errs = append(errs, provisioner.Errorf("data_dir", "must be an absolute path inside the container, got %q", s.DataDir))
	}

	if err := s.checkHost(); err != nil {
		errs = append(errs, err)
	}

	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	} else if len(s.Namespace) > 63 || !dnsLabel.MatchString(s.Namespace) {
		errs = append(errs, provisioner.Errorf("namespace", "must be a valid Kubernetes namespace name (lower-case letters, digits and '-', at most 63), got %q", s.Namespace))
	}

	if s.Image == "" {
		s.Image = DefaultImage
	} else if !imageName.MatchString(s.Image) && !strings.Contains(s.Image, "@") {
		errs = append(errs, provisioner.Errorf("image", "must be an image repository such as \"rilldata/rill\", got %q", s.Image))
	} else if imageHasTag(s.Image) {
		// Rill hands the image to the templates as .Image unchanged and the version as .ImageTag;
		// so does this provisioner. Templates that write "{{ .Image }}:{{ .ImageTag }}" (the default
		// one does) then render an invalid reference such as "rilldata/rill:v1:v2".
		if s.TemplatePaths.Deployment == "" {
			errs = append(errs, provisioner.Errorf("image", "%q carries a tag or digest, and the default deployment template appends the runtime's "+
				"version to it (\"{{ .Image }}:{{ .ImageTag }}\"), which makes an invalid image reference; give the repository only and set "+
				"the tag with rill_runtime's version or the provider's rill_version, or use a deployment template that writes {{ .Image }} alone", s.Image))
		} else {
			s.warnings = append(s.warnings, provisioner.FieldWarning{Path: "image", Message: fmt.Sprintf("%q carries a tag or digest: it reaches "+
				"the templates unchanged as .Image, and the runtime's version as .ImageTag (as in Rill's admin service); a template that "+
				"writes \"{{ .Image }}:{{ .ImageTag }}\" renders an invalid image reference", s.Image)})
		}
	}

	if s.KubeconfigPath != "" {
		if p, err := expandHome(s.KubeconfigPath); err != nil {
			errs = append(errs, &provisioner.FieldError{Path: "kubeconfig_path", Err: err})
		} else {
			s.KubeconfigPath = p
		}
	} else if s.KubeconfigContext != "" {
		errs = append(errs, provisioner.Errorf("kubeconfig_context", "needs kubeconfig_path (an in-cluster config has no contexts)"))
	}

	if s.QPS == 0 {
		s.QPS = DefaultQPS
	} else if s.QPS < 0 {
		errs = append(errs, provisioner.Errorf("qps", "must be positive, got %v", s.QPS))
	}
	if s.Burst == 0 {
		s.Burst = DefaultBurst
	} else if s.Burst < 0 {
		errs = append(errs, provisioner.Errorf("burst", "must be positive, got %d", s.Burst))
	}

	if s.UnschedulableGraceSeconds < 0 {
		errs = append(errs, provisioner.Errorf("unschedulable_grace_seconds", "must be 0 or more, got %d", s.UnschedulableGraceSeconds))
	} else if s.UnschedulableGraceSeconds > maxDurationSeconds {
		errs = append(errs, provisioner.Errorf("unschedulable_grace_seconds", "must be at most %d (a wait longer than that overflows), got %d", maxDurationSeconds, s.UnschedulableGraceSeconds))
	}

	if s.PingPath == nil {
		p := DefaultPingPath
		s.PingPath = &p
	} else if *s.PingPath != "" && !strings.HasPrefix(*s.PingPath, "/") {
		errs = append(errs, provisioner.Errorf("ping_path", "must start with '/' (or be \"\" to switch the HTTP readiness probe off), got %q", *s.PingPath))
	}

	for _, slot := range templateSlots {
		p := slot.path(&s.TemplatePaths)
		if *p == "" {
			continue
		}
		if exp, err := expandHome(*p); err != nil {
			errs = append(errs, &provisioner.FieldError{Path: "template_paths." + slot.field, Err: err})
			*p = "" // not read below: its error is this one
		} else {
			*p = exp
		}
	}
	if len(errs) > 0 {
		// The spec is in error, so the provisioner will not load the templates: their errors are
		// reported here, in the same run. Their checks need no other field to be right (at worst the
		// sample data holds a value in error, which renders all the same).
		if _, err := loadTemplates(s.TemplatePaths, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkHost checks the host (required, an http(s) URL of a scheme and host only), warns about one
// without '*', and drops a trailing slash.
func (s *Spec) checkHost() error {
	if strings.TrimSpace(s.Host) == "" {
		return provisioner.Errorf("host", "is required: the runtime URL with '*' standing for the provision ID, e.g. \"https://*.runtime.example.com\"")
	}
	if !strings.Contains(s.Host, "*") {
		// Rill accepts it (its host is then the same for every runtime), so it is not refused.
		s.warnings = append(s.warnings, provisioner.FieldWarning{Path: "host", Message: fmt.Sprintf("%q has no '*' (which each runtime's provision ID "+
			"replaces): every runtime of this provisioner gets this same URL and Ingress host, so only one of them can be reached "+
			"(Rill's admin service does the same)", s.Host)})
	}
	u, err := url.Parse(strings.ReplaceAll(s.Host, "*", "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return provisioner.Errorf("host", "must be an http:// or https:// URL such as \"https://*.runtime.example.com\", got %q", s.Host)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return provisioner.Errorf("host", "must be a scheme and host only (no path, query or credentials), got %q", s.Host)
	}
	s.Host = strings.TrimSuffix(s.Host, "/")
	return nil
}

// imageHasTag reports whether an image reference carries a tag (a ':' after the last '/') or a digest.
func imageHasTag(image string) bool {
	return strings.LastIndex(image, ":") > strings.LastIndex(image, "/") || strings.Contains(image, "@")
}

// PingEnabled reports whether AwaitReady probes the runtime over HTTP.
func (s *Spec) PingEnabled() bool { return s.PingPath != nil && *s.PingPath != "" }

// RuntimeURL returns the host URL (with scheme) of a runtime.
func (s *Spec) RuntimeURL(provisionID string) string {
	return strings.ReplaceAll(s.Host, "*", provisionID)
}

// hostParts returns the runtime's host without scheme (host[:port]) and without port.
func (s *Spec) hostParts(provisionID string) (host, hostname string) {
	u, err := url.Parse(s.RuntimeURL(provisionID))
	if err != nil { // validated in ParseSpec; only reachable with an invalid provision ID
		return "", ""
	}
	return u.Host, u.Hostname()
}

func expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			// The home directory is the machine's, not the spec's (provisioner.ErrFromEnvironment).
			return "", provisioner.FromEnvironment(fmt.Errorf("cannot expand ~ in %q: %w", p, err))
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
	}
	return p, nil
}
