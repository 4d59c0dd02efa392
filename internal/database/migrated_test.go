package database

import (
	"errors"
	"testing"
)

// Migration marks: none at first, then one (marking twice is marking once), seen by a
// read-only handle, which may not mark; on both backends.
func TestMigrationMarks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		db := mustOpen(t, dsn).(MigrationMarks)
		if got, err := db.Migrated(ctx, "r1"); err != nil || got {
			t.Fatalf("Migrated before a mark = %v, %v", got, err)
		}
		for range 2 {
			if err := db.MarkMigrated(ctx, "r1"); err != nil {
				t.Fatal(err)
			}
		}
		reader := mustOpenReadOnly(t, dsn).(MigrationMarks)
		for name, h := range map[string]MigrationMarks{"writer": db, "reader": reader} {
			if got, err := h.Migrated(ctx, "r1"); err != nil || !got {
				t.Errorf("%s: Migrated after the mark = %v, %v", name, got, err)
			}
			if got, err := h.Migrated(ctx, "r2"); err != nil || got {
				t.Errorf("%s: Migrated of another resource = %v, %v", name, got, err)
			}
		}
		if err := reader.MarkMigrated(ctx, "r2"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("MarkMigrated on a read-only handle = %v, want ErrReadOnly", err)
		}
	})
}
