package database

import "strings"

// readQueries are the queries behind a handle's reads (FindAllocation, ListAllocations,
// UsedSlotsByHost), for the schema version of its store.
//
// A handle from Open migrates its store first and reads with the newest queries. A handle from
// OpenReadOnly migrates nothing (`terraform plan` writes nothing), and every `terraform apply`
// refreshes through it before its first write opens the ledger for writing: so it must read a store
// an older provider left as it is, or no apply could ever migrate it. Its queries name only what the
// store's version has: the record columns (migration "allocation_details") are read as NULL, i.e.
// unknown, as on rows written before them; the slots in use per host are summed from the allocations
// while the running totals (migration "host_usage") do not exist. Migrations only add, so these
// queries stay right when another process migrates the store while the handle is open.
type readQueries struct {
	find, list, used string
}

// usedFromAllocationsQuery reads the slots in use per host on a store without host_usage, on both
// backends (O(N), as every Allocate did before the running totals).
const usedFromAllocationsQuery = `SELECT host, sum(slots) FROM allocations GROUP BY host`

// The migrations that change what the reads may name, by description (see goSteps).
const (
	migrationRecordColumns = "allocation_details"
	migrationHostUsage     = "host_usage"
)

// readQueriesAt returns the read queries for a store at schema version `version` of migrations all:
// newest are the backend's newest queries, columns its newest column list, and nullColumns the same
// list with the record columns as NULLs of their types.
func readQueriesAt(all []migration, version int, newest readQueries, columns, nullColumns string) readQueries {
	q := newest
	if version < versionOf(all, migrationRecordColumns) {
		q.find = strings.Replace(q.find, columns, nullColumns, 1)
		q.list = strings.Replace(q.list, columns, nullColumns, 1)
	}
	if version < versionOf(all, migrationHostUsage) {
		q.used = usedFromAllocationsQuery
	}
	return q
}

// versionOf returns the version of the migration described desc ("host_usage"), or 0 when there is
// none (TestReadsKnowTheirMigrations keeps that from happening).
func versionOf(all []migration, desc string) int {
	for _, m := range all {
		if migrationDescription(m.Name) == desc {
			return m.Version
		}
	}
	return 0
}

// schemaVersion is the version of a store whose applied migrations are applied: the newest of them,
// since Open applies them in order, each in the transaction that records it.
func schemaVersion(applied map[int]bool) int {
	v := 0
	for m := range applied {
		v = max(v, m)
	}
	return v
}
