package provisioner

// Keys of a runtime's Resource.State through which Provision and CheckResource report what they
// observe, so that refresh shows changes made outside Terraform. Each is optional: a provisioner that
// cannot observe a value leaves its key out. RuntimeObservation is their typed form; the Terraform
// layer reads them only through it, and provisioners write them under these names.
const (
	// StateKeySlots is the number of slots the runtime really has (int).
	StateKeySlots = "slots"
	// StateKeyVersion is the Rill version the runtime really runs (string; "" follows the Rill version).
	StateKeyVersion = "version"
	// StateKeyHibernated is whether the runtime is stopped with its data kept (bool).
	StateKeyHibernated = "hibernated"
	// StateKeyWarnings ([]string) are conditions a user should see that did not fail the call; the
	// Terraform layer shows them as warnings.
	StateKeyWarnings = "warnings"
	// StateKeyDrift ([]string) lists the ways the live resource differs from what Provision would make
	// of the same args; non-empty plans an update, and Provision repairs every entry.
	StateKeyDrift = "drift"

	// The keys below matter after an import, when the Terraform layer has no private state and its
	// configuration is yet to be written (-generate-config-out).

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

// observationKeys are the StateKey... keys above, in one list for WithoutObservations.
var observationKeys = []string{
	StateKeySlots, StateKeyVersion, StateKeyHibernated, StateKeyWarnings, StateKeyDrift,
	StateKeyProvisioner, StateKeyName, StateKeyEnvironment, StateKeyAnnotations,
}

// WithoutObservations returns a copy of a resource's state without the StateKey... keys: what a
// caller keeps between calls. Those keys are a provisioner's report of what it observed in this
// call; a caller that keeps the values elsewhere (the Terraform layer: in the resource's attributes,
// or shown once, as warnings) need not store them again, and no provisioner needs them back (a
// static runtime's ledger row without a runtime record reports its version and hibernation only
// when the state it is given has them). Terraform rewrites the whole state file after each
// resource it applies, so every byte a runtime keeps is paid for N times in an apply of N.
func WithoutObservations(state map[string]any) map[string]any {
	out := make(map[string]any, len(state))
	for k, v := range state {
		out[k] = v
	}
	for _, k := range observationKeys {
		delete(out, k)
	}
	return out
}

// RuntimeObservation is what a provisioner observed of a runtime (the StateKey... keys above).
type RuntimeObservation struct {
	Slots      int    // 0 when not observed
	Version    string // "" when not observed
	Hibernated *bool  // nil when not observed
	Warnings   []string
	Drift      []string
	// Owner, Name, Environment and Annotations: "" / nil when not observed.
	Owner       string
	Name        string
	Environment string
	Annotations map[string]string
}

// NewRuntimeObservation reads the observed keys of a runtime's state leniently: the state may have
// been through JSON (numbers as float64 or json.Number, lists as []any) or be empty (an import). A
// value of the wrong type counts as not observed.
func NewRuntimeObservation(state map[string]any) RuntimeObservation {
	var o RuntimeObservation
	if n, err := wholeNumber(state[StateKeySlots]); err == nil && n > 0 && n == int64(int(n)) {
		o.Slots = int(n)
	}
	o.Version, _ = state[StateKeyVersion].(string)
	if h, ok := state[StateKeyHibernated].(bool); ok {
		o.Hibernated = &h
	}
	o.Warnings = stringList(state[StateKeyWarnings])
	o.Drift = stringList(state[StateKeyDrift])
	o.Owner, _ = state[StateKeyProvisioner].(string)
	o.Name, _ = state[StateKeyName].(string)
	o.Environment, _ = state[StateKeyEnvironment].(string)
	o.Annotations = stringMap(state[StateKeyAnnotations])
	return o
}

// stringMap reads a map[string]string that may have been through JSON (map[string]any); values that
// are not strings are left out.
func stringMap(v any) map[string]string {
	switch m := v.(type) {
	case map[string]string:
		return m
	case map[string]any:
		out := make(map[string]string, len(m))
		for k, x := range m {
			if s, ok := x.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	return nil
}
