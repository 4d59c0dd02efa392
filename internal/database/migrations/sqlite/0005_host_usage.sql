-- Running totals of the slots in use per host, so that Allocate reads a handful of rows (one per host)
-- instead of summing every allocation (O(N) per Allocate, O(N^2) per apply of N runtimes).
-- The triggers below keep them in the same transaction as every write to allocations (allocate,
-- resize, move, release, and any later migration), so they cannot drift from a recount:
-- TestHostUsageMatchesRecount checks that after random allocates, resizes, moves and deletes.
-- allocations counts the rows (a host whose allocations hold 0 slots is still "in use"; a row with
-- allocations = 0 is a host that no longer has any, and is left out of the totals read).
CREATE TABLE IF NOT EXISTS host_usage (
    host        TEXT    NOT NULL PRIMARY KEY,
    allocations INTEGER NOT NULL,
    slots       INTEGER NOT NULL
);

CREATE TRIGGER IF NOT EXISTS allocations_usage_insert AFTER INSERT ON allocations
BEGIN
    INSERT INTO host_usage (host, allocations, slots) VALUES (NEW.host, 1, NEW.slots)
    ON CONFLICT (host) DO UPDATE SET allocations = allocations + 1, slots = slots + excluded.slots;
END;

CREATE TRIGGER IF NOT EXISTS allocations_usage_update AFTER UPDATE OF host, slots ON allocations
WHEN OLD.host IS NOT NEW.host OR OLD.slots IS NOT NEW.slots
BEGIN
    UPDATE host_usage SET allocations = allocations - 1, slots = slots - OLD.slots WHERE host = OLD.host;
    INSERT INTO host_usage (host, allocations, slots) VALUES (NEW.host, 1, NEW.slots)
    ON CONFLICT (host) DO UPDATE SET allocations = allocations + 1, slots = slots + excluded.slots;
END;

CREATE TRIGGER IF NOT EXISTS allocations_usage_delete AFTER DELETE ON allocations
BEGIN
    UPDATE host_usage SET allocations = allocations - 1, slots = slots - OLD.slots WHERE host = OLD.host;
END;

-- Backfill from the allocations as they are. The migration holds the write lock (BEGIN IMMEDIATE), so
-- no allocation changes between this recount and the triggers taking over.
DELETE FROM host_usage;
INSERT INTO host_usage (host, allocations, slots)
SELECT host, count(*), sum(slots) FROM allocations GROUP BY host;
