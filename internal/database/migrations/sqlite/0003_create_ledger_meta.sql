-- The ledger's own facts, one row per key. 'ledger_id' is the ledger's identity: a random UUID made
-- once, here, when the ledger is created or first migrated by a provider that knows identities. A
-- runtime records the identity of the ledger it was allocated in, so that a refresh against another
-- ledger (a new CI runner's empty default ledger, a typo in ledger_dsn) is an error, not "deleted".
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO ledger_meta (key, value) VALUES ('ledger_id',
    lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
    substr(lower(hex(randomblob(2))), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' ||
    lower(hex(randomblob(6))))
ON CONFLICT (key) DO NOTHING;
