-- What a runtime's import needs, recorded with its allocation (all NULL on rows written before this
-- migration: unknown, not empty). name is the user's optional name, unique per provisioner; the
-- others record the runtime's arguments (annotations as a JSON object).
ALTER TABLE allocations ADD COLUMN name        TEXT;
ALTER TABLE allocations ADD COLUMN version     TEXT;
ALTER TABLE allocations ADD COLUMN hibernated  INTEGER;
ALTER TABLE allocations ADD COLUMN environment TEXT;
ALTER TABLE allocations ADD COLUMN annotations TEXT;

CREATE UNIQUE INDEX IF NOT EXISTS allocations_provisioner_name_idx ON allocations (provisioner, name) WHERE name IS NOT NULL;
