package database

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Advisory lock keys (pg_advisory_xact_lock, 64-bit key space shared by every application on the
// database). Fixed, arbitrary constants: the ASCII of "rill-alc" and "rill-mig". The troubleshooting
// guide's query for the holder of a stuck write lock names the first
// (TestTroubleshootingQueryListsOnlyTheHolderOfTheLedgersWriteLock runs it).
const (
	pgAllocateLockKey int64 = 0x72696c6c2d616c63
	pgMigrateLockKey  int64 = 0x72696c6c2d6d6967
)

// postgresDB is the PostgreSQL ledger, for pools that several machines or pipelines share.
//
// It uses pgx's native pool (pgxpool) rather than database/sql with the pgx stdlib adapter: the ledger
// needs nothing database/sql offers (the SQLite backend shares no code path with it beyond plain SQL
// text), while pgxpool gives context cancellation that reaches the server (a waiting
// pg_advisory_xact_lock is cancelled with the caller's context), connection health checks, typed
// errors (*pgconn.PgError) and less per-query overhead.
//
// Allocate runs in a READ COMMITTED transaction whose first statement is
// pg_advisory_xact_lock(pgAllocateLockKey). Every Allocate, in any process on any machine, queues on
// that lock, and the lock is only released at COMMIT/ROLLBACK. Because READ COMMITTED takes a new
// snapshot for each statement, the reads after the lock see every allocation committed before it was
// granted. (REPEATABLE READ or SERIALIZABLE would be wrong here: their snapshot would be taken by the
// lock statement, before the wait.)
//
// Behind a transaction-pooling PgBouncer add default_query_exec_mode=exec (or simple_protocol) to the
// DSN; transaction-scoped advisory locks work there.
type postgresDB struct {
	pool     *pgxpool.Pool
	name     string // redacted DSN
	readOnly bool   // from OpenReadOnly: no writes, no migrations
	reads    readQueries
	logger   *zap.Logger
	identity identityCache
	// gaveUpAfter is how long the last of lockBounded's operations to end waited for another
	// session's lock before it gave up (lock_timeout); 0 once one ends without. While it is set, the
	// next ones wait stuckLockRecheck at most (see lockBounded).
	gaveUpAfter atomic.Int64
}

// stuckLockRecheck is how long a read or delete waits for a lock that an earlier one gave up on after
// LockWait: long enough to see that the lock was let go, short enough that Terraform's later waves of
// -parallelism reads do not wait LockWait each.
const stuckLockRecheck = 200 * time.Millisecond

// PostgresDefaultConnectTimeout bounds each connection attempt when the DSN sets no connect_timeout: a
// server that accepts TCP and never answers fails the first operation that needs it within this
// time (and the provider remembers the failure for the rest of the run). Exported for the test that
// holds the docs to it (TestDocsQuoteTheCodesFigures).
const PostgresDefaultConnectTimeout = 10 * time.Second

var _ DB = (*postgresDB)(nil)

// pgRollbackTimeout bounds the rollback of a transaction that did not commit. The rollback runs
// without the caller's context (it has often ended: that is why the transaction failed), so that
// the connection goes back to the pool clean; but a server that stopped answering must not hold the
// caller past its own timeout for longer than this.
const pgRollbackTimeout = 5 * time.Second

// pgRollback rolls tx back (a no-op after Commit), bounded by pgRollbackTimeout.
func pgRollback(ctx context.Context, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pgRollbackTimeout)
	defer cancel()
	_ = tx.Rollback(ctx)
}

// parsePostgres parses a PostgreSQL URL as openPostgres and CheckDSN need it, without connecting.
func parsePostgres(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx redacts passwords in its parse errors; the DSN we add is redacted too.
		return nil, fmt.Errorf("postgres ledger %s: %w: %w", Redact(dsn), ErrInvalidDSN, err)
	}
	return cfg, nil
}

func openPostgres(ctx context.Context, dsn string, logger *zap.Logger, readOnly bool) (DB, error) {
	start := time.Now()
	name := Redact(dsn)
	cfg, err := parsePostgres(dsn)
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "terraform-provider-rill"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = PostgresDefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres ledger %s: %w", name, err)
	}
	p := &postgresDB{pool: pool, name: name, readOnly: readOnly, reads: pgNewestReads, logger: logger.With(zap.String("ledger", DriverPostgres), zap.String("dsn", name))}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, p.wrap(ctx, start, fmt.Sprintf("connect (each attempt waits up to %s, the DSN's connect_timeout, for the server to answer)",
			cfg.ConnConfig.ConnectTimeout), err)
	}
	if readOnly {
		applied, err := p.appliedVersions(ctx)
		if err == nil && len(applied) > 0 {
			var all []migration
			if all, err = loadMigrations(DriverPostgres); err == nil {
				_, err = pendingMigrations(all, applied)
				p.reads = readQueriesAt(all, schemaVersion(applied), pgNewestReads, pgRecordColumns, pgRecordColumnsUnknown)
			}
		}
		if err != nil || len(applied) == 0 {
			pool.Close()
			if err != nil {
				return nil, p.wrap(ctx, start, "open", err)
			}
			p.logger.Debug("database has no ledger schema yet; reading it as empty")
			return &absentDB{driver: DriverPostgres, location: name}, nil
		}
	} else if err := p.migrate(ctx, start); err != nil {
		pool.Close()
		return nil, p.wrap(ctx, start, "migrate", err)
	}
	p.logger.Debug("ledger opened", zap.Bool("read_only", readOnly))
	return p, nil
}

// appliedVersions returns the applied migrations; none when the database has no schema_migrations.
func (p *postgresDB) appliedVersions(ctx context.Context) (map[int]bool, error) {
	var exists bool
	if err := p.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return map[int]bool{}, err
	}
	return pgAppliedVersions(ctx, p.pool)
}

// Identity implements DB.
func (p *postgresDB) Identity(ctx context.Context) (Identity, error) {
	start := time.Now()
	return p.identity.get(p.name, func() (string, error) {
		var id string
		var exists bool
		err := p.pool.QueryRow(ctx, `SELECT to_regclass('ledger_meta') IS NOT NULL`).Scan(&exists)
		if err == nil && exists { // else a ledger from before identities: none yet
			err = p.pool.QueryRow(ctx, pgMetaQuery, identityKey).Scan(&id)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		return id, p.wrap(ctx, start, "read identity", err)
	})
}

// lockLedger takes a transaction-scoped advisory lock, waiting at most what is left of LockWait since
// the operation's start (lock_timeout) and as long as ctx allows; giving up is a *LockedError saying
// how long the operation waited in all. An operation that waited for a connection of the pool, all of
// them busy waiting for the same lock, has spent its wait there: it tries the lock once, and fails at
// once if it is still held, so that N operations queued behind a stuck writer end after about
// LockWait, not LockWait per pool-sized wave.
func (p *postgresDB) lockLedger(ctx context.Context, tx pgx.Tx, key int64, start time.Time) error {
	_, err := tx.Exec(ctx, setLocalTimeouts(lockBound(start)))
	if err == nil {
		_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key)
	}
	switch {
	case err == nil:
		return nil
	case isLockTimeout(err), ctx.Err() != nil:
		return &LockedError{Location: p.name, Waited: time.Since(start), Cause: withContextErr(ctx, err)}
	}
	return err
}

// lockBound is how long an operation begun at start may still wait for a lock another session
// holds: what is left of LockWait (1 ms at least: a lock_timeout of 0 would mean no bound at all).
func lockBound(start time.Time) time.Duration {
	return max(LockWait-time.Since(start), time.Millisecond)
}

// setLocalTimeouts is the statements (one round trip: pgx sends a text without arguments in the simple
// protocol) that bound, for the rest of their transaction, how long each statement waits for a lock
// another session holds (lock_timeout), and how long the transaction may sit idle between statements
// before the server ends the session (idle_in_transaction_session_timeout: PostgresIdleTimeout).
// Every transaction of the ledger's writes and reads sets both: the ones that hold the ledger's write
// lock (the advisory lock of an allocation or a migration) and the ones whose rows block an
// allocation (a delete holds its row's and its host_usage row's locks until it commits).
func setLocalTimeouts(bound time.Duration) string {
	return fmt.Sprintf(`SET LOCAL lock_timeout = %d; SET LOCAL idle_in_transaction_session_timeout = %d`,
		bound.Milliseconds(), PostgresIdleTimeout().Milliseconds())
}

// PostgresIdleTimeout is how long a transaction of the provider may sit idle (the server waiting for
// its next statement) before the server ends its session, rolling the transaction back and letting
// go of its locks. A runner that vanishes mid-transaction (a preempted VM, a SIGSTOPped process, a
// cut network) sends no FIN: without it, its session held the ledger's write lock until TCP
// keepalive noticed (about 2 hours by default), every apply on the ledger failed with a LockedError
// after LockWait, and no re-apply recovered. The rollback loses nothing: a transaction that did not
// commit wrote nothing, and its runner, if it wakes, fails its next statement or its COMMIT.
//
// Four times LockWait (1 minute by default): a ledger transaction idles for milliseconds between its
// statements, and longer than LockWait means the server ends only a session that every writer queued
// behind it has already given up on as stuck, with room for a live runner that paused (a loaded CI
// machine, a slow network) to go on; short enough that the next apply a minute later succeeds. A SET
// LOCAL, as lock_timeout is (see lockBounded), so that it works behind a transaction-pooling
// PgBouncer and leaves the session's own setting alone. Exported for the test that holds the docs to
// it (TestDocsQuoteTheCodesFigures).
func PostgresIdleTimeout() time.Duration {
	return 4 * LockWait
}

// lockBounded runs f, the statements of an operation begun at start (a plan's read, a destroy's
// delete), in a transaction that setLocalTimeouts bounds: one queued behind a lock a stuck session holds
// (its rows, or a table a migration or a psql session locked) gives up when the operation has waited
// LockWait, as an allocation does for the ledger's write lock; before, they waited for the
// operation's timeout (5 and 10 minutes). BEGIN and SET LOCAL go in one round trip, before anything
// that may wait (pgx prepares a new statement before it runs it, and the prepare waits for the table
// lock too). A transaction, not a session setting or a lock_timeout startup parameter: behind a
// transaction-pooling PgBouncer a session's SET reaches other clients' transactions, and PgBouncer
// refuses startup parameters it does not know.
//
// Once one has given up, the next ones wait stuckLockRecheck at most, until one ends without giving
// up: Terraform starts a plan's reads -parallelism at a time, and each wave waited LockWait (a plan of
// 200 runtimes behind a stuck lock failed after 5 minutes); the first wave's failure fails the plan
// anyway, and a lock let go in the meantime is seen by the next read.
func (p *postgresDB) lockBounded(ctx context.Context, start time.Time, f func(tx pgx.Tx) error) error {
	// The connection first: the bound is what is left after the wait for one (the other connections
	// may all be waiting for the same stuck lock), so the reads of one wave end together.
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	bound, earlier := lockBound(start), time.Duration(p.gaveUpAfter.Load())
	if earlier > 0 {
		bound = min(bound, stuckLockRecheck)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + setLocalTimeouts(bound)})
	if err == nil {
		defer pgRollback(ctx, tx)
		if err = f(tx); err == nil {
			err = tx.Commit(ctx)
		}
	}
	switch {
	case err == nil:
		p.gaveUpAfter.Store(0)
	case isLockTimeout(err):
		waited := time.Since(start)
		if earlier == 0 {
			p.gaveUpAfter.Store(int64(waited))
		}
		return &LockedError{Location: p.name, Waited: waited, Lock: pgOtherLock, Earlier: earlier, Cause: err}
	}
	return err
}

func (p *postgresDB) Driver() string { return DriverPostgres }

func (p *postgresDB) Close() error {
	p.pool.Close()
	return nil
}

func (p *postgresDB) Ping(ctx context.Context) error {
	return p.wrap(ctx, time.Now(), "ping", p.pool.Ping(ctx))
}

// wrap names the ledger and the operation in err. An operation that ended because ctx did (it was
// waiting for the server: a lock another session holds, or a server that stopped answering) is a
// *WaitError that says so and how long it waited since start; a *LockedError says that already.
func (p *postgresDB) wrap(ctx context.Context, start time.Time, op string, err error) error {
	var locked *LockedError
	switch {
	case err == nil:
		return nil
	case isLockTimeout(err) && !errors.As(err, &locked):
		// The lock_timeout of the statement's transaction (setLocalTimeouts, by lockBounded or lockLedger): a
		// statement (a read, a delete; an allocation's reads and write after the advisory lock, a
		// migration's DDL) that waited LockWait for a table or row lock another session holds gave up
		// on a stuck writer as well.
		return p.named(op, &LockedError{Location: p.name, Waited: time.Since(start), Lock: pgOtherLock, Cause: err})
	case ctx.Err() != nil && !errors.As(err, &locked):
		return newWaitError(ctx, start, p.name, op, "", "", err)
	case isPermissionDenied(err):
		return p.named(op, fmt.Errorf("%w: %s", err, pgPrivilegesHint))
	case isIdleTimeout(err):
		return p.named(op, fmt.Errorf("the server ended the session after its transaction sat idle for %s "+
			"(idle_in_transaction_session_timeout, which frees the ledger's locks from a writer that vanished): this process "+
			"paused or stalled between two statements (a suspended process or machine, an overloaded runner). The transaction "+
			"was rolled back, so nothing was written: re-run: %w", PostgresIdleTimeout(), err))
	}
	return p.named(op, err)
}

// isIdleTimeout reports whether err is PostgreSQL's idle_in_transaction_session_timeout (25P03):
// the server ended a session whose transaction sat idle for PostgresIdleTimeout.
func isIdleTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "25P03"
}

// isPermissionDenied reports whether err is PostgreSQL's insufficient_privilege (42501): the DSN's
// role may not do what the operation asked.
func isPermissionDenied(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// pgPrivilegesHint follows a refusal for want of a privilege: what each use of the ledger needs, so
// that a pipeline that gives its plans a role that may only read (the GitOps guide) sees why that
// role cannot apply, and an apply's role what it lacks. TestPostgresPrivilegesOfAPlanAndAnApply
// holds it to the grants that work.
const pgPrivilegesHint = "the ledger's role (the DSN's user) lacks a privilege this needs. Plans and data sources need SELECT " +
	"on allocations, ledger_meta and schema_migrations; applies and destroys also INSERT, UPDATE and DELETE on allocations; " +
	"and the first apply on a new database, or the first of a provider version that adds to the ledger's schema, CREATE on its schema"

// isLockTimeout reports whether err is PostgreSQL's lock_not_available (55P03): a lock_timeout ended
// a statement's wait for a lock.
func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// named names the ledger and the operation in err.
func (p *postgresDB) named(op string, err error) error {
	return fmt.Errorf("postgres ledger %s: %s: %w", p.name, op, err)
}

func (p *postgresDB) migrate(ctx context.Context, start time.Time) error {
	all, err := loadMigrations(DriverPostgres)
	if err != nil {
		return err
	}
	// Fast path, without lock or DDL: a store that is up to date needs nothing, and the role may
	// lack the CREATE privilege that even CREATE TABLE IF NOT EXISTS checks.
	applied, err := p.appliedVersions(ctx)
	if err != nil {
		return err
	}
	if len(applied) > 0 {
		pending, err := pendingMigrations(all, applied)
		if err != nil || len(pending) == 0 {
			return err
		}
	}

	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return err
	}
	defer pgRollback(ctx, tx)
	// Taken before anything else, so that even the CREATE TABLE IF NOT EXISTS below (which is not safe
	// against a concurrent identical CREATE) runs in one process at a time.
	if err := p.lockLedger(ctx, tx, pgMigrateLockKey, start); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER     NOT NULL PRIMARY KEY,
		name       TEXT        NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return err
	}
	if applied, err = pgAppliedVersions(ctx, tx); err != nil {
		return err
	}
	pending, err := pendingMigrations(all, applied)
	if err != nil {
		return err
	}
	if err := applyMigrations(ctx, pgMigrationTx{tx}, pending); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	logMigrated(p.logger, pending)
	return nil
}

// pgMigrationTx adapts a migration transaction (migrationTx) and, for Go steps, stepTx, whose "?"
// placeholders become $1, $2, ...
type pgMigrationTx struct{ tx pgx.Tx }

func (t pgMigrationTx) script(ctx context.Context, sql string) error {
	// No arguments: pgx sends it with the simple protocol, which allows several statements.
	_, err := t.tx.Exec(ctx, sql)
	return err
}

func (t pgMigrationTx) record(ctx context.Context, m migration) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
	return err
}

func (t pgMigrationTx) queryStrings(ctx context.Context, query string) ([]string, error) {
	rows, err := t.tx.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (t pgMigrationTx) exec(ctx context.Context, stmt string, args ...any) error {
	var b strings.Builder
	n := 0
	for _, r := range stmt {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	_, err := t.tx.Exec(ctx, b.String(), args...)
	return err
}

func pgAppliedVersions(ctx context.Context, q pgQueryer) (map[int]bool, error) {
	rows, err := q.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	applied := map[int]bool{}
	for _, v := range versions {
		applied[int(v)] = true
	}
	return applied, nil
}

// pgRecordColumns are the columns of migration "allocation_details"; pgRecordColumnsUnknown reads
// them, typed, on a store from before it (see readQueries).
const (
	pgRecordColumns        = `name, version, hibernated, environment, annotations::text`
	pgRecordColumnsUnknown = `NULL::text, NULL::text, NULL::boolean, NULL::text, NULL::text`
	pgColumns              = `resource_id, provisioner, host, slots, created_at, updated_at, ` + pgRecordColumns
)

// The ledger's queries (the per-runtime ones are checked for index use by TestHotQueriesUseIndexes).
// ListAllocations sorts COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
const (
	pgFindQuery   = `SELECT ` + pgColumns + ` FROM allocations WHERE resource_id = $1`
	pgDeleteQuery = `DELETE FROM allocations WHERE resource_id = $1`
	// pgDeleteClaimedAtQuery is DeleteAllocationClaimedAt's: the holder's check and the delete in one
	// statement.
	pgDeleteClaimedAtQuery = `DELETE FROM allocations WHERE resource_id = $1 AND created_at = $2`
	pgListQuery            = `SELECT ` + pgColumns + ` FROM allocations ORDER BY host COLLATE "C", resource_id COLLATE "C"`
	pgMetaQuery            = `SELECT value FROM ledger_meta WHERE key = $1`
)

// pgUpsertQuery writes an allocation; its 11th parameter is Allocation.NewHolder.
var pgUpsertQuery = `INSERT INTO allocations (resource_id, provisioner, host, slots, created_at, updated_at, name, version, hibernated, environment, annotations)
		VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10::text::jsonb)
		` + upsertOnConflict("$11::boolean") + ` RETURNING ` + pgColumns

// pgNewestReads are the reads of a store at this binary's schema version.
var pgNewestReads = readQueries{find: pgFindQuery, list: pgListQuery, used: pgUsedQuery}

func scanPGAllocation(r pgx.Row) (*Allocation, error) {
	var a Allocation
	var slots int32
	var rec recordColumns
	if err := r.Scan(append([]any{&a.ResourceID, &a.Provisioner, &a.Host, &slots, &a.CreatedAt, &a.UpdatedAt}, rec.scanTargets()...)...); err != nil {
		return nil, err
	}
	a.Slots = int(slots)
	a.CreatedAt = a.CreatedAt.UTC()
	a.UpdatedAt = a.UpdatedAt.UTC()
	return &a, rec.fill(&a)
}

type pgQueryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func pgFind(ctx context.Context, q pgQueryer, query, resourceID string) (*Allocation, error) {
	a, err := scanPGAllocation(q.QueryRow(ctx, query, resourceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	return a, err
}

func pgUsed(ctx context.Context, q pgQueryer, query string) (map[string]int, error) {
	rows, err := q.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readHostSums(rows)
}

func (p *postgresDB) Allocate(ctx context.Context, resourceID string, place PlaceFunc) (*Allocation, error) {
	if err := checkAllocateArgs(resourceID, place); err != nil {
		return nil, err
	}
	if p.readOnly {
		return nil, p.named("allocate "+strconv.Quote(resourceID), ErrReadOnly)
	}
	start := time.Now()
	stored, placeErr, err := p.allocate(ctx, resourceID, place, start)
	if placeErr != nil {
		return nil, placeErr
	}
	if err != nil {
		return nil, p.wrap(ctx, start, "allocate "+strconv.Quote(resourceID), err)
	}
	return stored, nil
}

// allocate runs the Allocate transaction. It returns the error of place separately, so that it
// reaches the caller unwrapped.
func (p *postgresDB) allocate(ctx context.Context, resourceID string, place PlaceFunc, start time.Time) (*Allocation, error, error) {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, nil, err
	}
	defer pgRollback(ctx, tx)

	if err := p.lockLedger(ctx, tx, pgAllocateLockKey, start); err != nil {
		return nil, nil, err
	}
	// The newest queries: only a handle from Open writes, and Open migrated the store.
	next, placeErr, err := decide(ctx, allocationReads{
		find: func(ctx context.Context, id string) (*Allocation, error) { return pgFind(ctx, tx, pgFindQuery, id) },
		used: func(ctx context.Context) (map[string]int, error) { return pgUsed(ctx, tx, pgUsedQuery) },
	}, resourceID, place)
	if placeErr != nil || err != nil {
		return nil, placeErr, err
	}
	rec, err := recordColumnsOf(next)
	if err != nil {
		return nil, nil, err
	}
	now := nowMicros()
	stored, err := scanPGAllocation(tx.QueryRow(ctx, pgUpsertQuery,
		resourceID, next.Provisioner, next.Host, int32(next.Slots), now, rec.name, rec.version, rec.hibernated, rec.environment, rec.annotations, next.NewHolder))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation: only the name index can raise it
		return nil, nil, nameTakenError(next)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, err
	}
	return stored, nil, nil
}

func (p *postgresDB) FindAllocation(ctx context.Context, resourceID string) (*Allocation, error) {
	start := time.Now()
	var a *Allocation
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) (err error) {
		a, err = pgFind(ctx, tx, p.reads.find, resourceID)
		return err
	})
	if err != nil {
		return nil, p.wrap(ctx, start, "find allocation "+strconv.Quote(resourceID), err)
	}
	return a, nil
}

func (p *postgresDB) ListAllocations(ctx context.Context) ([]*Allocation, error) {
	start := time.Now()
	var list []*Allocation
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, p.reads.list)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanPGAllocation(rows)
			if err != nil {
				return err
			}
			list = append(list, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, p.wrap(ctx, start, "list allocations", err)
	}
	return list, nil
}

func (p *postgresDB) UsedSlotsByHost(ctx context.Context) (map[string]int, error) {
	start := time.Now()
	var used map[string]int
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) (err error) {
		used, err = pgUsed(ctx, tx, p.reads.used)
		return err
	})
	if err != nil {
		return nil, p.wrap(ctx, start, "used slots", err)
	}
	return used, nil
}

func (p *postgresDB) DeleteAllocation(ctx context.Context, resourceID string) (bool, error) {
	return p.deleteAllocation(ctx, resourceID, func(tx pgx.Tx) (bool, error) {
		tag, err := tx.Exec(ctx, pgDeleteQuery, resourceID)
		return tag.RowsAffected() > 0, err
	})
}

func (p *postgresDB) DeleteAllocationClaimedAt(ctx context.Context, resourceID string, createdAt time.Time) (bool, error) {
	return p.deleteAllocation(ctx, resourceID, func(tx pgx.Tx) (bool, error) {
		// created_at is a timestamptz, microseconds like the claim: pgx sends the time.Time as one,
		// exactly. READ COMMITTED: a DELETE that waited for the row lock of an Allocate's upsert
		// checks created_at again on the row that Allocate committed.
		tag, err := tx.Exec(ctx, pgDeleteClaimedAtQuery, resourceID, createdAt)
		if err != nil || tag.RowsAffected() > 0 {
			return tag.RowsAffected() > 0, err
		}
		// Why nothing matched: the row is gone, or another holder's (a statement of its own, so it
		// sees what committed since the DELETE's).
		current, err := pgFind(ctx, tx, pgFindQuery, resourceID)
		return false, keptForANewHolder(current, err, createdAt)
	})
}

// deleteAllocation runs del, the statements of a delete of resourceID's allocation, in lockBounded's
// transaction. A *NewHolderError from del comes back as it is: the ledger did what it was asked.
func (p *postgresDB) deleteAllocation(ctx context.Context, resourceID string, del func(tx pgx.Tx) (bool, error)) (bool, error) {
	if p.readOnly {
		return false, p.named("delete allocation "+strconv.Quote(resourceID), ErrReadOnly)
	}
	start := time.Now()
	var deleted bool
	err := p.lockBounded(ctx, start, func(tx pgx.Tx) (err error) {
		deleted, err = del(tx)
		return err
	})
	if nh := (*NewHolderError)(nil); errors.As(err, &nh) {
		return false, nh
	}
	if err != nil {
		return false, p.wrap(ctx, start, "delete allocation "+strconv.Quote(resourceID), err)
	}
	return deleted, nil
}
