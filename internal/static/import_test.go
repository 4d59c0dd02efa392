package static

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ledgertest"
)

// Import names hosts as the spec does (hosturl.Canonical): an assignment spelled "http://H1:9091/"
// counts against host http://h1:9091's slots, is recorded under the spec's spelling, and is the same
// host as an allocation already there.
func TestImportCountsAndRecordsHostsInTheSpecsSpelling(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, `{"runtimes": [{"host": "http://h1:9091", "slots": 3}]}`)
	if _, err := provision(t, p, "placed", 2); err != nil {
		t.Fatal(err)
	}

	report, err := p.Import(ctx, []Assignment{
		{ResourceID: "r1", Host: " HTTP://H1:9091/ ", Slots: 1},  // fits: 2 + 1 of 3
		{ResourceID: "r2", Host: "http://h1.:9091", Slots: 1},    // the host is full now
		{ResourceID: "placed", Host: "http://H1:9091", Slots: 2}, // already there, in another spelling
	})
	if err == nil || !strings.Contains(err.Error(), "runtime r2: host http://h1:9091 has 3 of 3 slots in use, 1 more would double-book it") {
		t.Fatalf("error %v: want r2 refused, its host full", err)
	}
	if len(report.Imported) != 1 || report.Imported[0].ResourceID != "r1" || report.Imported[0].Host != "http://h1:9091" {
		t.Fatalf("imported %+v, want r1 on http://h1:9091", report.Imported)
	}
	if len(report.Present) != 1 || report.Present[0].ResourceID != "placed" {
		t.Fatalf("present %+v, want the placed runtime", report.Present)
	}
	a, err := db.FindAllocation(ctx, "r1")
	if err != nil || a == nil || a.Host != "http://h1:9091" {
		t.Fatalf("r1's allocation %+v, %v: want it recorded on http://h1:9091", a, err)
	}
	hosts, err := p.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0].UsedSlots != 3 || hosts[0].Slots != 3 {
		t.Fatalf("capacity %+v, want 3 of 3 slots in use on one host", hosts)
	}
}

// A re-run records only what is new, also after Terraform freed what an earlier run recorded: a
// runtime destroyed since is reported as released, not recorded again (Rill's table, which nothing
// updates any more, still lists it; a re-run brought back the slots of destroyed runtimes, held by
// nothing in any state). One recorded by a run before marks existed is marked by the next run that
// finds it present. A present runtime is reported with the ledger's slots, which Terraform may have
// changed since.
func TestImportDoesNotRecordAgainWhatTerraformFreedSince(t *testing.T) {
	ctx := context.Background()
	p, db, _ := newPool(t, `{"runtimes": [{"host": "http://h1:9091", "slots": 8}]}`)
	rows := []Assignment{{ResourceID: "r1", Host: "http://h1:9091", Slots: 2}, {ResourceID: "old", Host: "http://h1:9091", Slots: 1}}
	if _, err := provision(t, p, "old", 1); err != nil { // recorded before marks existed
		t.Fatal(err)
	}
	if report, err := p.Import(ctx, rows); err != nil || len(report.Imported) != 1 || len(report.Present) != 1 {
		t.Fatalf("first run: %+v, %v; want r1 imported and old present", report, err)
	}
	if _, err := provision(t, p, "r1", 3); err != nil { // terraform apply resizes r1
		t.Fatal(err)
	}
	report, err := p.Import(ctx, rows)
	if err != nil || len(report.Present) != 2 || report.Present[0].Slots != 3 || len(report.Imported)+len(report.Released) != 0 {
		t.Fatalf("second run: %+v, %v; want both present, r1 with the ledger's 3 slots", report, err)
	}
	for _, id := range []string{"r1", "old"} { // terraform destroy
		if _, err := db.DeleteAllocation(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	report, err = p.Import(ctx, rows)
	if err != nil || len(report.Released) != 2 || len(report.Imported)+len(report.Present) != 0 {
		t.Fatalf("run after the destroy: %+v, %v; want both released, nothing recorded", report, err)
	}
	if all, err := db.ListAllocations(ctx); err != nil || len(all) != 0 {
		t.Fatalf("ledger after the run: %v, %v; want it empty", all, err)
	}
}

// marksRefused is a ledger that reads migration marks but refuses to write them, as a PostgreSQL
// ledger does for a role without INSERT on ledger_meta.
type marksRefused struct{ database.DB }

func (m marksRefused) MarkMigrated(context.Context, string) error {
	return errors.New("permission denied for table ledger_meta")
}

func (m marksRefused) Migrated(ctx context.Context, resourceID string) (bool, error) {
	return m.DB.(database.MigrationMarks).Migrated(ctx, resourceID)
}

// An assignment recorded whose mark the ledger refuses is imported (in the report and the ledger)
// and the error says so: it is in the ledger but unmarked, to be marked by a run once the ledger
// takes marks. Before, the error counted it among the assignments "not imported", which the line
// "imported" of the same run contradicted.
func TestImportSaysAnAssignmentItCouldNotMarkIsInTheLedger(t *testing.T) {
	ctx := context.Background()
	db := ledgertest.Open(t, "sqlite://"+filepath.Join(t.TempDir(), "ledger.db"))
	p, err := New([]byte(`{"runtimes": [{"host": "http://h1:9091", "slots": 2}]}`), marksRefused{db}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	report, err := p.(*Provisioner).Import(ctx, []Assignment{{ResourceID: "r1", Host: "http://h1:9091", Slots: 1}})
	if err == nil || strings.Contains(err.Error(), "not imported") ||
		!strings.Contains(err.Error(), "1 of 1 assignments are in the ledger but not marked as migrated") ||
		!strings.Contains(err.Error(), "runtime r1: permission denied for table ledger_meta") {
		t.Fatalf("error %v: want r1 said to be in the ledger, unmarked", err)
	}
	if len(report.Imported) != 1 || report.Imported[0].ResourceID != "r1" {
		t.Fatalf("imported %+v, want r1", report.Imported)
	}
	if a, err := db.FindAllocation(ctx, "r1"); err != nil || a == nil {
		t.Fatalf("r1's allocation %+v, %v: want it recorded", a, err)
	}
}
