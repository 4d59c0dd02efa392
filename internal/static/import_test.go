package static

import (
	"context"
	"strings"
	"testing"
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
