package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// sqliteBusyTimeout is how long SQLite's own busy handler waits for another connection's (or
// process's) lock in one attempt. Between attempts retryBusy looks at the context, at LockWait and at
// whether other writers make progress; SQLite's handler sees none of these.
const sqliteBusyTimeout = 250 * time.Millisecond

// sqliteNoDeadlineCap bounds the lock waits of an operation whose context has no deadline, even
// while other writers keep making progress (LockWait bounds only a wait without it): such a caller
// must not wait for as long as another apply keeps writing. A variable for the test that shortens it.
var sqliteNoDeadlineCap = 2 * time.Minute

// sqliteDB is the SQLite ledger (modernc.org/sqlite: pure Go, works with CGO_ENABLED=0).
//
// Concurrency, within and across processes:
//   - The file is in WAL mode, so readers never block the writer or each other.
//   - Every read-write transaction starts with BEGIN IMMEDIATE (the driver's _txlock=immediate), which
//     takes SQLite's write lock on the file up front. Allocate reads the ledger and writes its result
//     inside that one transaction, so no other connection in any process can commit between the read
//     and the write: two callers can never both see the same free slot.
//   - Waiting for the lock is done by SQLite's busy handler (250ms per attempt), then by retryBusy, which
//     retries SQLITE_BUSY / SQLITE_LOCKED with backoff until the context ends, or until no other
//     writer has committed for LockWait (a stuck writer), and then fails with a *LockedError naming
//     the file. A retried Allocate calls its PlaceFunc again, on fresh data.
//   - Within one process, writers to the same file (through any number of handles) queue on a channel
//     first, so they do not sleep in the busy handler against each other; only writers in different
//     processes meet in SQLite's lock.
//
// The file must be on a local file system: WAL needs shared memory and POSIX locks that network file
// systems do not reliably provide. Share a ledger between machines with PostgreSQL instead.
type sqliteDB struct {
	db       *sql.DB
	snap     *sql.DB // OpenReadOnly of a file: the lock-free snapshot reader (see read)
	name     string  // file path, or ":memory:"
	file     string  // with snap: name with symbolic links resolved, as SQLite does (its -wal is beside it)
	location string  // the DSN: "sqlite://" + path, or "sqlite::memory:"
	readOnly bool    // from OpenReadOnly: no writes, no migrations
	reads    readQueries
	logger   *zap.Logger
	writers  *sqliteWriters
	identity identityCache
}

var _ DB = (*sqliteDB)(nil)

// sqliteWriters is the in-process writer queue of one SQLite file, shared by all handles on it.
type sqliteWriters struct {
	queue chan struct{} // holds a token while a writer of this process has the file (or waits for its lock)
	// progress is when a writer of this process last saw the file's write lock change hands (its own
	// commit, or another process's, seen by retryBusy), in Unix nanoseconds. A write queued behind one
	// that waits for a stuck writer counts from there, its time in the queue included, so the queue
	// behind a stuck writer ends about LockWait after it stuck, as on PostgreSQL: each queued write
	// waited a LockWait of its own (a destroy of 40 runtimes behind a sqlite3 shell left in BEGIN
	// EXCLUSIVE took 10 minutes, each error saying "waited 15s").
	progress atomic.Int64
	// stuckSince is set when a write gave up on a stuck writer (no change of hands for LockWait): the
	// last progress it had seen, in Unix nanoseconds; 0 once the lock changes hands again. While it is
	// set, a new write tries the lock once (SQLite's busy handler: sqliteBusyTimeout) and gives up,
	// rather than waiting a LockWait of its own: Terraform starts writes -parallelism at a time, and
	// each wave waited LockWait (a destroy of 20 runtimes behind a stuck writer took 33 s, not 15).
	stuckSince  atomic.Int64
	gaveUpAfter atomic.Int64 // with stuckSince: how long that write had seen no progress (about LockWait)
}

// sawProgress records that the file's write lock changed hands at t.
func (w *sqliteWriters) sawProgress(t time.Time) {
	w.progress.Store(t.UnixNano())
	w.stuckSince.Store(0)
}

// lastProgressFor is when a write begun at start counts the write lock's last change of hands from:
// the later of start and the last one seen; or, after a write gave up on a stuck writer, the last one
// that write had seen, and how long it had waited since (earlier; 0 when none).
func (w *sqliteWriters) lastProgressFor(start time.Time) (last time.Time, earlier time.Duration) {
	if stuck := w.stuckSince.Load(); stuck != 0 {
		return time.Unix(0, stuck), time.Duration(w.gaveUpAfter.Load())
	}
	if p := time.Unix(0, w.progress.Load()); p.After(start) {
		return p, 0
	}
	return start, 0
}

// sqliteWriterQueues holds the writer queue of each SQLite file, by absolute path. Entries are never
// removed: a process opens few ledgers.
var sqliteWriterQueues sync.Map // string -> *sqliteWriters

func sqliteWriterQueue(path string) *sqliteWriters {
	fresh := &sqliteWriters{queue: make(chan struct{}, 1)}
	if path == "" {
		return fresh // in-memory: private to the handle
	}
	w, _ := sqliteWriterQueues.LoadOrStore(path, fresh)
	return w.(*sqliteWriters)
}

func openSQLite(ctx context.Context, path string, logger *zap.Logger, readOnly bool) (DB, error) {
	start := time.Now()
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	if !readOnly {
		q.Set("_txlock", "immediate")
	}

	var driverDSN, snapDSN, name, location, file string
	if path == "" {
		name, location = ":memory:", "sqlite::memory:"
		if readOnly {
			return &absentDB{driver: DriverSQLite, location: location}, nil // a new one is always empty
		}
		driverDSN = ":memory:?" + q.Encode()
	} else {
		name, location = path, "sqlite://"+path
		if readOnly {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				logger.Debug("ledger file does not exist; reading it as empty", zap.String("path", path))
				return &absentDB{driver: DriverSQLite, location: location}, nil
			}
			if err := checkReadable(path); err != nil {
				return nil, err
			}
			// SQLite resolves symbolic links and keeps -wal, -shm and -journal beside the target:
			// readSnapshot must look there, or a link would hide a -wal of committed allocations.
			var err error
			if file, err = filepath.EvalSymlinks(path); err != nil {
				return nil, fmt.Errorf("sqlite ledger %s: %w", path, err)
			}
			q.Set("mode", "rw") // SQLite's own parameter: never create the file
			q.Set("_query_only", "1")
			sq := url.Values{}
			sq.Set("mode", "ro")
			sq.Set("immutable", "1") // no locks, no -wal, no -shm: only safe under readSnapshot's checks
			sq.Set("_query_only", "1")
			snapDSN = (&url.URL{Scheme: "file", Path: file, RawQuery: sq.Encode()}).String()
		} else {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("sqlite ledger %s: create directory: %w", path, err)
			}
			q.Set("_journal_mode", "WAL")
		}
		q.Set("_synchronous", "FULL")
		// A file: URI, so that any character of the path ('?', '#', '%', ...) reaches SQLite escaped.
		u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
		driverDSN = u.String()
	}

	db, err := sql.Open("sqlite", driverDSN)
	if err != nil {
		return nil, fmt.Errorf("sqlite ledger %s: %w", name, err)
	}
	if path == "" {
		// Every connection to ":memory:" is a database of its own: keep exactly one, forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	} else {
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(4)
		db.SetConnMaxIdleTime(5 * time.Minute)
	}

	s := &sqliteDB{db: db, name: name, file: file, location: location, readOnly: readOnly, reads: sqliteNewestReads,
		logger: logger.With(zap.String("ledger", DriverSQLite), zap.String("path", name)), writers: sqliteWriterQueue(path)}
	if snapDSN != "" {
		if s.snap, err = sql.Open("sqlite", snapDSN); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("sqlite ledger %s: %w", name, err)
		}
		// A connection per read: an immutable connection never notices that the file changed, so a
		// page cached by one read must not serve the next.
		s.snap.SetMaxIdleConns(0)
		s.snap.SetMaxOpenConns(8)
	}
	if !readOnly {
		// A read-only handle's first read (checkSchema) is its ping: a ping of s.db would open the
		// file with SQLite's locks, which creates -wal and -shm.
		if err := s.retryBusy(ctx, time.Now(), func() error { return db.PingContext(ctx) }); err != nil {
			_ = db.Close()
			return nil, s.wrap(ctx, start, "open", err)
		}
	}
	if readOnly {
		version, err := s.checkSchema(ctx)
		if err != nil || version == 0 {
			_ = s.Close()
			if err != nil {
				return nil, s.wrap(ctx, start, "open", err)
			}
			s.logger.Debug("ledger file has no ledger schema yet; reading it as empty")
			return &absentDB{driver: DriverSQLite, location: location}, nil
		}
		if s.reads, err = sqliteReadsAt(version); err != nil {
			_ = s.Close()
			return nil, s.wrap(ctx, start, "open", err)
		}
	} else if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, s.wrap(ctx, start, "migrate", err)
	}
	s.logger.Debug("ledger opened", zap.Bool("read_only", readOnly))
	return s, nil
}

// checkSchema returns the schema version of the store (0: no ledger schema), refusing one from a
// newer provider.
func (s *sqliteDB) checkSchema(ctx context.Context) (int, error) {
	applied, _, err := s.schemaState(ctx)
	return schemaVersion(applied), err
}

// schemaState returns the applied migrations (none without a schema_migrations table) and the
// pending ones; a store migrated by a newer provider is an error.
func (s *sqliteDB) schemaState(ctx context.Context) (applied map[int]bool, pending []migration, err error) {
	all, err := loadMigrations(DriverSQLite)
	if err != nil {
		return nil, nil, err
	}
	err = s.read(ctx, func(q sqlQueryer) error {
		applied = map[int]bool{}
		var n int
		if err := q.QueryRowContext(ctx,
			`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil || n == 0 {
			return err
		}
		var err error
		if applied, err = sqliteAppliedVersions(ctx, q); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	pending, err = pendingMigrations(all, applied)
	return applied, pending, err
}

// Identity implements DB.
func (s *sqliteDB) Identity(ctx context.Context) (Identity, error) {
	start := time.Now()
	return s.identity.get(s.location, func() (string, error) {
		var id string
		err := s.read(ctx, func(q sqlQueryer) error {
			id = ""
			var n int
			if err := q.QueryRowContext(ctx,
				`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'`).Scan(&n); err != nil || n == 0 {
				return err // a ledger from before identities: none yet
			}
			err := q.QueryRowContext(ctx, sqliteMetaQuery, identityKey).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		})
		return id, s.wrap(ctx, start, "read identity", err)
	})
}

func (s *sqliteDB) Driver() string { return DriverSQLite }

func (s *sqliteDB) Close() error {
	err := s.db.Close()
	if s.snap != nil {
		err = errors.Join(err, s.snap.Close())
	}
	return err
}

func (s *sqliteDB) Ping(ctx context.Context) error {
	start := time.Now()
	err := s.read(ctx, func(q sqlQueryer) error {
		var n int // a read of the file, not only of the connection: SELECT 1 would not open it
		return q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	})
	return s.wrap(ctx, start, "ping", err)
}

// wrap names the ledger and the operation in err. An operation, begun at start, that ended because ctx
// did is a *WaitError that says what it waited for (as PostgreSQL's does), unless its error says that
// already: a *LockedError, or a read-only plan's wait for a writer (saidWhatItWaitedFor).
func (s *sqliteDB) wrap(ctx context.Context, start time.Time, op string, err error) error {
	var locked *LockedError
	var said saidWhatItWaitedFor
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && !errors.As(err, &locked) && !errors.As(err, &said):
		return newWaitError(ctx, start, s.location, op, sqliteWaitFor, sqliteWaitWhy, err)
	}
	return fmt.Errorf("sqlite ledger %s: %s: %w", s.name, op, err)
}

// saidWhatItWaitedFor marks an error that says what a wait its context ended waited for (wrap keeps it
// as it is).
type saidWhatItWaitedFor struct{ error }

func (e saidWhatItWaitedFor) Unwrap() error { return e.error }

// write runs op, a write transaction of an operation begun at start, in this process's writer queue
// (lockWriter) and then under retryBusy, and records a commit as the write lock's progress.
func (s *sqliteDB) write(ctx context.Context, start time.Time, op func() error) error {
	if err := s.lockWriter(ctx, start); err != nil {
		return err
	}
	defer s.unlockWriter()
	err := s.retryBusy(ctx, start, op)
	if err == nil {
		s.writers.sawProgress(time.Now())
	}
	return err
}

// lockWriter serializes this process's writers to the file; other processes are serialized by SQLite.
// A deadline that ends the wait is a *LockedError, as in retryBusy: the writer ahead in the queue is
// itself waiting for the file's lock (or holding it), so what this one waited for is the ledger's
// write lock too. An interrupt (Ctrl-C) is not: the writers ahead may be this apply's own, busy with
// nothing stuck, and the error blamed "another writer (another terraform apply?)".
func (s *sqliteDB) lockWriter(ctx context.Context, start time.Time) error {
	select {
	case s.writers.queue <- struct{}{}:
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return saidWhatItWaitedFor{waits.Ended(ctx, start, "this process's other writes to the ledger, queued ahead of it")}
		}
		return &LockedError{Location: s.location, Waited: time.Since(start),
			Cause: fmt.Errorf("queued behind this process's other writes to the ledger: %w", ctx.Err())}
	}
}

func (s *sqliteDB) unlockWriter() { <-s.writers.queue }

// isSQLiteBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isSQLiteBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// isSQLiteUnique reports whether err is a UNIQUE constraint violation (only the name index can raise
// one: the resource ID is upserted).
func isSQLiteUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// retryBusy runs op, of an operation begun at start, until it returns something other than
// SQLITE_BUSY/LOCKED, backing off between attempts, for as long as ctx allows (sqliteNoDeadlineCap
// from start when it has no deadline) and as long as another writer has committed within LockWait
// (counted from start or the writer queue's last progress, whichever is later). Giving up on a busy
// store is a *LockedError saying how long the operation waited since start.
func (s *sqliteDB) retryBusy(ctx context.Context, start time.Time, op func() error) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(sqliteNoDeadlineCap)
	}
	lastProgress, earlier := s.writers.lastProgressFor(start)
	mark := s.walMark()
	backoff := 2 * time.Millisecond
	sawBusy := false
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if !isSQLiteBusy(err) {
			if sawBusy && ctx.Err() != nil {
				// The context ended while SQLite waited for the lock: say what was waited for.
				return &LockedError{Location: s.location, Waited: time.Since(start), Cause: withContextErr(ctx, err)}
			}
			return err
		}
		sawBusy = true
		now := time.Now()
		if m := s.walMark(); m != mark {
			mark, lastProgress = m, now // another writer committed: the lock is not stuck
			s.writers.sawProgress(now)
		}
		sleep := backoff/2 + rand.N(backoff/2+1)
		switch {
		case now.Sub(lastProgress) >= LockWait:
			if earlier == 0 {
				s.writers.gaveUpAfter.Store(int64(now.Sub(lastProgress)))
				s.writers.stuckSince.Store(lastProgress.UnixNano())
			}
			return &LockedError{Location: s.location, Waited: now.Sub(start), Earlier: earlier, Cause: err}
		case now.Add(sleep).After(deadline):
			// The next attempt would come after the context's deadline: giving up now is giving up on
			// the deadline, and the error says so as the other waits' errors do.
			cause := err
			if ok {
				cause = errors.Join(err, context.DeadlineExceeded)
			}
			return &LockedError{Location: s.location, Waited: now.Sub(start), Cause: cause}
		}
		s.logger.Debug("ledger busy, retrying", zap.Int("attempt", attempt), zap.Error(err))
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return &LockedError{Location: s.location, Waited: time.Since(start), Cause: withContextErr(ctx, err)}
		case <-t.C:
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
}

// walMark is the size and modification time of the write-ahead log, which change with every commit
// (and checkpoint) of any writer: while it changes, the writers holding the lock make progress.
func (s *sqliteDB) walMark() string {
	if s.name == ":memory:" {
		return ""
	}
	st, err := os.Stat(s.name + "-wal")
	if err != nil {
		return ""
	}
	return strconv.FormatInt(st.Size(), 10) + "@" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

func (s *sqliteDB) migrate(ctx context.Context) error {
	all, err := loadMigrations(DriverSQLite)
	if err != nil {
		return err
	}
	// Fast path, without the write lock: an up-to-date store needs nothing.
	if _, pending, err := s.schemaState(ctx); err != nil || len(pending) == 0 {
		return err
	}
	return s.retryBusy(ctx, time.Now(), func() error {
		tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time, across processes
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL
		)`); err != nil {
			return err
		}
		applied, err := sqliteAppliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		pending, err := pendingMigrations(all, applied)
		if err != nil {
			return err
		}
		if err := applyMigrations(ctx, sqliteMigrationTx{tx}, pending); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		logMigrated(s.logger, pending)
		return nil
	})
}

// sqliteMigrationTx adapts a migration transaction (migrationTx) and, for Go steps, stepTx.
type sqliteMigrationTx struct{ tx *sql.Tx }

func (t sqliteMigrationTx) script(ctx context.Context, sql string) error {
	_, err := t.tx.ExecContext(ctx, sql)
	return err
}

func (t sqliteMigrationTx) record(ctx context.Context, m migration) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMicro())
	return err
}

func (t sqliteMigrationTx) queryStrings(ctx context.Context, query string) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (t sqliteMigrationTx) exec(ctx context.Context, stmt string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, stmt, args...)
	return err
}

func sqliteAppliedVersions(ctx context.Context, q sqlQueryer) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// sqliteRecordColumns are the columns of migration "allocation_details"; sqliteRecordColumnsUnknown
// reads them on a store from before it (see readQueries).
const (
	sqliteRecordColumns        = `name, version, hibernated, environment, annotations`
	sqliteRecordColumnsUnknown = `NULL, NULL, NULL, NULL, NULL`
	sqliteColumns              = `resource_id, provisioner, host, slots, created_at, updated_at, ` + sqliteRecordColumns
)

// The ledger's queries (the per-runtime ones are checked for index use by TestHotQueriesUseIndexes).
const (
	sqliteFindQuery   = `SELECT ` + sqliteColumns + ` FROM allocations WHERE resource_id = ?`
	sqliteDeleteQuery = `DELETE FROM allocations WHERE resource_id = ?`
	// sqliteDeleteClaimedAtQuery is DeleteAllocationClaimedAt's: the holder's check and the delete in
	// one statement.
	sqliteDeleteClaimedAtQuery = `DELETE FROM allocations WHERE resource_id = ? AND created_at = ?`
	sqliteListQuery            = `SELECT ` + sqliteColumns + ` FROM allocations ORDER BY host, resource_id`
	sqliteMetaQuery            = `SELECT value FROM ledger_meta WHERE key = ?`
)

// sqliteUpsertQuery writes an allocation; its 12th parameter is Allocation.NewHolder.
var sqliteUpsertQuery = `INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at, name, version, hibernated, environment, annotations)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
		` + upsertOnConflict("?12") + ` RETURNING ` + sqliteColumns

// sqliteNewestReads are the reads of a store at this binary's schema version.
var sqliteNewestReads = readQueries{find: sqliteFindQuery, list: sqliteListQuery, used: sqliteUsedQuery}

// sqliteReadsAt returns the reads of a store at schema version `version` (see readQueries).
func sqliteReadsAt(version int) (readQueries, error) {
	all, err := loadMigrations(DriverSQLite)
	if err != nil {
		return readQueries{}, err
	}
	return readQueriesAt(all, version, sqliteNewestReads, sqliteRecordColumns, sqliteRecordColumnsUnknown), nil
}

type rowScanner interface {
	Scan(dest ...any) error
}

func scanSQLiteAllocation(r rowScanner) (*Allocation, error) {
	var a Allocation
	var created, updated int64
	var rec recordColumns
	if err := r.Scan(append([]any{&a.ResourceID, &a.Provisioner, &a.Host, &a.Slots, &created, &updated}, rec.scanTargets()...)...); err != nil {
		return nil, err
	}
	a.CreatedAt = time.UnixMicro(created).UTC()
	a.UpdatedAt = time.UnixMicro(updated).UTC()
	return &a, rec.fill(&a)
}

type sqlQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func sqliteFind(ctx context.Context, q sqlQueryer, query, resourceID string) (*Allocation, error) {
	a, err := scanSQLiteAllocation(q.QueryRowContext(ctx, query, resourceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return a, err
}

func sqliteUsed(ctx context.Context, q sqlQueryer, query string) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	return readHostSums(rows)
}

func (s *sqliteDB) Allocate(ctx context.Context, resourceID string, place PlaceFunc) (*Allocation, error) {
	start := time.Now()
	if err := checkAllocateArgs(resourceID, place); err != nil {
		return nil, err
	}
	if s.readOnly {
		return nil, s.wrap(ctx, start, "allocate "+strconv.Quote(resourceID), ErrReadOnly)
	}
	var stored *Allocation
	var placeErr error
	err := s.write(ctx, start, func() error {
		var err error
		stored, placeErr, err = s.allocateOnce(ctx, resourceID, place)
		return err
	})
	if placeErr != nil {
		return nil, placeErr
	}
	if err != nil {
		return nil, s.wrap(ctx, start, "allocate "+strconv.Quote(resourceID), err)
	}
	return stored, nil
}

// allocateOnce runs one Allocate transaction. It returns the error of place separately, so that it
// reaches the caller unwrapped and is never retried.
func (s *sqliteDB) allocateOnce(ctx context.Context, resourceID string, place PlaceFunc) (*Allocation, error, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the file's write lock until Commit/Rollback
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = tx.Rollback() }()

	// The newest queries: only a handle from Open writes, and Open migrated the store.
	next, placeErr, err := decide(ctx, allocationReads{
		find: func(ctx context.Context, id string) (*Allocation, error) {
			return sqliteFind(ctx, tx, sqliteFindQuery, id)
		},
		used: func(ctx context.Context) (map[string]int, error) { return sqliteUsed(ctx, tx, sqliteUsedQuery) },
	}, resourceID, place)
	if placeErr != nil || err != nil {
		return nil, placeErr, err
	}
	rec, err := recordColumnsOf(next)
	if err != nil {
		return nil, nil, err
	}
	now := nowMicros().UnixMicro()
	stored, err := scanSQLiteAllocation(tx.QueryRowContext(ctx, sqliteUpsertQuery,
		resourceID, next.Provisioner, next.Host, next.Slots, now, now, rec.name, rec.version, rec.hibernated, rec.environment, rec.annotations, next.NewHolder))
	if isSQLiteUnique(err) {
		return nil, nil, nameTakenError(next)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, err
	}
	return stored, nil, nil
}

func (s *sqliteDB) FindAllocation(ctx context.Context, resourceID string) (*Allocation, error) {
	start := time.Now()
	var a *Allocation
	err := s.read(ctx, func(q sqlQueryer) error {
		var err error
		a, err = sqliteFind(ctx, q, s.reads.find, resourceID)
		return err
	})
	if err != nil {
		return nil, s.wrap(ctx, start, "find allocation "+strconv.Quote(resourceID), err)
	}
	return a, nil
}

func (s *sqliteDB) ListAllocations(ctx context.Context) ([]*Allocation, error) {
	start := time.Now()
	var list []*Allocation
	err := s.read(ctx, func(q sqlQueryer) error {
		list = nil
		rows, err := q.QueryContext(ctx, s.reads.list)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			a, err := scanSQLiteAllocation(rows)
			if err != nil {
				return err
			}
			list = append(list, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.wrap(ctx, start, "list allocations", err)
	}
	return list, nil
}

func (s *sqliteDB) UsedSlotsByHost(ctx context.Context) (map[string]int, error) {
	start := time.Now()
	var used map[string]int
	err := s.read(ctx, func(q sqlQueryer) error {
		var err error
		used, err = sqliteUsed(ctx, q, s.reads.used)
		return err
	})
	if err != nil {
		return nil, s.wrap(ctx, start, "used slots", err)
	}
	return used, nil
}

func (s *sqliteDB) DeleteAllocation(ctx context.Context, resourceID string) (bool, error) {
	return s.deleteAllocation(ctx, resourceID, func(tx *sql.Tx) (bool, error) {
		return sqliteDeleted(tx.ExecContext(ctx, sqliteDeleteQuery, resourceID))
	})
}

func (s *sqliteDB) DeleteAllocationClaimedAt(ctx context.Context, resourceID string, createdAt time.Time) (bool, error) {
	return s.deleteAllocation(ctx, resourceID, func(tx *sql.Tx) (bool, error) {
		// created_at is an INTEGER of Unix microseconds (migration 0001; Allocate writes UnixMicro).
		deleted, err := sqliteDeleted(tx.ExecContext(ctx, sqliteDeleteClaimedAtQuery, resourceID, createdAt.UnixMicro()))
		if err != nil || deleted {
			return deleted, err
		}
		// Why nothing matched, read under the same write lock: no write came between.
		current, err := sqliteFind(ctx, tx, sqliteFindQuery, resourceID)
		return false, keptForANewHolder(current, err, createdAt)
	})
}

// sqliteDeleted reports whether a DELETE's result removed a row.
func sqliteDeleted(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// deleteAllocation runs del, the statements of a delete of resourceID's allocation, in a write
// transaction (the writer queue, retryBusy). A *NewHolderError from del comes back as it is: the
// ledger did what it was asked.
func (s *sqliteDB) deleteAllocation(ctx context.Context, resourceID string, del func(tx *sql.Tx) (bool, error)) (bool, error) {
	start := time.Now()
	if s.readOnly {
		return false, s.wrap(ctx, start, "delete allocation "+strconv.Quote(resourceID), ErrReadOnly)
	}
	var deleted bool
	err := s.write(ctx, start, func() error {
		// A transaction, not an auto-commit statement: an interrupt (Ctrl-C) that ended the statement
		// as it committed made ExecContext report the context's error for a row that was gone, and
		// the destroy kept in its state a runtime the ledger had freed. Commit reports what happened.
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		n, err := del(tx)
		if err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		deleted = n
		return nil
	})
	if nh := (*NewHolderError)(nil); errors.As(err, &nh) {
		return false, nh
	}
	if err != nil {
		return false, s.wrap(ctx, start, "delete allocation "+strconv.Quote(resourceID), err)
	}
	return deleted, nil
}
