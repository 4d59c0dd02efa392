package database

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"

	"go.uber.org/zap"
)

// Backend names, as returned by DB.Driver.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// DefaultSQLitePathEnv is the environment variable DefaultDSN consults first: the XDG base directory
// for user data. When it is unset, empty or not an absolute path (the XDG spec says to ignore relative
// values), $HOME/.local/share is used instead.
const DefaultSQLitePathEnv = "XDG_DATA_HOME"

// Pieces of the default ledger location: <data home>/<DefaultDataDirName>/<DefaultSQLiteFileName>.
const (
	DefaultDataDirName    = "terraform-provider-rill"
	DefaultSQLiteFileName = "ledger.db"
)

// ErrInvalidDSN is wrapped by the errors Open returns for a DSN it cannot interpret.
var ErrInvalidDSN = errors.New("invalid ledger DSN")

// acceptedForms is listed in the error for a DSN Open does not understand.
const acceptedForms = `accepted forms: "sqlite:///absolute/path/ledger.db", "sqlite://relative/path/ledger.db" ` +
	`(relative to the working directory), "sqlite::memory:", "postgres://user:password@host:5432/dbname?sslmode=..." ` +
	`or "postgresql://..."`

// Open opens the ledger named by dsn, creating or migrating its schema as needed, and returns it.
// The backend is chosen by the DSN's scheme:
//
//   - "sqlite:///abs/path/ledger.db": a SQLite file at an absolute path (note the three slashes).
//   - "sqlite://rel/path/ledger.db": a SQLite file at a path relative to the process's working
//     directory at the time Open is called (for a Terraform provider that is the directory Terraform
//     runs in, normally the root module). A leading "~/" is replaced by the user's home directory.
//     Any other character, '?' and '#' included, is part of the file name: SQLite DSNs take no query
//     parameters, the pragmas are chosen by this package.
//   - "sqlite::memory:": a private in-memory SQLite database that lives until Close; for tests. Each
//     Open of it yields a new, empty database.
//   - "postgres://..." or "postgresql://...": a PostgreSQL database, in the URL form libpq and pgx
//     accept (including query parameters such as sslmode, search_path or connect_timeout).
//
// Missing parent directories of a SQLite file are created (mode 0700). The DSN itself, and thus any
// password in it, never appears in a returned error or a log line; Redact is applied instead.
// A nil logger is allowed.
func Open(ctx context.Context, dsn string, logger *zap.Logger) (DB, error) {
	return open(ctx, dsn, logger, false)
}

// OpenReadOnly opens the ledger named by dsn for reading only, as `terraform plan` needs it: it
// creates no file, directory, table or row and runs no migration. A ledger that does not exist (no
// SQLite file; a PostgreSQL database without the ledger's schema) yields a handle that reads as
// empty and whose Identity wraps ErrNoLedger. A ledger whose schema is older than this binary's is
// read as it is (see readQueries: columns it lacks read as unknown, slots in use summed from its
// allocations; Identity.ID is "" until a write Open migrates it); a newer one is refused, as by
// Open. Writes through the handle fail with ErrReadOnly. An existing SQLite file is read without
// write access to its directory, and without SQLite's -wal and -shm files unless a writer has it
// open (sqliteDB.read).
func OpenReadOnly(ctx context.Context, dsn string, logger *zap.Logger) (DB, error) {
	return open(ctx, dsn, logger, true)
}

func open(ctx context.Context, dsn string, logger *zap.Logger, readOnly bool) (DB, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	driver, target, err := parseDSN(dsn)
	switch {
	case err != nil:
		return nil, err
	case driver == DriverSQLite:
		return openSQLite(ctx, target, logger, readOnly)
	default:
		return openPostgres(ctx, target, logger, readOnly)
	}
}

// ValidateDSN returns the error Open would return for dsn's form, without opening, reading, creating
// or connecting to anything: the provider's check in `terraform validate`, so that both accept exactly
// the same forms (CheckDSN adds what the PostgreSQL driver refuses). Like Open's, its errors wrap
// ErrInvalidDSN, list the accepted forms and never hold a password.
func ValidateDSN(dsn string) error {
	_, _, err := parseDSN(dsn)
	return err
}

// CheckDSN returns the error Open would return for dsn before it connects to or opens anything:
// ValidateDSN's, and for PostgreSQL the driver's parse of the URL (an sslmode it does not know, a bad
// port, a malformed host), which ValidateDSN does not do. That parse reads the files the DSN names
// (sslrootcert, sslcert, sslkey), so the provider calls CheckDSN when it is configured for a plan or
// an apply, and only ValidateDSN in `terraform validate`, which may run where those files are not.
// Its errors wrap ErrInvalidDSN and never hold a password.
func CheckDSN(dsn string) error {
	driver, target, err := parseDSN(dsn)
	if err == nil && driver == DriverPostgres {
		_, err = parsePostgres(target)
	}
	return err
}

// parseDSN picks the backend for dsn and what to open: the absolute SQLite file ("" for an in-memory
// database) or the PostgreSQL URL with its scheme in lower case.
func parseDSN(dsn string) (driver, target string, err error) {
	switch {
	case dsn == "":
		return "", "", fmt.Errorf("%w: empty DSN (use DefaultDSN() for the default SQLite ledger); %s", ErrInvalidDSN, acceptedForms)
	case dsn == "sqlite::memory:":
		return DriverSQLite, "", nil
	case strings.HasPrefix(dsn, "sqlite://"):
		path, err := sqlitePathFromDSN(dsn)
		return DriverSQLite, path, err
	case hasPrefixFold(dsn, "postgres://"), hasPrefixFold(dsn, "postgresql://"):
		scheme, rest, _ := strings.Cut(dsn, "://")
		return DriverPostgres, strings.ToLower(scheme) + "://" + rest, nil
	default:
		return "", "", fmt.Errorf("%w: unsupported DSN (%s); %s", ErrInvalidDSN, unsupportedReason(dsn), acceptedForms)
	}
}

// dsnScheme is what unsupportedReason shows of a DSN: a URL scheme (RFC 3986), which holds no secret.
var dsnScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// unsupportedReason says what is wrong with a DSN parseDSN does not accept, without echoing it: a
// DSN it cannot parse cannot be redacted reliably either (Redact needs a well-formed "scheme://"
// or key=value form), and it may hold a password that would reach plan output and logs.
func unsupportedReason(dsn string) string {
	if strings.TrimSpace(dsn) != dsn {
		return "it has leading or trailing whitespace"
	}
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && dsnScheme.MatchString(scheme) {
		return fmt.Sprintf("scheme %q", scheme)
	}
	return "no scheme:// at its start; the value is not shown, as it may hold a password"
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// sqlitePathFromDSN turns "sqlite://<path>" into an absolute, cleaned file path.
func sqlitePathFromDSN(dsn string) (string, error) {
	p := strings.TrimPrefix(dsn, "sqlite://")
	switch {
	case p == "":
		return "", fmt.Errorf("%w: %q names no file; %s", ErrInvalidDSN, dsn, acceptedForms)
	case p == ":memory:":
		return "", fmt.Errorf("%w: %q: write \"sqlite::memory:\" for an in-memory ledger", ErrInvalidDSN, dsn)
	case strings.HasSuffix(p, "/"):
		return "", fmt.Errorf("%w: %q names a directory, not a file; %s", ErrInvalidDSN, dsn, acceptedForms)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%w: %q: cannot expand ~: %v", ErrInvalidDSN, dsn, err)
		}
		p = filepath.Join(home, rest)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalidDSN, dsn, err)
	}
	// An existing directory without the trailing '/' (sqlite:///var/lib/rill): SQLite would fail with
	// "unable to open database file (14)" only when the apply first writes.
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%w: %q names a directory, not a file (add a file name, such as %s); %s",
			ErrInvalidDSN, dsn, "sqlite://"+filepath.Join(abs, DefaultSQLiteFileName), acceptedForms)
	}
	return abs, nil
}

// DefaultSQLitePath returns the default location of the SQLite ledger:
// $XDG_DATA_HOME/terraform-provider-rill/ledger.db, or $HOME/.local/share/terraform-provider-rill/ledger.db
// when XDG_DATA_HOME is unset or not absolute. When $HOME is unset too, the home directory recorded
// for the current user (/etc/passwd) is used. It does not create anything; Open creates the
// directories.
func DefaultSQLitePath() (string, error) {
	if x := os.Getenv(DefaultSQLitePathEnv); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, DefaultDataDirName, DefaultSQLiteFileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		u, uerr := user.Current()
		if uerr != nil || !filepath.IsAbs(u.HomeDir) {
			return "", fmt.Errorf("default ledger path: neither $%s nor $HOME is set to an absolute path, "+
				"and the current user has no home directory", DefaultSQLitePathEnv)
		}
		home = u.HomeDir
	}
	return filepath.Join(home, ".local", "share", DefaultDataDirName, DefaultSQLiteFileName), nil
}

// DefaultDSN returns the DSN of the default SQLite ledger, "sqlite://" + DefaultSQLitePath().
func DefaultDSN() (string, error) {
	p, err := DefaultSQLitePath()
	if err != nil {
		return "", err
	}
	return "sqlite://" + p, nil
}

// IsDefaultLocation reports whether a ledger's location (Identity.Location) is the default SQLite
// ledger's on this machine, as DefaultDSN names it now.
func IsDefaultLocation(location string) bool {
	dsn, err := DefaultDSN()
	return err == nil && location == dsn
}

const redactedPassword = "xxxxx"

var (
	redactQueryPassword = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#]*`)
	redactKVQuoted      = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)'(?:[^'\\]|\\.)*'`)
	// Run after redactKVQuoted: a value still starting with a quote is unterminated, mask the rest.
	redactKVPlain = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)(?:'.*|[^\s]*)`)
)

// Redact returns dsn with every password in it replaced by "xxxxx", for use in logs and errors.
// It handles URL forms (the userinfo password and password/sslpassword query parameters) and
// libpq key=value forms (password=... and password='...'). For malformed input it errs on the
// side of masking too much. SQLite DSNs carry no secrets and are returned unchanged.
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "sqlite:") {
		return dsn
	}
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok && !strings.ContainsAny(scheme, " =/") {
		// The userinfo password runs from the first ':' to the '@' that ends the authority. Passwords
		// may contain unescaped '@', '/' or '?', so take the last '@' of the whole string: that may
		// mask more than the password, never less.
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if colon := strings.Index(rest[:at], ":"); colon >= 0 {
				rest = rest[:colon+1] + redactedPassword + rest[at:]
			}
		}
		rest = redactQueryPassword.ReplaceAllString(rest, "${1}"+redactedPassword)
		return scheme + "://" + rest
	}
	dsn = redactKVQuoted.ReplaceAllString(dsn, "${1}"+redactedPassword)
	return redactKVPlain.ReplaceAllString(dsn, "${1}"+redactedPassword)
}
