-- Running totals of the slots in use per host, so that Allocate reads a handful of rows (one per host)
-- instead of summing every allocation (O(N) per Allocate, O(N^2) per apply of N runtimes).
-- The triggers below keep them in the same transaction as every write to allocations (allocate,
-- resize, move, release, and any later migration), so they cannot drift from a recount:
-- TestHostUsageMatchesRecount checks that after random allocates, resizes, moves and deletes.
-- allocations counts the rows (a host whose allocations hold 0 slots is still "in use"; a row with
-- allocations = 0 is a host that no longer has any, and is left out of the totals read).
--
-- Each trigger adds or subtracts the row's own OLD/NEW values with a relative UPDATE, under the
-- host_usage row's lock, so concurrent writers (a DeleteAllocation does not take the advisory lock)
-- each apply exactly their own change. Lock order is always an allocations row, then host_usage rows:
-- only one Allocate runs at a time (advisory lock), and a delete touches one host_usage row, so no
-- cycle can form.
--
-- The trigger function and the read (rill_host_usage()) are SECURITY DEFINER, with search_path pinned
-- to this schema: a role that may only read and write allocations (and read schema_migrations and
-- ledger_meta), as granted before this migration existed, keeps working without a grant on host_usage.

-- Writers wait from here to COMMIT: no allocation changes between the recount below and the triggers
-- taking over (SHARE ROW EXCLUSIVE conflicts with INSERT/UPDATE/DELETE, not with reads).
LOCK TABLE allocations IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE IF NOT EXISTS host_usage (
    host        TEXT   NOT NULL PRIMARY KEY,
    allocations BIGINT NOT NULL,
    slots       BIGINT NOT NULL
);

CREATE OR REPLACE FUNCTION rill_allocations_usage() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    IF TG_OP = 'UPDATE' OR TG_OP = 'DELETE' THEN
        UPDATE host_usage SET allocations = allocations - 1, slots = slots - OLD.slots WHERE host = OLD.host;
    END IF;
    IF TG_OP = 'UPDATE' OR TG_OP = 'INSERT' THEN
        INSERT INTO host_usage AS u (host, allocations, slots) VALUES (NEW.host, 1, NEW.slots)
        ON CONFLICT (host) DO UPDATE SET allocations = u.allocations + 1, slots = u.slots + excluded.slots;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION rill_host_usage() RETURNS TABLE (host TEXT, slots BIGINT)
    LANGUAGE sql STABLE SECURITY DEFINER AS $$
    SELECT host, slots FROM host_usage WHERE allocations > 0
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION rill_allocations_usage() SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION rill_host_usage() SET search_path = %I, pg_temp', current_schema());
END
$$;

DROP TRIGGER IF EXISTS allocations_usage_insert_delete ON allocations;
CREATE TRIGGER allocations_usage_insert_delete AFTER INSERT OR DELETE ON allocations
    FOR EACH ROW EXECUTE FUNCTION rill_allocations_usage();

DROP TRIGGER IF EXISTS allocations_usage_update ON allocations;
CREATE TRIGGER allocations_usage_update AFTER UPDATE OF host, slots ON allocations
    FOR EACH ROW WHEN (OLD.host IS DISTINCT FROM NEW.host OR OLD.slots IS DISTINCT FROM NEW.slots)
    EXECUTE FUNCTION rill_allocations_usage();

DELETE FROM host_usage;
INSERT INTO host_usage (host, allocations, slots)
SELECT host, count(*), sum(slots) FROM allocations GROUP BY host;
