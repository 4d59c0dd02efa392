-- The ledger's own facts, one row per key. 'ledger_id' is the ledger's identity: a random UUID made
-- once, here, when the ledger is created or first migrated by a provider that knows identities. A
-- runtime records the identity of the ledger it was allocated in, so that a refresh against another
-- ledger (an empty database, a typo in ledger_dsn) is an error, not "deleted".
-- gen_random_uuid() is built in from PostgreSQL 13.
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO ledger_meta (key, value) VALUES ('ledger_id', gen_random_uuid()::text)
ON CONFLICT (key) DO NOTHING;
