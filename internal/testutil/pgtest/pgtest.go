// Package pgtest runs throwaway PostgreSQL servers for tests.
//
// Typical use, in a package whose tests need PostgreSQL:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) } // runs the tests, then stops the shared server
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.Shared(t) // a fresh, empty database on a server shared by this test binary
//		...
//	}
//
// Start(t) gives a test a server of its own instead (stopped when the test ends), for tests that
// restart or break it. Both return a postgres:// DSN of a new database, dropped when the test ends.
//
// Where the server comes from:
//   - RILL_TEST_POSTGRES_DSN set: that server (any DSN pgx accepts, for a role that may CREATE
//     DATABASE); each call creates a fresh database on it. Nothing is started.
//   - Otherwise a local cluster is created with initdb and run with the postgres binary, from
//     RILL_TEST_POSTGRES_BINDIR, the directory of initdb on PATH, or the newest
//     /usr/lib/postgresql/*/bin. It listens on 127.0.0.1 on a free port, keeps its unix socket in
//     its own temporary directory, trusts every local connection and runs with fsync off.
//     PostgreSQL refuses to run as root: when the tests run as root the cluster runs as the
//     "postgres" OS user (created by Debian's postgresql package).
//
// When the server binaries (or, as root, the postgres user) are missing, the test is skipped with a
// hint to run `apt-get install -y postgresql`, or fails when the CI environment variable is "true".
//
// Servers never outlive the test binary: the postmaster is a direct child (no pg_ctl daemon) started
// with a parent-death signal, Start's server is stopped by t.Cleanup (which also runs when the test
// fails or panics), and Main stops the shared one after the tests or on SIGINT/SIGTERM.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// Environment variables that configure pgtest.
const (
	// EnvDSN names an existing server to use instead of starting one.
	EnvDSN = "RILL_TEST_POSTGRES_DSN"
	// EnvBinDir names the directory holding initdb and postgres.
	EnvBinDir = "RILL_TEST_POSTGRES_BINDIR"
)

// ErrUnavailable is wrapped by StartCluster's error when PostgreSQL is not installed (or cannot be
// run as a non-root user). Shared and Start skip the test on it unless CI=true.
var ErrUnavailable = errors.New("PostgreSQL server binaries unavailable")

const installHint = "install them with `apt-get install -y postgresql` (Debian/Ubuntu), set " + EnvBinDir +
	" to the directory holding initdb and postgres, or set " + EnvDSN + " to a server to use"

// startTimeout bounds initdb plus server startup.
const startTimeout = 60 * time.Second

// Cluster is a running PostgreSQL server: one pgtest started, or the external one of EnvDSN.
type Cluster struct {
	adminDSN string // superuser DSN of the maintenance database
	external bool

	dir      string // temporary directory holding data/ and the socket; removed by Stop
	server   *proc.Process
	stopOnce sync.Once
	stopErr  error
}

// StartCluster starts a new local cluster, or, when EnvDSN is set, returns a handle on that server
// (whose Stop does nothing). The error wraps ErrUnavailable when PostgreSQL is not installed.
func StartCluster(ctx context.Context) (*Cluster, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		c := &Cluster{adminDSN: dsn, external: true}
		conn, err := connect(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("pgtest: %s: %w", EnvDSN, err)
		}
		_ = conn.Close(ctx)
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	sweepOnce.Do(sweepStale)
	dir, err := makeDir("pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := chown(dir, cred); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := initData(ctx, bin, data, dir, cred); err != nil {
		return nil, err
	}
	// The port is free when picked but could be taken before the server binds it: try a few.
	for attempt := 1; ; attempt++ {
		c, err := startServer(ctx, bin, dir, data, cred)
		if err == nil {
			ok = true
			return c, nil
		}
		if attempt == 3 || !strings.Contains(err.Error(), "could not bind") || ctx.Err() != nil {
			return nil, err
		}
	}
}

// Stop shuts the cluster down (fast shutdown, then SIGKILL after 15s) and removes its files. It is
// safe to call more than once; for an external cluster it does nothing.
func (c *Cluster) Stop() error {
	if c == nil || c.external {
		return nil
	}
	c.stopOnce.Do(func() {
		c.server.Stop()
		c.stopErr = os.RemoveAll(c.dir)
	})
	return c.stopErr
}

var dbSeq atomic.Int64

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

// CreateDatabase creates a new, empty database whose name is derived from hint and returns its DSN.
func (c *Cluster) CreateDatabase(ctx context.Context, hint string) (dsn, name string, err error) {
	base := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(hint), "_"), "_")
	suffix := fmt.Sprintf("_%d_%d", os.Getpid(), dbSeq.Add(1))
	if limit := 63 - len("t_") - len(suffix); len(base) > limit {
		base = base[:limit]
	}
	name = "t_" + base + suffix
	conn, err := connect(ctx, c.adminDSN)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	dsn, err = withDatabase(c.adminDSN, name)
	if err != nil {
		return "", "", err
	}
	return dsn, name, nil
}

// DropDatabase drops a database, disconnecting its clients first.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	conn, err := connect(ctx, c.adminDSN)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	q := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, q+" WITH (FORCE)"); err != nil {
		// Servers before 13 lack FORCE.
		if _, err2 := conn.Exec(ctx, q); err2 != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, errors.Join(err, err2))
		}
	}
	return nil
}

// Start starts a cluster for this test alone and returns the DSN of a fresh database on it. The
// cluster is stopped and removed when the test (or benchmark) and its subtests end. With EnvDSN set,
// a fresh database on that server is returned instead, and dropped at the end.
func Start(t testing.TB) string {
	t.Helper()
	c, err := StartCluster(context.Background())
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: stop cluster: %v", err)
		}
	})
	return newDatabase(t, c)
}

// mainRunning is set by Main: the shared cluster will be stopped, temporary files removed at exit.
var mainRunning atomic.Bool

var shared struct {
	mu      sync.Mutex // held while starting the cluster, so that concurrent callers wait for it
	cluster *Cluster
	err     error // the error of the one start attempt
	tried   bool
}

// Shared returns the DSN of a fresh database on the test binary's shared cluster, starting the
// cluster on first use. The database is dropped when the test ends; the cluster is stopped by Main,
// which the package's TestMain must call (Shared fails the test otherwise).
func Shared(t testing.TB) string {
	t.Helper()
	if !mainRunning.Load() {
		t.Fatal("pgtest.Shared needs the package's TestMain to call pgtest.Main(m), which stops the shared cluster")
	}
	shared.mu.Lock()
	if !shared.tried {
		shared.tried = true
		shared.cluster, shared.err = StartCluster(context.Background())
	}
	c, err := shared.cluster, shared.err
	shared.mu.Unlock()
	if err != nil {
		unavailable(t, err)
	}
	return newDatabase(t, c)
}

// Main runs the tests of m, stops the shared cluster (also on SIGINT/SIGTERM) and exits with the
// tests' exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	mainRunning.Store(true)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		_ = stopShared()
		runExitCleanups()
		fmt.Fprintf(os.Stderr, "pgtest: %v: stopped the shared PostgreSQL cluster\n", s)
		os.Exit(130)
	}()

	code := m.Run()
	signal.Stop(sigs)
	if err := stopShared(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stop shared cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	runExitCleanups()
	os.Exit(code)
}

func stopShared() error {
	shared.mu.Lock()
	c := shared.cluster
	shared.cluster = nil
	shared.mu.Unlock()
	return c.Stop()
}

func newDatabase(t testing.TB, c *Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, name, err := c.CreateDatabase(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		select {
		case <-c.exitedChan():
			return // the cluster is gone, and its databases with it
		default:
		}
		if err := c.DropDatabase(ctx, name); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return dsn
}

func (c *Cluster) exitedChan() <-chan struct{} {
	if c.external {
		return nil
	}
	return c.server.Exited()
}

// unavailable skips or fails the test for a cluster that could not be started.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrUnavailable) {
		ci.Skip(t, "PostgreSQL is not available: %v", err)
	}
	t.Fatalf("pgtest: %v", err)
}

// Tables lists the tables in the public schema of the database at dsn, for tests that check that
// something created none.
func Tables(t testing.TB, dsn string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := mustConnect(ctx, t, dsn)
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	if err != nil {
		t.Fatalf("pgtest: list tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("pgtest: list tables: %v", err)
	}
	return tables
}

// LockTables holds ACCESS EXCLUSIVE locks on tables of the database at dsn, in a transaction of a
// connection of its own, until the test ends or release is called: what another session's stuck
// transaction (a stuck apply on another runner) does to every statement that touches them, reads
// included.
func LockTables(t testing.TB, dsn string, tables ...string) (release func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := mustConnect(ctx, t, dsn)
	release = func() { _ = conn.Close(context.Background()) } // ends the transaction and its locks
	t.Cleanup(release)
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatalf("pgtest: begin: %v", err)
	}
	if _, err := conn.Exec(ctx, `LOCK TABLE `+strings.Join(tables, ", ")+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatalf("pgtest: lock %v: %v", tables, err)
	}
	return release
}

// mustConnect is connect for the helpers that fail their test when it fails.
func mustConnect(ctx context.Context, t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return conn
}

func connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 10*time.Second {
		cfg.ConnectTimeout = 10 * time.Second
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// withDatabase returns dsn with its database replaced by name.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// key=value form
	if strings.Contains(dsn, "=") {
		re := regexp.MustCompile(`\bdbname\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)
		if re.MatchString(dsn) {
			return re.ReplaceAllLiteralString(dsn, "dbname="+name), nil
		}
		return dsn + " dbname=" + name, nil
	}
	return "", fmt.Errorf("pgtest: cannot set the database of DSN %s", EnvDSN)
}

// findBinDir returns a directory holding initdb and postgres.
func findBinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				return false
			}
		}
		return true
	}
	if d := os.Getenv(EnvBinDir); d != "" {
		if has(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w: %s=%s holds no initdb and postgres; %s", ErrUnavailable, EnvBinDir, d, installHint)
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if d := filepath.Dir(p); has(d) {
			return d, nil
		}
	}
	// Debian/Ubuntu keep the server binaries off PATH, one directory per major version.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: initdb and postgres not found on PATH or in /usr/lib/postgresql/*/bin; %s", ErrUnavailable, installHint)
}

// credential returns who the server runs as: nil (ourselves) unless we are root, then "postgres".
func credential() (*proc.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w: PostgreSQL refuses to run as root and there is no \"postgres\" OS user to run it as (%v); %s",
			ErrUnavailable, err, installHint)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: postgres user has non-numeric uid/gid %s/%s", u.Uid, u.Gid)
	}
	return &proc.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func chown(path string, cred *proc.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// tempBase is where cluster directories go. Unix socket paths are limited to ~107 bytes, so a long
// TMPDIR is avoided.
func tempBase() string {
	if d := os.TempDir(); len(d) <= 60 {
		return d
	}
	return "/tmp"
}

// template is a data directory made by initdb once per test binary (when Main runs the tests, so
// that it is removed at exit) and copied for each cluster: initdb takes seconds, a copy a fraction.
var template struct {
	once sync.Once
	dir  string // holds data/
	err  error
}

func initData(ctx context.Context, bin, data, workDir string, cred *proc.Credential) error {
	if !mainRunning.Load() {
		return runInitdb(ctx, bin, data, workDir, cred)
	}
	template.once.Do(func() {
		dir, err := makeDir("pgtest-template-")
		if err != nil {
			template.err = err
			return
		}
		if err := chown(dir, cred); err != nil {
			template.err = err
			return
		}
		template.dir = dir
		registerExitCleanup(func() { _ = os.RemoveAll(dir) })
		template.err = runInitdb(ctx, bin, filepath.Join(dir, "data"), dir, cred)
	})
	if template.err != nil {
		return template.err
	}
	return copyTree(filepath.Join(template.dir, "data"), data, cred)
}

func runInitdb(ctx context.Context, bin, data, workDir string, cred *proc.Credential) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	proc.DieWithParent(cmd)
	if err := proc.RunAs(cmd, cred); err != nil {
		return fmt.Errorf("pgtest: initdb: %w", err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// copyTree copies a data directory, keeping modes and giving everything to cred.
func copyTree(src, dst string, cred *proc.Credential) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
			if err != nil {
				_ = in.Close()
				return err
			}
			_, err = io.Copy(out, in)
			_ = in.Close()
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(l, target); err != nil {
				return err
			}
		default:
			return nil
		}
		if cred != nil {
			return os.Lchown(target, int(cred.Uid), int(cred.Gid))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgtest: copy template data directory: %w", err)
	}
	return nil
}

var exitCleanups struct {
	mu  sync.Mutex
	fns []func()
}

// AtExit registers fn to run when Main ends, after the tests and the shared cluster (also on
// SIGINT/SIGTERM): for the test binary's own temporary files.
func AtExit(fn func()) { registerExitCleanup(fn) }

func registerExitCleanup(fn func()) {
	exitCleanups.mu.Lock()
	exitCleanups.fns = append(exitCleanups.fns, fn)
	exitCleanups.mu.Unlock()
}

func runExitCleanups() {
	exitCleanups.mu.Lock()
	fns := exitCleanups.fns
	exitCleanups.fns = nil
	exitCleanups.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func startServer(ctx context.Context, bin, dir, data string, cred *proc.Credential) (*Cluster, error) {
	port, err := freeport.Get()
	if err != nil {
		return nil, fmt.Errorf("pgtest: pick a port: %w", err)
	}
	server, err := proc.Start(proc.Options{
		Name: "postgres",
		Path: filepath.Join(bin, "postgres"),
		Args: []string{
			"-D", data,
			"-h", "127.0.0.1",
			"-p", strconv.Itoa(port),
			"-k", dir,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "max_connections=300",
			"-c", "shared_buffers=32MB",
			"-c", "logging_collector=off",
			"-c", "log_min_messages=warning",
			"-c", "TimeZone=UTC",
		},
		Dir:        dir,
		Env:        append(os.Environ(), "LC_ALL=C"),
		Log:        filepath.Join(dir, "postgres.log"),
		Credential: cred,
		// Fast shutdown: disconnect clients, checkpoint, exit.
		StopSignal: syscall.SIGINT,
		StopGrace:  15 * time.Second,
		// When the test binary dies: the postmaster stops its backends and exits at once.
		DeathSignal: syscall.SIGQUIT,
	})
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{
		adminDSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		dir:      dir,
		server:   server,
	}
	err = server.WaitReady(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := connect(cctx, c.adminDSN)
		if err == nil {
			_ = conn.Close(ctx)
		}
		return err
	})
	if err != nil {
		server.Kill() // the caller removes the directory
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return c, nil
}

// ownerFile, in each directory pgtest creates, identifies the process that created it, so that a
// later run can remove the directories of test binaries that were killed before they cleaned up.
const ownerFile = "pgtest.owner"

var sweepOnce sync.Once

// makeDir creates a temporary directory marked with this process as its owner.
func makeDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp(tempBase(), prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(processID(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// processID identifies a process across PID reuse: "<pid> <start time in clock ticks>".
func processID(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return strconv.Itoa(pid)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return strconv.Itoa(pid)
	}
	return strconv.Itoa(pid) + " " + fields[19] // field 22 of stat: starttime
}

// sweepStale removes pgtest directories whose owning process is gone (its server, started with a
// parent-death signal, is gone with it). Directories without an owner file are left alone unless
// they are more than an hour old.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(tempBase(), "pgtest-*"))
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			if st, serr := os.Stat(dir); serr == nil && st.IsDir() && time.Since(st.ModTime()) > time.Hour {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		pidStr, _, _ := strings.Cut(string(owner), " ")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || processID(pid) == string(owner) {
			continue // still running (or unreadable: leave it)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil && !strings.Contains(string(owner), " ") {
			continue // running process, identity without start time: cannot tell, leave it
		}
		_ = os.RemoveAll(dir)
	}
}
