-- Allocations of slots on hosts, one per resource. Timestamps are Unix microseconds (UTC).
CREATE TABLE IF NOT EXISTS allocations (
    resource_id TEXT    NOT NULL PRIMARY KEY,
    provisioner TEXT    NOT NULL,
    host        TEXT    NOT NULL,
    slots       INTEGER NOT NULL CHECK (slots >= 0),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS allocations_host_idx ON allocations (host);
