package provisioner

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
)

// NameMaxLength is the longest resource name accepted (the longest DNS name).
const NameMaxLength = 253

// namePattern is what a resource name may look like: letters, digits, '.', '_' and '-', starting and
// ending with a letter or digit. No '/', so "<provisioner>/<name>" splits unambiguously at its last '/'.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// ValidateName reports why name cannot name a resource, or nil.
func ValidateName(name string) error {
	if len(name) > NameMaxLength {
		return fmt.Errorf("must be at most %d characters, got %d", NameMaxLength, len(name))
	}
	if !namePattern.MatchString(name) {
		return fmt.Errorf("must be %s; got %q", NameRule, name)
	}
	return nil
}

// NameRule says what ValidateName accepts, besides the length: for errors and descriptions.
const NameRule = "letters, digits, '.', '_' and '-', starting and ending with a letter or digit"

// NameNamespaceURL names the UUIDv5 namespace of named resource IDs (nameNamespace); rill_runtime's
// `id` description quotes it.
const NameNamespaceURL = "https://registry.terraform.io/providers/rill-provisioner/rill/names"

// nameNamespace is the UUIDv5 namespace of named resource IDs: UUIDv5(URL namespace, NameNamespaceURL).
var nameNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte(NameNamespaceURL))

// NamedResourceID is the ID of the resource named name in provisioner provisionerName: the UUIDv5 of
// "<provisioner>/<name>" in nameNamespace. The same provisioner and name always give the same ID, so a
// create that was interrupted (terraform killed, the provider killed) is found and adopted by the next
// one instead of leaking.
func NamedResourceID(provisionerName, name string) string {
	return uuid.NewSHA1(nameNamespace, []byte(provisionerName+"/"+name)).String()
}

// ErrTakenOver is returned (wrapped) by Deprovision when it left a named resource alone because a
// later create of its name took it over: the state it was given is of an earlier instance (the old
// half of a create_before_destroy replacement whose apply was interrupted before it destroyed that
// half, or another state that declares the name and applied before the last one that created it).
// Nothing was deprovisioned; the resource belongs to the state of the create that took it over. The
// Terraform layer removes the earlier instance from its state, with a warning.
var ErrTakenOver = errors.New("a later create of its name took the resource over")

// IDConflictError is returned (wrapped or not) by Provision when the resource ID, or the name, is
// already held by something that is not this resource: another provisioner's allocation, or another
// name. The Terraform layer turns it into the import command that takes the holder over.
type IDConflictError struct {
	// ID and Provisioner identify what already exists (the import ID is "<Provisioner>/<ID>").
	ID          string
	Provisioner string
	// Name is the existing resource's name ("" when it has none).
	Name string
	// Reason says what conflicts, as a sentence fragment.
	Reason string
}

func (e *IDConflictError) Error() string {
	return fmt.Sprintf("%s: runtime %s of provisioner %q (name %q) already exists", e.Reason, e.ID, e.Provisioner, e.Name)
}
