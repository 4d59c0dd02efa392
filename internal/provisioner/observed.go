package provisioner

// Keys a provisioner may set in a Resource.State that CheckResource returns, to report what the
// Terraform layer cannot know after an import (it has no private state then). Each is optional; a
// provisioner that cannot observe a value leaves its key out. (slots, version, hibernated, warnings
// and drift are the older observed keys, see DESIGN.md.)
const (
	// StateKeyProvisioner is the name of the provisioner that made the resource (string). Import
	// refuses a resource whose owner is another provisioner.
	StateKeyProvisioner = "provisioner"
	// StateKeyName is the resource's name (string, "" for none).
	StateKeyName = "name"
	// StateKeyEnvironment is the runtime's environment (string).
	StateKeyEnvironment = "environment"
	// StateKeyAnnotations are the runtime's annotations besides the environment (map[string]string,
	// or map[string]any after JSON).
	StateKeyAnnotations = "annotations"
)
