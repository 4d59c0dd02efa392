// Package clickhouse implements the "clickhouse-static" provisioner: given one ClickHouse server (or
// cluster) and an admin DSN, it provisions a database and a user restricted to it for each resource.
//
// Spec (JSON):
//
//	{
//	  "dsn":           "clickhouse://admin:secret@host:9000",  // or "dsn_env": "VAR" (which wins, as in Rill)
//	  "write_dsn":     "clickhouse://admin:secret@writer:9000", // optional, or "write_dsn_env"
//	  "cluster":       "my_cluster"                             // optional: DDL runs ON CLUSTER
//	}
//
// The admin user needs SQL access management (access_management=1 in users.xml, or ACCESS MANAGEMENT
// granted) on ClickHouse 20.4 or newer. The initializer reads dsn_env/write_dsn_env and validates the
// DSNs offline; it connects on first use (safe during `terraform plan`).
//
// Per resource: database rill_<org>_<project>_<id> and user rill_<id> (see naming.go), where <org> and
// <project> come from the annotations "organization_name" and "project_name" (or, when those are
// absent or empty, "organization" and "project"). Config: "dsn" (the admin DSN with the resource's
// user, password and database) and, with a write DSN in the spec, "write_dsn". State: "database",
// "user", "cluster".
package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// Type is the provisioner type name in a provisioner set.
const Type = "clickhouse-static"

var (
	_ provisioner.Provisioner      = (*Provisioner)(nil)
	_ provisioner.SpecWarner       = (*Provisioner)(nil)
	_ provisioner.CreationReporter = (*Provisioner)(nil)
	_ provisioner.CreateChecker    = (*Provisioner)(nil)
)

func init() {
	provisioner.Register(Type, New)
}

// Spec is the JSON spec of a clickhouse-static provisioner.
type Spec struct {
	// DSN of a user that can create databases and users. One of DSN and DSNEnv is set; with both,
	// DSNEnv wins and DSN is ignored with a warning (Rill's admin service gives DSNEnv precedence).
	DSN string `json:"dsn"`
	// DSNEnv names an environment variable holding the DSN (read when the provisioner is built).
	DSNEnv string `json:"dsn_env"`
	// WriteDSN, optional, is a DSN for writes (a separate writer endpoint). Resources get a write_dsn
	// with their own credentials and database. WriteDSNEnv wins over WriteDSN, as DSNEnv over DSN.
	WriteDSN    string `json:"write_dsn"`
	WriteDSNEnv string `json:"write_dsn_env"`
	// Cluster, optional, makes every DDL statement run ON CLUSTER.
	Cluster string `json:"cluster"`
}

// Provisioner provisions ClickHouse databases and users on a static server.
type Provisioner struct {
	logger   *zap.Logger
	dsn      string // admin DSN, resolved from dsn or dsn_env
	writeDSN string // resolved from write_dsn or write_dsn_env; may be empty
	cluster  string
	warnings []provisioner.FieldWarning

	dial        dialFunc
	newPassword func() (string, error)

	// adminLock is held while the admin connection is opened; a channel, so that a caller waiting for
	// another's dial honours its own ctx. mu guards the fields below and is never held across I/O.
	adminLock chan struct{}
	mu        sync.Mutex
	admin     session         // nil until the first successful connection
	features  *serverFeatures // nil until the server was checked to manage users by SQL
	closed    bool
}

// serverFeatures are what the server's version and privileges allow, read once per connection.
type serverFeatures struct {
	version string
	// userOptions: CREATE DATABASE ... COMMENT (ClickHouse 21.11), and CREATE/ALTER USER ... DEFAULT
	// DATABASE (21.9) and GRANTEES (21.4).
	userOptions bool
	// addIdentified: a user may have several passwords, ALTER USER ... ADD IDENTIFIED (ClickHouse 24.9).
	addIdentified bool
	// sourcePrivileges: those of Rill's global source grants (sourcePrivileges) that the server knows.
	sourcePrivileges []string
}

// New is the provisioner.ProvisionerInitializer for clickhouse-static. It reads environment variables
// and validates DSNs but does not connect. Its error carries the spec's warnings (provisioner.WithWarnings).
func New(specJSON []byte, _ database.DB, logger *zap.Logger) (provisioner.Provisioner, error) {
	var spec Spec
	warnings, err := provisioner.DecodeSpecCompat(specJSON, &spec)
	if err != nil {
		return nil, provisioner.WithWarnings(err, warnings)
	}
	// Rill's precedence: an environment variable named in *_env wins over the inline DSN.
	for _, pair := range []struct {
		inline *string
		env    string
		field  string
	}{{&spec.DSN, spec.DSNEnv, "dsn"}, {&spec.WriteDSN, spec.WriteDSNEnv, "write_dsn"}} {
		if *pair.inline != "" && pair.env != "" {
			*pair.inline = ""
			warnings = append(warnings, provisioner.FieldWarning{Path: pair.field,
				Message: "ignored: " + pair.field + "_env is set too and takes precedence (as in Rill's admin service)"})
		}
	}
	// Every error is collected, so that one run reports them all.
	var errs []error
	dsn, err := resolveDSN(spec.DSN, spec.DSNEnv, "dsn", "dsn_env", true)
	if err != nil {
		errs = append(errs, err)
	}
	writeDSN, err := resolveDSN(spec.WriteDSN, spec.WriteDSNEnv, "write_dsn", "write_dsn_env", false)
	if err != nil {
		errs = append(errs, err)
	}
	cluster := spec.Cluster
	if cluster != "" && strings.TrimSpace(cluster) == "" {
		errs = append(errs, provisioner.Errorf("cluster", "must be a cluster name or left out, got only spaces"))
	} else if strings.ContainsFunc(cluster, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		errs = append(errs, provisioner.Errorf("cluster", "must not contain control characters"))
	}
	if len(errs) > 0 {
		return nil, provisioner.WithWarnings(errors.Join(errs...), warnings)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Provisioner{
		logger:      logger,
		dsn:         dsn,
		writeDSN:    writeDSN,
		cluster:     cluster,
		warnings:    warnings,
		dial:        dialClickHouse,
		newPassword: newPassword,
		adminLock:   make(chan struct{}, 1),
	}, nil
}

// resolveDSN returns the DSN given inline or through an environment variable, validated offline.
func resolveDSN(inline, envName, field, envField string, required bool) (string, error) {
	switch {
	case inline != "" && envName != "":
		return "", provisioner.Errorf(envField, "set either %s or %s, not both", field, envField)
	case inline == "" && envName == "":
		if required {
			return "", provisioner.Errorf(field, "is required (or set %s to the name of an environment variable holding it)", envField)
		}
		return "", nil
	}
	dsn, where := inline, field
	if envName != "" {
		where = envField
		// What the variable holds is the environment's, not the set's: `terraform validate` may run
		// where the apply's secrets are not (provisioner.ErrFromEnvironment).
		v, ok := os.LookupEnv(envName)
		if !ok {
			return "", provisioner.EnvironmentErrorf(envField, "environment variable %q is not set", envName)
		}
		if strings.TrimSpace(v) == "" {
			return "", provisioner.EnvironmentErrorf(envField, "environment variable %q is empty", envName)
		}
		dsn = strings.TrimSpace(v)
	}
	if _, err := parseDSN(dsn); err != nil {
		if envName != "" {
			return "", provisioner.EnvironmentErrorf(where, "the DSN in environment variable %q %s", envName, err.Error())
		}
		return "", provisioner.Errorf(where, "%s", err.Error())
	}
	return dsn, nil
}

// Type implements provisioner.Provisioner.
func (p *Provisioner) Type() string { return Type }

// SpecWarnings implements provisioner.SpecWarner.
func (p *Provisioner) SpecWarnings() []provisioner.FieldWarning { return p.warnings }

// Supports implements provisioner.Provisioner: ClickHouse resources only.
func (p *Provisioner) Supports(rt provisioner.ResourceType) bool {
	return rt == provisioner.ResourceTypeClickHouse
}

// Close closes the admin connection, if one was opened.
func (p *Provisioner) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.admin == nil {
		return nil
	}
	err := p.admin.Close()
	p.admin = nil
	p.features = nil
	if err != nil {
		return errors.New(p.scrub("closing the admin ClickHouse connection: " + err.Error()))
	}
	return nil
}

// Check pings the admin connection, connecting first if needed.
func (p *Provisioner) Check(ctx context.Context) error {
	conn, err := p.adminSession(ctx)
	if err != nil {
		return err
	}
	if err := conn.Ping(ctx); err != nil {
		return errors.New(p.scrub("pinging the admin ClickHouse connection: " + err.Error()))
	}
	return nil
}

// adminSession returns the admin connection (to write_dsn when set, else dsn), opening it on first use. A failed attempt is not
// remembered: the next call tries again.
// protocolHint explains clickhouse-go's "[handshake] unexpected packet [N] from server", or is "".
// A clickhouse:// or tcp:// DSN speaks ClickHouse's native protocol; pointed at a port that answers
// anything else (most often the HTTP port, 8123, whose "HTTP/1.1 400" is packet 72, 'H'), the
// handshake reads the first byte of that answer as a packet type, and the message alone does not say
// which port or scheme to change.
func protocolHint(err error) string {
	if !strings.Contains(err.Error(), "[handshake] unexpected packet") {
		return ""
	}
	return " (the server at that address does not speak ClickHouse's native protocol, which clickhouse:// and tcp:// DSNs use: for its HTTP port, 8123 by default, write the DSN as http:// (or https://); else use its native port, 9000 by default)"
}

func (p *Provisioner) adminSession(ctx context.Context) (session, error) {
	start := time.Now()
	if ctx.Err() != nil {
		// Out of time before the wait: no other operation held it up, and none is named (the select
		// below, with the lock free, blamed one at random).
		return nil, waits.Ended(ctx, start, "ClickHouse's admin connection")
	}
	select {
	case p.adminLock <- struct{}{}:
	case <-ctx.Done():
		return nil, waits.Ended(ctx, start, "another operation of this run to connect to ClickHouse")
	}
	defer func() { <-p.adminLock }()
	p.mu.Lock()
	closed, admin := p.closed, p.admin
	p.mu.Unlock()
	if closed {
		return nil, errors.New("the clickhouse-static provisioner is closed")
	}
	if admin != nil {
		return admin, nil
	}
	// As in Rill, statements go to the writer endpoint when there is one: read replicas may refuse DDL.
	dsn, which := p.dsn, "dsn"
	if p.writeDSN != "" {
		dsn, which = p.writeDSN, "write_dsn"
	}
	conn, err := p.dial(ctx, dsn)
	if err != nil {
		return nil, errors.New(p.scrub("connecting to ClickHouse with the admin " + which + ": " + err.Error() + protocolHint(err)))
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, errors.New(p.scrub("connecting to ClickHouse with the admin " + which + ": " + err.Error() + protocolHint(err)))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed { // closed while dialing
		_ = conn.Close()
		return nil, errors.New("the clickhouse-static provisioner is closed")
	}
	p.admin = conn
	return conn, nil
}

// ErrNoSQLAccessManagement is wrapped by errors of servers, or admin users, that cannot manage users
// with SQL statements.
var ErrNoSQLAccessManagement = errors.New("the ClickHouse admin user cannot manage users by SQL")

// accessManagementProbe is the read-only statement that the admin user has access management: it needs
// the SHOW USERS privilege (ClickHouse 20.4 and newer).
const accessManagementProbe = "SHOW CREATE USER CURRENT_USER"

// The other reads of managerSession's capability check, which the stand-ins for ClickHouse
// (fake_test.go, fakeserver_tagged.go) answer by their text.
const (
	versionQuery         = "SELECT version()"
	userDirectoriesQuery = "SELECT type FROM system.user_directories"
)

// managerSession returns the admin connection and what the server supports, after making sure, once
// per connection, that the server can create users by SQL: it runs `SELECT version()`, `SHOW CREATE USER CURRENT_USER`,
// and reads system.user_directories and system.privileges, none of which changes anything.
func (p *Provisioner) managerSession(ctx context.Context) (session, *serverFeatures, error) {
	conn, err := p.adminSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	features := p.features
	p.mu.Unlock()
	if features != nil {
		return conn, features, nil
	}

	versions, err := conn.QueryStrings(ctx, versionQuery)
	if err != nil || len(versions) == 0 {
		return nil, nil, errors.New(p.scrub(fmt.Sprintf("reading the ClickHouse server version: %v", err)))
	}
	version := versions[0]
	// The refusals name the server (the admin connection's host and port, never its credentials), so
	// that a plan that fails on them says which server of which provisioner to change.
	server := "ClickHouse " + version + " at " + p.adminAddress()
	if !versionAtLeast(version, 20, 4) {
		return nil, nil, fmt.Errorf("%w: %s has no SQL-driven access control (CREATE USER needs ClickHouse 20.4 or newer)", ErrNoSQLAccessManagement, server)
	}
	// The admin's own definition needs the SHOW USERS privilege, which ACCESS MANAGEMENT (and
	// access_management in users.xml) includes. `SHOW USERS` is no such probe: ClickHouse 26.7 answers
	// it for any user (TestIntegrationAdminWithoutAccessManagementIsRefusedForThat_chDB).
	if _, err := conn.QueryStrings(ctx, accessManagementProbe); err != nil {
		switch exceptionCode(err) {
		case codeAccessDenied, codeSyntaxError, codeUnknownSetting:
			return nil, nil, fmt.Errorf("%w: on %s, SHOW CREATE USER CURRENT_USER failed (%s); enable access_management for the admin user (<access_management>1</access_management> in users.xml) or grant it ACCESS MANAGEMENT",
				ErrNoSQLAccessManagement, server, p.scrub(err.Error()))
		}
		return nil, nil, errors.New(p.scrub(fmt.Sprintf("checking that ClickHouse %s can manage users (%s): %v", version, accessManagementProbe, err)))
	}
	// A server can know users (the probe works) without being able to store new ones: CREATE USER
	// needs a writable user directory, and a server configured with users.xml alone (chDB, or a
	// config without access_control_path) answers it with "no writeable access storage".
	types, err := conn.QueryStrings(ctx, userDirectoriesQuery)
	switch {
	case err == nil && !anyWritableUserDirectory(types):
		return nil, nil, fmt.Errorf("%w: %s has no writable user directory (system.user_directories: %s); CREATE USER needs a local_directory or replicated one: set access_control_path, or <user_directories><local_directory> in the server config",
			ErrNoSQLAccessManagement, server, strings.Join(types, ", "))
	case err != nil && exceptionCode(err) != codeUnknownTable:
		// Before system.user_directories (ClickHouse 20.7) the local directory was always there.
		return nil, nil, errors.New(p.scrub(fmt.Sprintf("checking that ClickHouse %s can store users (system.user_directories): %v", version, err)))
	}
	sources, err := p.knownSourcePrivileges(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	features = &serverFeatures{
		version:          version,
		userOptions:      versionAtLeast(version, 21, 11),
		addIdentified:    versionAtLeast(version, 24, 9),
		sourcePrivileges: sources,
	}
	p.logger.Debug("checked the ClickHouse server", zap.String("version", version), zap.Bool("user_options", features.userOptions),
		zap.Bool("add_identified", features.addIdentified), zap.Strings("source_privileges", sources))
	p.mu.Lock()
	if p.admin == conn {
		p.features = features
	}
	p.mu.Unlock()
	return conn, features, nil
}

// CheckCreate implements provisioner.CreateChecker: the capability check every Provision and
// Deprovision makes first (managerSession: SELECT version(), SHOW CREATE USER CURRENT_USER, system.user_directories,
// system.privileges; read-only, and remembered once passed), made at plan time. A server that cannot
// manage users by SQL is ErrCannotCreate; anything else (an unreachable server, refused admin
// credentials) is a check that could not be made.
func (p *Provisioner) CheckCreate(ctx context.Context, rt provisioner.ResourceType) error {
	if rt != provisioner.ResourceTypeClickHouse {
		return provisioner.CannotCreate(wrongTypeError(rt))
	}
	_, _, err := p.managerSession(ctx)
	if errors.Is(err, ErrNoSQLAccessManagement) {
		return provisioner.CannotCreate(err)
	}
	return err
}

// adminAddress is where the admin connection goes (write_dsn's hosts when set, else dsn's), without
// credentials: "host:port", or several joined by commas.
func (p *Provisioner) adminAddress() string {
	dsn := p.dsn
	if p.writeDSN != "" {
		dsn = p.writeDSN
	}
	opts, err := parseDSN(dsn)
	if err != nil || len(opts.Addr) == 0 {
		return "the admin DSN's server" // New validated the DSN: not reached
	}
	return strings.Join(opts.Addr, ",")
}

// sourcePrivileges are Rill's global grants: reading from external sources through table functions
// (s3(), url(), remote(), postgresql(), ...) and running queries ON CLUSTER. Servers know different
// subsets (AZURE and CLUSTER are recent), so only those in system.privileges are granted.
var sourcePrivileges = []string{"CLUSTER", "URL", "REMOTE", "MONGO", "MYSQL", "POSTGRES", "S3", "AZURE"}

// knownSourcePrivileges returns the sourcePrivileges the server has, in that order. A server without
// system.privileges (older than ClickHouse 21.1) gets none of them.
func (p *Provisioner) knownSourcePrivileges(ctx context.Context, conn session) ([]string, error) {
	quoted := make([]string, len(sourcePrivileges))
	for i, priv := range sourcePrivileges {
		quoted[i] = quoteString(priv)
	}
	known, err := conn.QueryStrings(ctx, "SELECT privilege FROM system.privileges WHERE privilege IN ("+strings.Join(quoted, ", ")+")")
	if err != nil {
		if exceptionCode(err) == codeUnknownTable {
			p.logger.Warn("the ClickHouse server has no system.privileges; tenants get no source grants (S3, URL, ...)")
			return nil, nil
		}
		return nil, errors.New(p.scrub("reading the privileges the ClickHouse server knows (system.privileges): " + err.Error()))
	}
	has := map[string]bool{}
	for _, k := range known {
		has[k] = true
	}
	var out []string
	for _, priv := range sourcePrivileges {
		if has[priv] {
			out = append(out, priv)
		}
	}
	return out, nil
}

// writableUserDirectories are the user directory types CREATE USER can write to.
var writableUserDirectories = map[string]bool{"local_directory": true, "replicated": true, "memory": true}

func anyWritableUserDirectory(types []string) bool {
	for _, t := range types {
		if writableUserDirectories[t] {
			return true
		}
	}
	return false
}

// versionAtLeast reports whether a ClickHouse version string such as "24.3.1.2672" is at least
// major.minor. Unparseable versions pass (the access management probe still runs).
func versionAtLeast(version string, major, minor int) bool {
	fields := strings.SplitN(version, ".", 3)
	if len(fields) < 2 {
		return true
	}
	maj, err1 := strconv.Atoi(fields[0])
	mnr, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return maj > major || (maj == major && mnr >= minor)
}

// scrub removes the admin and write DSNs and their passwords from a message.
func (p *Provisioner) scrub(msg string, more ...string) string {
	secrets := append(secretsOfDSN(p.dsn), more...)
	if p.writeDSN != "" {
		secrets = append(secrets, secretsOfDSN(p.writeDSN)...)
	}
	return redact(msg, secrets...)
}
