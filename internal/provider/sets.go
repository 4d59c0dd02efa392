package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/logging"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// builtSet is a provisioner set with the ledger it shares.
type builtSet struct {
	set            map[string]provisioner.Provisioner
	types          map[string]string
	ledger         *lazyLedger
	ledgerRedacted string
	bridge         *logging.Bridge
	// warnings are shown by every Configure that uses this set (each Terraform command).
	warnings []provisioner.SetWarning
}

// setCache builds each distinct provider configuration once per process: Terraform configures the
// provider for every command, and the acceptance tests do so for every step, but provisioners (and
// their clients and ledger connections) should live as long as the process.
type setCache struct {
	mu    sync.Mutex
	built map[string]*builtSet
}

var sets = &setCache{built: map[string]*builtSet{}}

// get returns the set built from setJSON, and its warnings, which come with the error too when the
// set is in error (see provisioner.NewSetWithWarnings).
func (c *setCache) get(ctx context.Context, setJSON, ledgerDSN string) (*builtSet, []provisioner.SetWarning, error) {
	sum := sha256.Sum256([]byte(setJSON + "\x00" + ledgerDSN))
	key := hex.EncodeToString(sum[:])

	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.built[key]; ok {
		// Later requests log through their own context.
		b.bridge.SetContext(ctx)
		return b, b.warnings, nil
	}
	bridge := logging.NewBridge(ctx)
	logger := bridge.Logger()
	ledger := newLazyLedger(ledgerDSN, logger.Named("ledger"))
	set, warnings, err := provisioner.NewSetWithWarnings(setJSON, ledger, logger)
	if err != nil {
		_ = ledger.Close()
		return nil, warnings, err
	}
	specs, _ := provisioner.ParseSet(setJSON)
	types := make(map[string]string, len(specs))
	for name, s := range specs {
		types[name] = s.Type
	}
	ledgerRedacted := "the default SQLite ledger, located on first use"
	if ledgerDSN != "" {
		ledgerRedacted = database.Redact(ledgerDSN)
	}
	b := &builtSet{set: set, types: types, ledger: ledger, ledgerRedacted: ledgerRedacted, bridge: bridge, warnings: warnings}
	c.built[key] = b
	return b, warnings, nil
}

// CloseAll closes every provisioner and ledger built by this process. main calls it when the plugin
// server stops; tests call it at the end of a run.
func CloseAll() {
	sets.mu.Lock()
	defer sets.mu.Unlock()
	for key, b := range sets.built {
		for _, p := range b.set {
			_ = p.Close()
		}
		_ = b.ledger.Close()
		delete(sets.built, key)
	}
}
