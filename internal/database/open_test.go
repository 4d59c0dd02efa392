package database

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenUnknownScheme(t *testing.T) {
	for _, dsn := range []string{"", "mysql://u:hunter2@h/db", "/var/lib/ledger.db", "sqlite:/abs/ledger.db", "file:ledger.db"} {
		_, err := Open(testContext(t), dsn, nil)
		if !errors.Is(err, ErrInvalidDSN) {
			t.Fatalf("Open(%q) = %v, want ErrInvalidDSN", dsn, err)
		}
		if verr := ValidateDSN(dsn); verr == nil || verr.Error() != err.Error() {
			t.Errorf("ValidateDSN(%q) = %v, want Open's error %v", dsn, verr, err)
		}
		msg := err.Error()
		for _, form := range []string{"sqlite:///", "sqlite://relative", "sqlite::memory:", "postgres://", "postgresql://"} {
			if !strings.Contains(msg, form) {
				t.Errorf("Open(%q) error does not list %q: %v", dsn, form, msg)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("error leaks the password: %v", msg)
		}
	}
	for _, dsn := range []string{"sqlite://", "sqlite://:memory:", "sqlite:///tmp/dir/"} {
		if _, err := Open(testContext(t), dsn, nil); !errors.Is(err, ErrInvalidDSN) {
			t.Errorf("Open(%q) = %v, want ErrInvalidDSN", dsn, err)
		}
		if err := ValidateDSN(dsn); !errors.Is(err, ErrInvalidDSN) {
			t.Errorf("ValidateDSN(%q) = %v, want ErrInvalidDSN", dsn, err)
		}
	}
	// A directory that exists, named without the trailing '/': the plan says so (SQLite's own error
	// came at the apply's first write, as "unable to open database file (14)").
	dir := t.TempDir()
	if err := ValidateDSN("sqlite://" + dir); !errors.Is(err, ErrInvalidDSN) || !strings.Contains(err.Error(), "names a directory, not a file") ||
		!strings.Contains(err.Error(), "sqlite://"+filepath.Join(dir, DefaultSQLiteFileName)) {
		t.Errorf("ValidateDSN(sqlite://%s) = %v, want ErrInvalidDSN saying it names a directory", dir, err)
	}
}

// The plan-time check accepts what Open accepts (the provider once had its own, case-sensitive copy
// that rejected POSTGRES:// and let "sqlite://" through), and touches nothing.
func TestValidateDSNAcceptsOpensForms(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "not", "created", "ledger.db")
	for _, dsn := range []string{"sqlite://" + missing, "sqlite://rel/ledger.db", "sqlite::memory:",
		"postgres://u:p@h:5432/db?sslmode=disable", "POSTGRES://h/db", "PostgreSQL://h/db"} {
		if err := ValidateDSN(dsn); err != nil {
			t.Errorf("ValidateDSN(%q) = %v, want nil", dsn, err)
		}
		if err := CheckDSN(dsn); err != nil {
			t.Errorf("CheckDSN(%q) = %v, want nil", dsn, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("ValidateDSN created %s (stat: %v)", filepath.Dir(missing), err)
	}
}

func TestOpenSQLiteRelativePathAndDirectories(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db := mustOpen(t, "sqlite://nested/dirs/ledger.db")
	if _, err := db.Allocate(testContext(t), "r1", fixed("h1", 1)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "nested", "dirs", "ledger.db"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("relative ledger not created in the working directory: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "nested")); st.Mode().Perm() != 0o700 {
		t.Errorf("created directory mode %v, want 0700", st.Mode().Perm())
	}
	// WAL is on: a -wal file sits next to the open database.
	if _, err := os.Stat(filepath.Join(dir, "nested", "dirs", "ledger.db-wal")); err != nil {
		t.Errorf("no WAL file: %v", err)
	}
	// The same file through its absolute path.
	abs := mustOpen(t, "sqlite://"+filepath.Join(dir, "nested", "dirs", "ledger.db"))
	if _, err := abs.FindAllocation(testContext(t), "r1"); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSQLiteOddFileNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"with space.db", "q?mark=1&x.db", "hash#frag.db", "pct%20.db"} {
		p := filepath.Join(dir, name)
		db := mustOpen(t, "sqlite://"+p)
		if _, err := db.Allocate(testContext(t), "r1", fixed("h1", 1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: file not created under its own name: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".db") && !strings.HasSuffix(e.Name(), "-wal") && !strings.HasSuffix(e.Name(), "-shm") {
			t.Errorf("unexpected file %q", e.Name())
		}
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	ctx := testContext(t)
	a := mustOpen(t, "sqlite::memory:")
	b := mustOpen(t, "sqlite::memory:")
	if a.Driver() != DriverSQLite {
		t.Fatalf("Driver() = %q", a.Driver())
	}
	if _, err := a.Allocate(ctx, "r1", fixed("h1", 3)); err != nil {
		t.Fatal(err)
	}
	if used, err := a.UsedSlotsByHost(ctx); err != nil || used["h1"] != 3 {
		t.Fatalf("UsedSlotsByHost = %v, %v", used, err)
	}
	if _, err := b.FindAllocation(ctx, "r1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("two in-memory ledgers share data: %v", err)
	}
	// Concurrent use of the single connection does not deadlock.
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = "m" + string(rune('a'+i))
	}
	ok, full, err := allocateMany(ctx, []DB{a}, ids, placer(map[string]int{"h1": 13}, 1, 0))
	if err != nil || ok != 10 || full != 10 {
		t.Fatalf("allocateMany on memory ledger: ok=%d full=%d err=%v", ok, full, err)
	}
}

func TestDefaultDSN(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	t.Setenv("HOME", "/home/someone")
	if got, err := DefaultDSN(); err != nil || got != "sqlite:///xdg/data/terraform-provider-rill/ledger.db" {
		t.Errorf("DefaultDSN with XDG_DATA_HOME = %q, %v", got, err)
	}
	for _, xdg := range []string{"", "relative/dir"} {
		t.Setenv("XDG_DATA_HOME", xdg)
		if got, err := DefaultDSN(); err != nil || got != "sqlite:///home/someone/.local/share/terraform-provider-rill/ledger.db" {
			t.Errorf("DefaultDSN with XDG_DATA_HOME=%q = %q, %v", xdg, got, err)
		}
	}

	// Open creates the directories of the default location.
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dsn, err := DefaultDSN()
	if err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dsn)
	if _, err := os.Stat(filepath.Join(data, "terraform-provider-rill", "ledger.db")); err != nil {
		t.Fatal(err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://user:hunter2@db.example:5432/ledger?sslmode=require":  "postgres://user:xxxxx@db.example:5432/ledger?sslmode=require",
		"postgresql://user:hunter2@db/ledger":                             "postgresql://user:xxxxx@db/ledger",
		"postgres://user@db/ledger":                                       "postgres://user@db/ledger",
		"postgres://db/ledger?user=u&password=hunter2&sslmode=disable":    "postgres://db/ledger?user=u&password=xxxxx&sslmode=disable",
		"postgres://db/ledger?sslpassword=hunter2":                        "postgres://db/ledger?sslpassword=xxxxx",
		"postgres://user:hun@ter/2?@db/ledger":                            "postgres://user:xxxxx@db/ledger",
		"POSTGRES://user:hunter2@db/ledger":                               "POSTGRES://user:xxxxx@db/ledger",
		"host=db user=u password=hunter2 dbname=ledger":                   "host=db user=u password=xxxxx dbname=ledger",
		"host=db password='hunter 2' dbname=ledger":                       "host=db password=xxxxx dbname=ledger",
		"host=db password = 'hunter2":                                     "host=db password = xxxxx",
		"sqlite:///home/u/.local/share/terraform-provider-rill/ledger.db": "sqlite:///home/u/.local/share/terraform-provider-rill/ledger.db",
		"sqlite::memory:":                          "sqlite::memory:",
		"mysql://root:hunter2@tcp(db:3306)/ledger": "mysql://root:xxxxx@tcp(db:3306)/ledger",
		"postgres://user:hunter2@db/ledger?application_name=a@b&password=x": "postgres://user:xxxxx@b&password=xxxxx",
	} {
		got := Redact(in)
		if got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "hunter") {
			t.Errorf("Redact(%q) leaks the password: %q", in, got)
		}
	}
}

// A DSN Open cannot interpret is refused without echoing it: a mistyped scheme or a stray space must
// not carry the password into plan output or logs. The error says what is wrong with it.
func TestUnsupportedDSNErrorsHoldNoPassword(t *testing.T) {
	for dsn, want := range map[string]string{
		" postgres://admin:s3cret@db:5432/ledger": "leading or trailing whitespace",
		"postgres:/admin:s3cret@db:5432/ledger":   "no scheme://",
		"postgress://admin:s3cret@db:5432/ledger": `scheme "postgress"`,
		"mysql://admin:s3cret@db/ledger":          `scheme "mysql"`,
		"admin:s3cret@db:5432/ledger":             "no scheme://",
		"host=db user=admin password=s3cret":      "no scheme://",
		"admin:s3cret@tcp(db)://ledger":           "no scheme://",
		"\tsqlite:///tmp/x.db?password=s3cret":    "leading or trailing whitespace",
		"postgres ://admin:s3cret@db:5432/ledger": "no scheme://",
		"Pöstgres://admin:s3cret@db:5432/ledger":  "no scheme://",
	} {
		err := ValidateDSN(dsn)
		if !errors.Is(err, ErrInvalidDSN) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ValidateDSN(%q) = %v; want ErrInvalidDSN saying %q, without the password", dsn, err, want)
		}
	}
}

// A PostgreSQL URL the driver cannot parse (an unknown sslmode, a bad port, a broken IPv6 host) is
// refused by CheckDSN, the provider's check when it is configured for a plan, with Open's own error
// and without the password. Before, the plan passed (ValidateDSN checks the form only, and the
// plan-time capacity check skips a ledger it cannot read) and every create of the apply failed.
func TestCheckDSNRefusesWhatOpenRefusesBeforeConnecting(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:hunter2@127.0.0.1:1/db?sslmode=bogus",
		"postgres://u@127.0.0.1:1/db?password=hunter2&sslmode=bogus",
		"postgresql://u:hunter2@127.0.0.1:99999999/db",
		"postgres://u:hunter2@[::1:5432/db",
	} {
		_, err := Open(testContext(t), dsn, nil)
		if !errors.Is(err, ErrInvalidDSN) {
			t.Fatalf("Open(%q) = %v, want ErrInvalidDSN", dsn, err)
		}
		if cerr := CheckDSN(dsn); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("CheckDSN(%q) = %v, want Open's error %v", dsn, cerr, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}
