// Package envnames is the one home of the provider's own environment variables: the provider block
// (internal/provider) falls back to them for attributes it leaves unset, the migrate-rill-static
// command (internal/rillmigrate) for flags it is not given, and errors (of the provider, the
// resources, the static pool) name them where setting one is the fix. It holds names only, so that
// any layer may import it. (XDG_DATA_HOME, the standard variable under which the default SQLite
// ledger lives, is database.DefaultSQLitePathEnv; the benchmarks unset these before they measure,
// which envnames_test.go holds them to.)
package envnames

const (
	// ProvisionerSet holds the provisioner set JSON; the name is the one Rill's admin service reads,
	// so that one value configures both.
	ProvisionerSet = "RILL_ADMIN_PROVISIONER_SET_JSON"
	// DefaultProvisioner names the provisioner used by resources that name none (Rill admin's name too).
	DefaultProvisioner = "RILL_ADMIN_DEFAULT_PROVISIONER"
	// LedgerDSN is the DSN of the provider's ledger.
	LedgerDSN = "RILL_LEDGER_DSN"
	// RillVersion is the Rill version handed to provisioners.
	RillVersion = "RILL_VERSION"
)
