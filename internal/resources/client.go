// Package resources holds the Terraform resources and data sources of the provider. They speak only
// the provisioner contract (internal/provisioner): nothing here knows about Kubernetes, SQL or
// ClickHouse.
package resources

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// Client is what the provider hands to resources and data sources (ProviderData): the provisioner set
// built from the provider block.
type Client struct {
	// Set holds the provisioners by name. Nil when the provider configuration was not known yet.
	Set map[string]provisioner.Provisioner
	// Types holds the type of each provisioner by name.
	Types map[string]string
	// Default is the name of the default provisioner; empty when there is none.
	Default string
	// RillVersion is passed to provisioners as ResourceOptions.RillVersion.
	RillVersion string
	// Unknown is set when the provider block depends on values not known until apply.
	Unknown bool
	// ConfigPlanners, while Unknown, holds the names of the set's provisioners that are
	// provisioner.ConfigPlanners when the set itself is known (ledger_dsn, rill_version or
	// default_provisioner is not); nil when the set is not known either.
	ConfigPlanners map[string]bool

	// capacity shares the plan-time reads (capacity, CreateChecker) of the command this Client
	// serves (Configure builds one Client per Terraform command).
	capacity capacityReads
	// named serializes the Creates and Deletes of one named runtime's instances in this command.
	named namedInstances
}

// Has reports whether the set has a provisioner named name; false on a nil Client or one whose set
// is not known yet.
func (c *Client) Has(name string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Set[name]
	return ok
}

// Names returns the provisioner names, sorted.
func (c *Client) Names() []string { return slices.Sorted(maps.Keys(c.Set)) }

// namesOrEmpty lists the provisioner names for an error message; with none it says the set is empty
// rather than end the message in a colon and nothing (the provider refuses an empty set, but a
// message must not depend on that).
func (c *Client) namesOrEmpty() string {
	if len(c.Set) == 0 {
		return "none (" + provisioner.ErrEmptySet.Error() + ")"
	}
	return strings.Join(c.Names(), ", ")
}

// Resolve returns the provisioner name to use for a resource (when name is empty, the one
// defaultFor chooses) and the provisioner, checking that it supports the resource type.
func (c *Client) Resolve(name string, rt provisioner.ResourceType) (string, provisioner.Provisioner, error) {
	if name == "" {
		var err error
		if name, err = c.defaultFor(rt); err != nil {
			return "", nil, err
		}
	}
	p, ok := c.Set[name]
	if !ok {
		return name, nil, fmt.Errorf("provisioner %q is not in the provider's provisioner set; known provisioners: %s", name, c.namesOrEmpty())
	}
	if !p.Supports(rt) {
		return name, nil, fmt.Errorf("provisioner %q (type %s) cannot provision %s resources", name, p.Type(), rt)
	}
	return name, p, nil
}

// defaultFor returns the provisioner of a resource of type rt that names none, as Rill's admin
// service chooses it: the default provisioner when it can provision rt (Rill provisions runtimes
// with RILL_ADMIN_DEFAULT_PROVISIONER: admin/deployments.go), else the one provisioner of the set that
// can (Rill provisions a ClickHouse resource with "a suitable provisioner", one of the set that
// supports the type, whatever the default: admin/server/provision.go and admin/provision.go). With
// several that can, Rill takes any of them (the first in Go's random map order): that is an error
// here. A default that cannot, with none that can (or one not in the set), is returned for Resolve to
// say why it cannot.
func (c *Client) defaultFor(rt provisioner.ResourceType) (string, error) {
	def, inSet := c.Set[c.Default]
	if inSet && def.Supports(rt) {
		return c.Default, nil
	}
	var able []string
	for _, name := range c.Names() {
		if c.Set[name].Supports(rt) {
			able = append(able, name)
		}
	}
	switch {
	case len(able) == 1:
		return able[0], nil
	case c.Default == "":
		return "", fmt.Errorf("no provisioner given and the provider has no default_provisioner; set `provisioner_name` to one of: %s", c.namesOrEmpty())
	case len(able) == 0 || !inSet:
		return c.Default, nil
	}
	return "", fmt.Errorf("no provisioner given: the default provisioner %q (type %s) cannot provision %s resources, and several provisioners of the set can (%s): set provisioner_name to one of them",
		c.Default, def.Type(), rt, strings.Join(able, ", "))
}
