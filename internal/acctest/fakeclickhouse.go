package acctest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse"
)

// FakeClickHouseSet is the provisioner set of the CLI tests of rill_clickhouse: one provisioner "ch"
// of the stand-in's type (the real clickhouse-static provisioner talking to a stand-in for ClickHouse,
// compiled into the provider binary the CLI tests build; see internal/clickhouse/fake_names.go), whose
// admin user logs in with adminPassword at ch.fake:9000, and, with writeDSN, at the write DSN
// ch-writer.fake:8123 too. It points the stand-in at a new state file, which it returns: the
// stand-in's users, passwords and databases (and the faults a test injects) live there across the
// test's terraform commands.
func FakeClickHouseSet(t *testing.T, adminPassword string, writeDSN bool) (set, stateFile string) {
	t.Helper()
	stateFile = filepath.Join(t.TempDir(), "fake-clickhouse.json")
	t.Setenv(clickhouse.FakeStateEnv, stateFile)
	spec := map[string]string{"dsn": fmt.Sprintf("clickhouse://admin:%s@ch.fake:9000/default", adminPassword)}
	if writeDSN {
		spec["write_dsn"] = fmt.Sprintf("http://admin:%s@ch-writer.fake:8123", adminPassword)
	}
	b, err := json.Marshal(map[string]any{"ch": map[string]any{"type": clickhouse.FakeType, "spec": spec}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b), stateFile
}
