package kubernetes

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Keys of Resource.State written by Provision and CheckResource. Both write every key, so that a
// CheckResource right after a Provision returns an equal state when nothing changed.
const (
	// StateNamespace is where the objects live. It is sticky: a later change of the spec's namespace
	// applies to new runtimes only.
	StateNamespace = "namespace"
	// StateProvisionID is the resource ID without dashes, used in object names and the host.
	StateProvisionID = "provision_id"
	// StateSlots is the number of slots (observed from the Deployment's rill.provisioner/slots
	// annotation by CheckResource, or from the objects' sizes when it is missing or was edited by
	// hand).
	StateSlots = provisioner.StateKeySlots
	// StateVersion is the runtime's version as the args asked for it (possibly "", meaning "follow
	// the Rill version"). CheckResource reports the live image tag here instead when the image does
	// not run the tag that Provision would apply now, so that it differs from the args.
	StateVersion = provisioner.StateKeyVersion
	// StateImageTag is the image tag that runs (resolved: version, else Rill version, else "latest").
	StateImageTag = "image_tag"
	// StateHibernated is whether the Deployment is scaled to zero (observed from spec.replicas).
	StateHibernated = provisioner.StateKeyHibernated
	// StateTemplatesChecksum is the checksum of the templates the objects were applied with (read
	// back from the rill.provisioner/templates-checksum annotation by CheckResource).
	StateTemplatesChecksum = "templates_checksum"
	// StateWarnings ([]string) are conditions a user should see but that did not fail the call, such
	// as a volume kept larger than the slots ask for because volumes never shrink. The Terraform
	// layer surfaces them as diagnostics warnings.
	StateWarnings = provisioner.StateKeyWarnings
	// StateDrift ([]string) lists the ways the live objects differ from what Provision would apply
	// now with the same args: templates edited on disk, an image or resources edited by hand, an
	// object deleted by hand. Empty after Provision. A non-empty list means "plan an update": the
	// Terraform layer should treat it like a changed argument (e.g. a computed attribute that the
	// plan sets back to empty), and Provision repairs every entry.
	StateDrift = provisioner.StateKeyDrift
	// StateClusterID is the identity of the cluster the runtime was provisioned in: the UID of its
	// kube-system namespace. A runtime whose recorded cluster differs from the one the kubeconfig
	// reaches is an error (ClusterMismatchError), never "gone". Empty when the credentials may not
	// read that namespace, and in states from before identities (adopted on the next refresh).
	StateClusterID = "cluster_id"
	// StateCluster is the API server URL the runtime was provisioned through, to name it in errors.
	StateCluster = "cluster"
	// StateAdopting is true when CheckResource found objects that Rill's admin service applied (an
	// imported runtime not yet adopted): the next Provision takes their fields over first.
	StateAdopting = "adopting"
	// StateClaim is a named runtime's claim token (AnnotationClaim), absent for none.
	StateClaim = "claim"
)

// runtimeState is the typed form of Resource.State.
type runtimeState struct {
	Namespace         string
	ProvisionID       string
	Slots             int
	Version           string
	ImageTag          string
	Hibernated        bool
	TemplatesChecksum string
	Warnings          []string
	Drift             []string
	ClusterID         string
	Cluster           string
	// Owner and Name are the provisioner (its name in the set) and the runtime name the objects
	// carry, for an import; "" when unknown or none.
	Owner    string
	Name     string
	Adopting bool
	// Environment and Annotations (the project's, without the environment) as the objects record
	// them; "" and nil for objects applied before they were recorded.
	Environment string
	Annotations map[string]string
	// Claim is a named runtime's claim token (AnnotationClaim): "" for none.
	Claim string
}

func (s *runtimeState) asMap() map[string]any {
	m := map[string]any{
		StateNamespace:                  s.Namespace,
		StateProvisionID:                s.ProvisionID,
		StateSlots:                      s.Slots,
		StateVersion:                    s.Version,
		StateImageTag:                   s.ImageTag,
		StateHibernated:                 s.Hibernated,
		StateTemplatesChecksum:          s.TemplatesChecksum,
		StateWarnings:                   nonNil(s.Warnings),
		StateDrift:                      nonNil(s.Drift),
		StateClusterID:                  s.ClusterID,
		StateCluster:                    s.Cluster,
		provisioner.StateKeyProvisioner: s.Owner,
		provisioner.StateKeyName:        s.Name,
		StateAdopting:                   s.Adopting,
		provisioner.StateKeyEnvironment: s.Environment,
		provisioner.StateKeyAnnotations: s.Annotations,
	}
	if s.Claim != "" {
		m[StateClaim] = s.Claim
	}
	return m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// parseState reads a state leniently: it may come back from JSON (numbers as float64, lists as
// []any) or be empty (an imported resource).
func parseState(m map[string]any) runtimeState {
	var s runtimeState
	s.Namespace, _ = m[StateNamespace].(string)
	s.ProvisionID, _ = m[StateProvisionID].(string)
	o := provisioner.NewRuntimeObservation(m)
	s.Slots, s.Version, s.Warnings, s.Drift, s.Owner, s.Name = o.Slots, o.Version, o.Warnings, o.Drift, o.Owner, o.Name
	s.Environment, s.Annotations = o.Environment, o.Annotations
	s.Hibernated = o.Hibernated != nil && *o.Hibernated
	s.ImageTag, _ = m[StateImageTag].(string)
	s.TemplatesChecksum, _ = m[StateTemplatesChecksum].(string)
	s.ClusterID, _ = m[StateClusterID].(string)
	s.Cluster, _ = m[StateCluster].(string)
	s.Adopting, _ = m[StateAdopting].(bool)
	s.Claim, _ = m[StateClaim].(string)
	return s
}

var provisionIDRE = regexp.MustCompile(`^[a-z0-9]{1,50}$`)

// provisionIDFor derives the provision ID from a resource ID: dashes removed, lower-cased. It must be
// usable in object names and host names.
func provisionIDFor(resourceID string) (string, error) {
	pid := strings.ToLower(strings.ReplaceAll(resourceID, "-", ""))
	if !provisionIDRE.MatchString(pid) {
		return "", fmt.Errorf("resource ID %q cannot name Kubernetes objects: without dashes it must be 1 to 50 letters and digits", resourceID)
	}
	return pid, nil
}

// desiredArgs returns the args to compare the live objects with: the options' args when given,
// else those recorded in the state.
func desiredArgs(opts *provisioner.ResourceOptions, st runtimeState) *provisioner.RuntimeArgs {
	if opts != nil && opts.Args != nil {
		if a, err := provisioner.NewRuntimeArgs(opts.Args); err == nil {
			return a
		}
	}
	slots := st.Slots
	if slots < 1 {
		slots = 1
	}
	return &provisioner.RuntimeArgs{Slots: slots, Version: st.Version, Hibernated: st.Hibernated}
}
