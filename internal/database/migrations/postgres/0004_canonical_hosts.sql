-- Rewrites allocations.host in canonical form (lower-case scheme and host, no trailing dot, no default
-- port, no trailing slash), so that every spelling of a host counts against one capacity. URL
-- canonicalization is not expressible in portable SQL: the work is the Go step "canonical_hosts"
-- (migrations.go, hosturl.Canonical), run right after this file in the same transaction.
SELECT 1;
