package database

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// usage is a host's row of host_usage, or of the recount of allocations.
type usage struct{ Allocations, Slots int64 }

// hostUsageRows reads host, count and slot sum per host with query, on the store behind db.
func hostUsageRows(t *testing.T, db DB, query string) map[string]usage {
	t.Helper()
	ctx := testContext(t)
	out := map[string]usage{}
	var rows hostSumRows
	switch d := db.(type) {
	case *sqliteDB:
		r, err := d.db.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Close() }()
		rows = r
	case *postgresDB:
		r, err := d.pool.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows = r
	default:
		t.Fatalf("unknown DB type %T", db)
	}
	for rows.Next() {
		var h string
		var n, slots int64
		if err := rows.Scan(&h, &n, &slots); err != nil {
			t.Fatal(err)
		}
		if n != 0 || slots != 0 { // a host whose allocations all went: its row stays, at zero
			out[h] = usage{n, slots}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkTotalsMatchRecount compares the running totals (host_usage, and UsedSlotsByHost that reads
// them) with a recount of the allocations table.
func checkTotalsMatchRecount(t *testing.T, db DB, when string) {
	t.Helper()
	recount := hostUsageRows(t, db, `SELECT host, count(*), coalesce(sum(slots), 0) FROM allocations GROUP BY host`)
	totals := hostUsageRows(t, db, `SELECT host, allocations, slots FROM host_usage`)
	if !reflect.DeepEqual(totals, recount) {
		t.Fatalf("%s: host_usage = %v, recount of allocations = %v", when, totals, recount)
	}
	used, err := db.UsedSlotsByHost(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for h, u := range recount {
		want[h] = int(u.Slots)
	}
	if !reflect.DeepEqual(used, want) {
		t.Fatalf("%s: UsedSlotsByHost = %v, recount = %v", when, used, want)
	}
}

// The running totals of slots per host never drift from the allocations they sum: after random
// allocates, resizes (including to 0 slots), moves between hosts, deletes (of present and absent
// IDs) and refused placements, and after the same mix run concurrently through two handles (deletes
// do not take the ledger's lock), host_usage equals a recount.
func TestHostUsageMatchesRecount(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn)
		rng := rand.New(rand.NewPCG(11, uint64(len(dsn))))
		hosts := []string{"h1", "h2", "h3"}
		refused := &placeError{reason: "no"}
		step := func(db DB, rng *rand.Rand, ids int) error {
			id := fmt.Sprintf("r%d", rng.IntN(ids))
			switch op := rng.IntN(10); {
			case op < 6: // allocate, or resize/move an existing one
				host, slots := hosts[rng.IntN(len(hosts))], rng.IntN(4)
				_, err := db.Allocate(ctx, id, func(cur *Allocation, _ map[string]int) (*Allocation, error) {
					if cur != nil && rng.IntN(2) == 0 {
						host = cur.Host // resize in place
					}
					return &Allocation{Provisioner: "static", Host: host, Slots: slots}, nil
				})
				return err
			case op < 7:
				_, err := db.Allocate(ctx, id, func(*Allocation, map[string]int) (*Allocation, error) { return nil, refused })
				if err != refused {
					return fmt.Errorf("refused placement: %v", err)
				}
				return nil
			default:
				_, err := db.DeleteAllocation(ctx, id)
				return err
			}
		}
		for i := range 300 {
			if err := step(db, rng, 40); err != nil {
				t.Fatal(err)
			}
			if i%50 == 49 {
				checkTotalsMatchRecount(t, db, fmt.Sprintf("after %d operations", i+1))
			}
		}

		other := mustOpen(t, dsn)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w, h := range []DB{db, other, db, other} {
			wg.Add(1)
			go func(h DB, seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, 7))
				for range 100 {
					if err := step(h, rng, 20); err != nil {
						errs <- err
						return
					}
				}
			}(h, uint64(w))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		checkTotalsMatchRecount(t, db, "after concurrent operations through two handles")
	})
}

// A ledger that already holds allocations gets its totals from a recount when the host_usage
// migration runs (rows of a 0-slot allocation included), and they stay right afterwards.
func TestHostUsageBackfilled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		driver, now := storeDriver(dsn)
		var rows []string
		for i, r := range []struct {
			host  string
			slots int
		}{{"http://a:9091", 2}, {"http://a:9091", 3}, {"http://b:9091", 0}, {"http://c:9091", 4}} {
			rows = append(rows, fmt.Sprintf(`INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at)
				VALUES ('r%d', 'pool', '%s', %d, %s, %s)`, i, r.host, r.slots, now, now))
		}
		// Version 4: the one before host_usage; Open applies the rest.
		storeAtVersion(t, driver, dsn, 4, rows...)
		db := mustOpen(t, dsn)
		used, err := db.UsedSlotsByHost(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"http://a:9091": 5, "http://b:9091": 0, "http://c:9091": 4}; !reflect.DeepEqual(used, want) {
			t.Fatalf("UsedSlotsByHost after the migration = %v, want %v", used, want)
		}
		checkTotalsMatchRecount(t, db, "after the migration")
		if _, err := db.Allocate(testContext(t), "r9", fixed("http://b:9091", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteAllocation(testContext(t), "r3"); err != nil {
			t.Fatal(err)
		}
		checkTotalsMatchRecount(t, db, "after an allocate and a delete")
	})
}

// hotQuery is a query the ledger runs once per runtime (or once per Allocate): its plan must not read
// the whole allocations table. batch marks the one query that reads all allocations by design
// (ListAllocations: once per inventory or capacity read, not per runtime); it is logged, not checked.
// control marks the sum over allocations that host_usage replaced: its plan must show the full scan,
// or the check would not see one.
type hotQuery struct {
	name           string
	query          string
	args           []any
	batch, control bool
}

// sumOverAllocations is how Allocate read the slots in use per host before host_usage (O(N)), and how
// a read-only handle still reads them on a store from before it.
const sumOverAllocations = usedFromAllocationsQuery

// The queries on the per-runtime paths (Allocate: find, totals, upsert; release; check/read; the
// ledger's identity) use an index on both backends, on a ledger of 5,000 allocations: EXPLAIN
// (PostgreSQL, after ANALYZE) and EXPLAIN QUERY PLAN (SQLite) show no full scan of allocations. The
// plans are logged (go test -v) for BENCHMARKS.md.
func TestHotQueriesUseIndexes(t *testing.T) {
	const rows = 5000
	t.Run(DriverSQLite, func(t *testing.T) {
		db := mustOpen(t, backends()[0].newDSN(t)).(*sqliteDB)
		prefill(t, db, rows)
		rawExec(t, db, `ANALYZE`)
		up := []any{"r1", "pool", "h1", 1, 0, 0, "name", "v1", false, "", "{}", false}
		for _, q := range []hotQuery{
			{name: "find (check/read, Allocate, release)", query: sqliteFindQuery, args: []any{"prefill-7"}},
			{name: "slots in use per host (Allocate)", query: sqliteUsedQuery},
			{name: "upsert (Allocate)", query: sqliteUpsertQuery, args: up},
			{name: "release", query: sqliteDeleteQuery, args: []any{"prefill-7"}},
			{name: "release of a claimed runtime", query: sqliteDeleteClaimedAtQuery, args: []any{"prefill-7", 0}},
			{name: "identity", query: sqliteMetaQuery, args: []any{identityKey}},
			{name: "host_usage trigger: subtract", query: `UPDATE host_usage SET allocations = allocations - 1, slots = slots - 1 WHERE host = ?`, args: []any{"h1"}},
			{name: "list (batch: inventory, capacity)", query: sqliteListQuery, batch: true},
			{name: "control: the sum over allocations that host_usage replaced", query: sumOverAllocations, control: true},
		} {
			var plan []string
			r, err := db.db.QueryContext(testContext(t), `EXPLAIN QUERY PLAN `+q.query, q.args...)
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			for r.Next() {
				var id, parent, unused int
				var detail string
				if err := r.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			checkPlan(t, q, plan, func(line string) bool { return strings.HasPrefix(line, "SCAN allocations") })
		}
	})
	t.Run(DriverPostgres, func(t *testing.T) {
		db := mustOpen(t, backends()[1].newDSN(t)).(*postgresDB)
		prefill(t, db, rows)
		rawExec(t, db, `ANALYZE`)
		up := []any{"r1", "pool", "h1", int32(1), nowMicros(), "name", "v1", false, "", "{}", false}
		for _, q := range []hotQuery{
			{name: "find (check/read, Allocate, release)", query: pgFindQuery, args: []any{"prefill-7"}},
			{name: "slots in use per host (Allocate), the function's body", query: `SELECT host, slots FROM host_usage WHERE allocations > 0`},
			{name: "slots in use per host (Allocate)", query: pgUsedQuery},
			{name: "upsert (Allocate)", query: pgUpsertQuery, args: up},
			{name: "release", query: pgDeleteQuery, args: []any{"prefill-7"}},
			{name: "release of a claimed runtime", query: pgDeleteClaimedAtQuery, args: []any{"prefill-7", nowMicros()}},
			{name: "identity", query: pgMetaQuery, args: []any{identityKey}},
			{name: "host_usage trigger: subtract", query: `UPDATE host_usage SET allocations = allocations - 1, slots = slots - 1 WHERE host = $1`, args: []any{"h1"}},
			{name: "list (batch: inventory, capacity)", query: pgListQuery, batch: true},
			{name: "control: the sum over allocations that host_usage replaced", query: sumOverAllocations, control: true},
		} {
			r, err := db.pool.Query(testContext(t), `EXPLAIN `+q.query, q.args...)
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
			var plan []string
			for r.Next() {
				var line string
				if err := r.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, strings.TrimSpace(line))
			}
			r.Close()
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			checkPlan(t, q, plan, func(line string) bool { return strings.Contains(line, "Seq Scan on allocations") })
		}
	})
}

func checkPlan(t *testing.T, q hotQuery, plan []string, fullScan func(string) bool) {
	t.Helper()
	t.Logf("%s: %s", q.name, strings.Join(plan, " | "))
	scans := false
	for _, line := range plan {
		scans = scans || fullScan(line)
	}
	switch {
	case q.control && !scans:
		t.Errorf("%s: no full scan of allocations found in its plan, so the check cannot see one:\n%s", q.name, strings.Join(plan, "\n"))
	case !q.control && !q.batch && scans:
		t.Errorf("%s reads the whole allocations table:\n%s", q.name, strings.Join(plan, "\n"))
	}
}
