package provisioner

// ConfigPlanner is implemented by provisioners whose Provision of an existing resource (an update)
// reports Config entries that follow the provisioner's own spec rather than what the resource was
// given, and that can tell them at plan time without reading or writing anything outside the process
// (the kubernetes provisioner: a runtime's host and audience are its URL under the spec's host
// pattern, which may have been edited since the resource was last refreshed). An addition to Rill's
// design. The Terraform layer plans those entries for every plan of a resource in state that keeps
// its ID, so that a plan without a refresh shows the change as one and the apply's result matches
// it. A provisioner that does not implement it reports on an update the entries it was given
// (r.Config): the static pool, which never moves a runtime on an update and keeps its audience.
type ConfigPlanner interface {
	// PlannedConfig returns the Config entries that a successful Provision(ctx, r, opts) of r, a
	// resource in state (r.ID, r.State and r.Config as recorded), reports, as far as r and the
	// provisioner's spec decide them whatever opts are; an entry it cannot promise is left out (the
	// plan leaves it to the apply). It reads and writes nothing outside the process. An error means
	// that r cannot be planned (an ID this provisioner does not make): the entries are left to the
	// apply.
	PlannedConfig(r *Resource) (map[string]any, error)
}
