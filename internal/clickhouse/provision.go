package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/churl"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// Keys of Resource.State (the config is the contract's ClickhouseConfig).
const (
	stateDatabase = "database"
	stateUser     = "user"
	stateCluster  = "cluster"
	// stateAdoptedFrom marks a resource adopted from Rill's admin service (an import that found Rill's
	// names, stateAdoptedFromRill) until the first Provision: each refresh until then repeats what the
	// apply does to the password Rill's deployment uses (rillAdoptionWarning).
	stateAdoptedFrom     = "adopted_from"
	stateAdoptedFromRill = "rill-admin"
)

// databasePrivileges are granted to a resource's user on its own database (`db`.*) and nowhere else.
const databasePrivileges = "SELECT, INSERT, ALTER, CREATE TABLE, CREATE VIEW, CREATE DICTIONARY, " +
	"DROP TABLE, DROP VIEW, DROP DICTIONARY, TRUNCATE, OPTIMIZE, SHOW TABLES, SHOW COLUMNS, SHOW DICTIONARIES, dictGet"

// statement is one SQL statement with what it does, for error messages (which never quote the SQL:
// some statements carry a password).
type statement struct {
	what string
	sql  string
}

// provisionStatements returns the statements that create a resource's database and user, give the
// user the password, and grant it access to its database only (plus Rill's source grants). They are
// idempotent. The database's COMMENT is the annotations as JSON, as in Rill.
//
// On servers where a user can have several passwords (f.addIdentified), the new password is added
// next to the old ones, and finish, run once the new password is known to log in, replaces them all
// with it: clients that still use an old password keep working until then, and a failure before
// finish leaves the old password working. Elsewhere ALTER USER replaces the password at once and
// finish is empty.
func provisionStatements(db, user, password, cluster, comment string, f *serverFeatures) (stmts, finish []statement) {
	qdb, quser, on := quoteIdent(db), quoteIdent(user), onCluster(cluster)
	identified := " IDENTIFIED WITH sha256_password BY " + quoteString(password)
	createDB, userOptions := "CREATE DATABASE IF NOT EXISTS "+qdb+on, ""
	if f.userOptions {
		createDB += " COMMENT " + quoteString(comment)
		userOptions = " DEFAULT DATABASE " + qdb + " GRANTEES NONE"
	}
	setPassword := statement{"setting the password of user " + quser, "ALTER USER " + quser + on + identified + userOptions}
	stmts = []statement{
		{"creating database " + qdb, createDB},
		{"creating user " + quser, "CREATE USER IF NOT EXISTS " + quser + on + identified + userOptions},
	}
	if f.addIdentified {
		stmts = append(stmts, statement{"adding the new password of user " + quser, "ALTER USER " + quser + on + " ADD" + identified})
		setPassword.what = "removing the other passwords of user " + quser
		finish = []statement{setPassword}
	} else {
		stmts = append(stmts, setPassword)
	}
	stmts = append(stmts,
		statement{"granting user " + quser + " access to database " + qdb, "GRANT" + on + " " + databasePrivileges + " ON " + qdb + ".* TO " + quser},
		statement{"granting user " + quser + " SELECT on system.parts", "GRANT" + on + " SELECT ON system.parts TO " + quser},
	)
	if len(f.sourcePrivileges) > 0 {
		stmts = append(stmts, statement{"granting user " + quser + " the source privileges " + strings.Join(f.sourcePrivileges, ", "),
			"GRANT" + on + " " + strings.Join(f.sourcePrivileges, ", ") + " ON *.* TO " + quser})
	}
	return stmts, finish
}

// deprovisionStatements drop the user first, so that clients lose access before the data goes.
func deprovisionStatements(dbs []string, user, cluster string) []statement {
	on := onCluster(cluster)
	stmts := []statement{{"dropping user " + quoteIdent(user), "DROP USER IF EXISTS " + quoteIdent(user) + on}}
	for _, db := range dbs {
		stmts = append(stmts, statement{"dropping database " + quoteIdent(db), "DROP DATABASE IF EXISTS " + quoteIdent(db) + on})
	}
	return stmts
}

// checkClickHouseResource refuses, before any call to the server, a resource without an ID or of
// another type (a validation of the argument, not the contract's CheckResource read).
func checkClickHouseResource(r *provisioner.Resource) error {
	if r == nil || r.ID == "" {
		return errors.New("clickhouse-static: the resource has no ID")
	}
	if r.Type != "" && r.Type != provisioner.ResourceTypeClickHouse {
		return wrongTypeError(r.Type)
	}
	return nil
}

// wrongTypeError refuses a resource of type rt, which is not ClickHouse: the one wording of
// checkClickHouseResource and CheckCreate.
func wrongTypeError(rt provisioner.ResourceType) error {
	return fmt.Errorf("clickhouse-static provisions only %q resources, not %q", provisioner.ResourceTypeClickHouse, rt)
}

// resourceDSN returns the dsn in a resource's config, or "".
func resourceDSN(r *provisioner.Resource) string {
	if r == nil || r.Config == nil {
		return ""
	}
	cfg, err := provisioner.NewClickhouseConfig(r.Config)
	if err != nil {
		return ""
	}
	return cfg.DSN
}

// onCurrentAddress returns r with the DSNs of its config rebuilt on the spec's dsn and write_dsn as
// they are now (host, port, options), with the resource's own user, password and database: a
// resource's DSNs are the spec's with its credentials (withCredentials). r itself when its DSNs are
// current, or when it has none (then there is no password to move).
func (p *Provisioner) onCurrentAddress(r *provisioner.Resource) *provisioner.Resource {
	cfg, err := provisioner.NewClickhouseConfig(r.Config)
	if err != nil || cfg.DSN == "" {
		return r
	}
	u, err := churl.Parse(cfg.DSN)
	if err != nil || u.User == nil {
		return r
	}
	password, ok := u.User.Password()
	if !ok {
		return r
	}
	user, db := u.User.Username(), strings.TrimPrefix(u.Path, "/")
	dsn, err := withCredentials(p.dsn, user, password, db)
	if err != nil {
		return r
	}
	writeDSN := ""
	if p.writeDSN != "" {
		if writeDSN, err = withCredentials(p.writeDSN, user, password, db); err != nil {
			return r
		}
	}
	if dsn == cfg.DSN && writeDSN == cfg.WriteDSN {
		return r
	}
	cfg.DSN, cfg.WriteDSN = dsn, writeDSN
	return &provisioner.Resource{ID: r.ID, Type: r.Type, State: r.State, Config: cfg.AsMap()}
}

// loginWhereItIs logs in with the resource's own DSN (r's config, non-empty) and returns r as found.
// A server that moved (a new address in the spec's dsn or write_dsn) no longer answers at the
// address in that DSN: then, and only then, the same user and password are tried at the spec's
// address, and a login there returns r with its DSNs on it (onCurrentAddress). A generated password
// cannot be set again by a version, so with the old address kept every refresh failed for ever.
// The recorded address is asked first because the spec may name another server that never had the
// resource (a new cluster for new resources): a login refused there is no verdict on this resource
// (gone would re-create it there and leave its database behind), so it is an error that says both,
// never a refused login (isGoneError) for the caller to read as gone.
func (p *Provisioner) loginWhereItIs(ctx context.Context, r *provisioner.Resource) (*provisioner.Resource, error) {
	dsn := resourceDSN(r)
	err := p.selectOne(ctx, dsn)
	if err == nil || isGoneError(err) || ctx.Err() != nil {
		return r, err
	}
	moved := p.onCurrentAddress(r)
	if moved == r {
		return r, err
	}
	movedErr := p.selectOne(ctx, resourceDSN(moved))
	if movedErr == nil {
		p.logger.Info("the resource's ClickHouse address does not answer and the spec's address now logs it in: its DSNs follow the spec",
			zap.String("resource_id", r.ID), zap.String("error", p.scrub(err.Error(), secretsOfDSN(dsn)...)))
		return moved, nil
	}
	there := p.scrub(movedErr.Error(), secretsOfDSN(resourceDSN(moved))...)
	if code := exceptionCode(movedErr); code != 0 {
		// Not in the "code: N," form exceptionCode reads: the error is the recorded address's.
		there = fmt.Sprintf("ClickHouse refuses it (error code %d)", code)
	}
	return r, fmt.Errorf("%w; at the provisioner's address now (its spec's dsn) the same login fails too: %s", err, there)
}

func stateString(r *provisioner.Resource, key string) (string, bool) {
	if r == nil || r.State == nil {
		return "", false
	}
	v, ok := r.State[key].(string)
	return v, ok && v != ""
}

// Provision creates the resource's database and user, or returns r unchanged when the DSN in its
// config still works. With a password in the args (ClickhouseArgs), it always sets that password
// (there is no DSN to check: the caller keeps no secret). See provisionStatements for the SQL.
func (p *Provisioner) Provision(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	res, _, err := p.ProvisionReportingCreation(ctx, r, opts)
	return res, err
}

// ProvisionReportingCreation implements provisioner.CreationReporter: it is Provision, and reports
// whether the call created the resource. A resource's ID is random and its database and user are
// named after it, so nobody else creates them: a call for a resource without state (a create) created
// what is there once it sent its first statement, and created nothing when it failed before that (an
// unreachable server, refused admin credentials, a server without SQL user management), so that a
// failed create then has nothing to undo.
func (p *Provisioner) ProvisionReportingCreation(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, bool, error) {
	res, sent, err := p.provision(ctx, r, opts)
	return res, sent && len(r.State) == 0, err
}

// provision is Provision, and reports whether it sent a statement that may have changed the server.
func (p *Provisioner) provision(ctx context.Context, r *provisioner.Resource, opts *provisioner.ResourceOptions) (*provisioner.Resource, bool, error) {
	if err := checkClickHouseResource(r); err != nil {
		return nil, false, err
	}
	var annotations map[string]string
	var rawArgs map[string]any
	if opts != nil {
		annotations, rawArgs = opts.Annotations, opts.Args
	}
	args, err := provisioner.NewClickhouseArgs(rawArgs)
	if err != nil {
		return nil, false, fmt.Errorf("clickhouse args: %w", err)
	}

	if dsn := resourceDSN(r); dsn != "" && args.Password == "" {
		found, err := p.loginWhereItIs(ctx, r)
		if err == nil {
			return found, false, nil
		}
		if !isGoneError(err) {
			return nil, false, fmt.Errorf("checking the existing ClickHouse resource %s with its own credentials: %s", r.ID, p.scrub(err.Error(), secretsOfDSN(dsn)...))
		}
		if err := p.refusedElsewhereUnlessFound(ctx, r, dsn, exceptionCode(err)); err != nil {
			return nil, false, err
		}
		p.logger.Warn("the credentials of a provisioned ClickHouse resource no longer work; provisioning it again",
			zap.String("resource_id", r.ID), zap.Int("clickhouse_code", exceptionCode(err)))
	}

	// The names it was created with (or adopted under: Rill's), even if the org or project was renamed
	// since; a new resource gets ours. A user adopted from Rill whose database was never found gets
	// the one Rill's rule gives it, so the pair keeps one naming.
	user := recordedUser(r)
	db := recordedDatabase(r, configuredDatabase(r))
	switch {
	case db != "":
	case isRillUser(r.ID, user) && rillDatabaseKind(r.ID, rillDatabaseName(r.ID, annotations)) != rillUndetermined:
		db = rillDatabaseName(r.ID, annotations)
	default:
		// Ours keeps the whole ID. Rill's, cut before enough of the ID, could be another resource's
		// existing database (Rill gives all the resources of such a project one), which the
		// statements would grant this user and a destroy drop.
		db = databaseName(r.ID, annotations)
	}

	password := args.Password
	if password == "" {
		if password, err = p.newPassword(); err != nil {
			return nil, false, err
		}
	}
	cfg := &provisioner.ClickhouseConfig{Cluster: p.cluster, Database: db, User: user}
	if cfg.DSN, err = withCredentials(p.dsn, user, password, db); err != nil {
		return nil, false, errors.New("building the resource DSN from the admin dsn: the admin DSN is not a valid URL")
	}
	if p.writeDSN != "" {
		if cfg.WriteDSN, err = withCredentials(p.writeDSN, user, password, db); err != nil {
			return nil, false, errors.New("building the resource write_dsn: the write_dsn is not a valid URL")
		}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	comment, err := json.Marshal(annotations) // keys sorted: the same annotations give the same comment
	if err != nil {
		return nil, false, fmt.Errorf("encoding the annotations for the database comment: %w", err)
	}

	conn, features, err := p.managerSession(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("provisioning ClickHouse resource %s: %w", r.ID, err)
	}
	stmts, finish := provisionStatements(db, user, password, p.cluster, string(comment), features)
	// What a failure past the first statement may have made, for a caller that keeps the resource
	// (a create whose undo failed too: provisioner.Provisioner's partial result). Its later refresh
	// then knows its names and finds it gone when they are, as any resource of ours; without them it
	// would pass for an import, and look for what Rill's admin service made for its ID (adoptRill).
	made := &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeClickHouse,
		State: map[string]any{stateDatabase: db, stateUser: user, stateCluster: p.cluster}}
	if err := p.execAll(ctx, conn, r.ID, password, stmts); err != nil {
		return made, true, err
	}
	if len(finish) > 0 {
		// The old passwords go only once the new one logs in (on a cluster, once it reached the replica
		// the DSN points at).
		if err := p.waitForLogin(ctx, r.ID, cfg.DSN); err != nil {
			return made, true, fmt.Errorf("provisioning ClickHouse resource %s: the new password was set but %w; any password the user had before still works", r.ID, err)
		}
		if err := p.execAll(ctx, conn, r.ID, password, finish); err != nil {
			return made, true, err
		}
	}
	p.logger.Info("provisioned a ClickHouse database and user", zap.String("resource_id", r.ID),
		zap.String("database", db), zap.String("user", user), zap.String("cluster", p.cluster),
		zap.Bool("password_from_args", args.Password != ""), zap.Bool("old_passwords_kept_until_verified", len(finish) > 0),
		zap.Strings("source_privileges", features.sourcePrivileges))

	return &provisioner.Resource{
		ID:     r.ID,
		Type:   provisioner.ResourceTypeClickHouse,
		State:  map[string]any{stateDatabase: db, stateUser: user, stateCluster: p.cluster},
		Config: cfg.AsMap(),
	}, true, nil
}

// execAll runs statements in order and stops at the first failure, whose error names the step.
func (p *Provisioner) execAll(ctx context.Context, conn session, id, password string, stmts []statement) error {
	for _, st := range stmts {
		if err := conn.Exec(ctx, st.sql); err != nil {
			msg := p.scrub(err.Error(), password)
			p.logger.Error("provisioning a ClickHouse resource failed", zap.String("resource_id", id),
				zap.String("step", st.what), zap.Int("clickhouse_code", exceptionCode(err)), zap.String("error", msg))
			return fmt.Errorf("provisioning ClickHouse resource %s: %s: %s", id, st.what, msg)
		}
	}
	return nil
}

// Deprovision drops the resource's user and database. Both being gone already is success. The names
// are the recorded ones (r.Config, else r.State: ours, or Rill's for an adopted resource), which must
// be names r.ID can have; without any, the user is ours for the ID and databases named for the ID
// are looked up in system.databases.
func (p *Provisioner) Deprovision(ctx context.Context, r *provisioner.Resource) error {
	if err := checkClickHouseResource(r); err != nil {
		return err
	}
	user := recordedUser(r)
	if u, ok := stateString(r, stateUser); ok && u != user {
		return fmt.Errorf("deprovisioning ClickHouse resource %s: refusing to drop user %s from the state: resource %s's user is %s", r.ID, quoteIdent(u), r.ID, quoteIdent(user))
	}
	cluster := p.cluster
	if c, ok := r.State[stateCluster].(string); ok {
		cluster = c // the cluster it was created on
	}

	dbs := map[string]bool{}
	stateDB, _ := stateString(r, stateDatabase)
	for _, db := range []string{configuredDatabase(r), stateDB} {
		if db == "" {
			continue
		}
		if !isDatabaseOf(r.ID, user, db) {
			return fmt.Errorf("deprovisioning ClickHouse resource %s: refusing to drop database %s from the state: it is not named for this resource", r.ID, quoteIdent(db))
		}
		dbs[db] = true
	}

	conn, _, err := p.managerSession(ctx)
	if err != nil {
		return fmt.Errorf("deprovisioning ClickHouse resource %s: %w", r.ID, err)
	}
	if len(dbs) == 0 {
		// No state (say, a Provision that failed after creating the database): find it by its ID suffix.
		found, err := p.databasesOf(ctx, conn, r.ID)
		if err != nil {
			return fmt.Errorf("deprovisioning ClickHouse resource %s: %w", r.ID, err)
		}
		for _, n := range found {
			dbs[n] = true
		}
	}
	names := slices.Sorted(maps.Keys(dbs))
	for _, db := range names {
		if !isRillUser(r.ID, user) || rillDatabaseKind(r.ID, db) != rillUndetermined {
			continue
		}
		sharers, err := p.sharersOf(ctx, conn, db, user)
		if err != nil {
			return fmt.Errorf("deprovisioning ClickHouse resource %s: looking up the other users of database %s: %s", r.ID, quoteIdent(db), p.scrub(err.Error()))
		}
		if sharers != "" {
			return fmt.Errorf("deprovisioning ClickHouse resource %s: refusing to drop database %s: it is also the default database of %s, which Rill's admin service "+
				"gave it since the import (it cuts the names of a project's resources to 63 characters before their IDs, so they all get this one). Nothing "+
				"was dropped. Move the other resources' tables to databases of their own, or `terraform state rm` this resource to leave the database to them",
				r.ID, quoteIdent(db), sharers)
		}
	}

	for _, st := range deprovisionStatements(names, user, cluster) {
		if err := conn.Exec(ctx, st.sql); err != nil {
			return fmt.Errorf("deprovisioning ClickHouse resource %s: %s: %s", r.ID, st.what, p.scrub(err.Error()))
		}
	}
	p.logger.Info("deprovisioned a ClickHouse database and user", zap.String("resource_id", r.ID),
		zap.Strings("databases", names), zap.String("user", user), zap.String("cluster", cluster))
	return nil
}

// CheckResource logs in with the resource's own DSN and runs SELECT 1; it changes nothing. When the
// login is refused (the user, its password or the database is not what the DSN says), checkRefusedLogin
// looks them up: the error wraps provisioner.ErrResourceNotFound only when both the user and the
// database are gone; network and other failures never do. A resource without a DSN (an import, a
// write-only password) is looked up by name instead; see checkWithoutCredentials.
func (p *Provisioner) CheckResource(ctx context.Context, r *provisioner.Resource, _ *provisioner.ResourceOptions) (*provisioner.Resource, error) {
	if err := checkClickHouseResource(r); err != nil {
		return nil, err
	}
	dsn := resourceDSN(r)
	if dsn == "" {
		res, err := p.checkWithoutCredentials(ctx, r)
		if err == nil && len(r.State) == 0 && configuredDatabase(r) == "" {
			p.reportAnnotations(ctx, res) // an import: what the configuration it goes into had
		}
		return res, err
	}
	found, err := p.loginWhereItIs(ctx, r)
	switch {
	case err == nil:
		return found, nil
	case isGoneError(err):
		return p.checkRefusedLogin(ctx, r, exceptionCode(err))
	default:
		return nil, fmt.Errorf("checking ClickHouse resource %s: %s", r.ID, p.scrub(err.Error(), secretsOfDSN(dsn)...))
	}
}

// checkRefusedLogin is CheckResource for a resource whose own login was refused (code): the user, the
// database or the password is not what the DSN says. The login alone cannot tell which (ClickHouse
// answers an unknown user and a wrong password alike, code 516, so as not to tell who exists), so the
// admin connection looks the user and database up by name, read-only:
//
//   - both are there: the password was changed outside Terraform (or the user dropped and created
//     again by hand). That is drift of the password, not a deletion: the resource is found, with a
//     config without a dsn (the one the caller holds no longer logs in) and the drift in its state
//     (provisioner.StateKeyDrift); the caller plans an update, whose Provision sets a new password
//     (ALTER USER ... IDENTIFIED) and keeps the database and its data. A re-creation would have
//     given it a new ID and left both behind.
//   - one of them is there: half present (halfPresent), found too, for the same reason.
//   - neither: gone, when the admin connection reaches the servers the resource's DSN names. When
//     the spec's dsn names other hosts now (a new server for new resources, or the resource's server
//     under a new address), finding nothing there is no verdict on the resource's server: an error
//     naming both, since gone would re-create the resource on the spec's server and leave its
//     database behind on its own.
//   - the lookup fails: an error, never gone, since a gone verdict re-creates the resource under a
//     new ID and would leave a database that is still there behind, managed by nothing.
func (p *Provisioner) checkRefusedLogin(ctx context.Context, r *provisioner.Resource, code int) (*provisioner.Resource, error) {
	known, err := provisioner.NewClickhouseConfig(r.Config)
	if err != nil {
		return nil, fmt.Errorf("checking ClickHouse resource %s: %w", r.ID, err)
	}
	user, db := recordedUser(r), recordedDatabase(r, known.Database)
	users, dbs, err := p.lookUp(ctx, r.ID, user, db)
	if err != nil {
		return nil, fmt.Errorf("checking ClickHouse resource %s: its own login was refused (ClickHouse error code %d), and whether its user and database are still there could not be read through the admin connection: %w", r.ID, code, err)
	}
	switch {
	case len(dbs) > 1:
		return nil, fmt.Errorf("ClickHouse resource %s: several databases are named for it (%s); drop all but one first", r.ID, strings.Join(dbs, ", "))
	case len(users) == 0 && len(dbs) == 0:
		if err := p.refusedOnAnotherServer(r.ID, known.DSN, code, user, db); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("ClickHouse resource %s: its user %s and its database %s no longer exist (ClickHouse error code %d): %w", r.ID, quoteIdent(user), quoteIdent(db), code, provisioner.ErrResourceNotFound)
	case len(users) == 0 || len(dbs) == 0:
		if len(dbs) == 1 {
			db = dbs[0]
		}
		return p.halfPresent(r, known.Cluster, user, db, len(users) == 1), nil
	}
	user, db = users[0], dbs[0]
	drift := "the password of user " + quoteIdent(user) + " no longer logs in (changed outside Terraform): the apply sets a new one and keeps database " + quoteIdent(db)
	p.logger.Warn("the password of a provisioned ClickHouse user was changed outside Terraform; its user and database are still there",
		zap.String("resource_id", r.ID), zap.String("user", user), zap.String("database", db), zap.Int("clickhouse_code", code))
	cfg := &provisioner.ClickhouseConfig{Cluster: known.Cluster, Database: db, User: user}
	if cfg.Cluster == "" {
		cfg.Cluster = p.cluster
	}
	state := map[string]any{stateDatabase: db, stateUser: user, stateCluster: cfg.Cluster, provisioner.StateKeyDrift: []string{drift}}
	return &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeClickHouse, State: state, Config: cfg.AsMap()}, nil
}

// refusedElsewhereUnlessFound is refusedOnAnotherServer for an update (Provision), which would
// otherwise provision the resource again at the spec's address: with `-refresh=false`, or a saved
// plan, no refresh told it first. It looks the user and database up only when dsn names other hosts
// than the spec's; finding either there makes that server the resource's, as the refresh takes it.
func (p *Provisioner) refusedElsewhereUnlessFound(ctx context.Context, r *provisioner.Resource, dsn string, code int) error {
	if slices.Equal(dsnHosts(dsn), dsnHosts(p.dsn)) {
		return nil
	}
	user := recordedUser(r)
	db := recordedDatabase(r, configuredDatabase(r))
	users, dbs, err := p.lookUp(ctx, r.ID, user, db)
	if err != nil {
		return fmt.Errorf("provisioning ClickHouse resource %s: its own login was refused (ClickHouse error code %d), and whether its user and database are at the address the provisioner's dsn names now could not be read through the admin connection: %w", r.ID, code, err)
	}
	if len(users) > 0 || len(dbs) > 0 {
		return nil
	}
	return p.refusedAtAnotherServerError(r.ID, dsn, code, user, db)
}

// refusedOnAnotherServer is the error for a resource whose own login, with dsn, was refused (code)
// and whose user and database the admin connection does not find, when dsn names other hosts than
// the spec's dsn: the admin connection reaches another server (a new one for new resources, say), so
// that says nothing of the resource's own server. Gone would re-create the resource there, and
// provisioning it again would make a new, empty database there, either way leaving its database
// behind. nil when dsn names the spec's hosts (then the admin connection reaches the resource's server).
func (p *Provisioner) refusedOnAnotherServer(id, dsn string, code int, user, db string) error {
	if slices.Equal(dsnHosts(dsn), dsnHosts(p.dsn)) {
		return nil
	}
	return p.refusedAtAnotherServerError(id, dsn, code, user, db)
}

// refusedAtAnotherServerError is refusedOnAnotherServer's error, for a caller that compared the hosts.
func (p *Provisioner) refusedAtAnotherServerError(id, dsn string, code int, user, db string) error {
	own, spec := dsnHosts(dsn), dsnHosts(p.dsn)
	return fmt.Errorf("ClickHouse resource %s: its own login at %s was refused (ClickHouse error code %d), and neither its user %s nor "+
		"its database %s is at %s, which the provisioner's dsn names now: another server than the resource's, as far as can be told, "+
		"so this is no sign that the resource is gone. If it is still at %s, see there why its login is refused; if it was deleted "+
		"there, remove it from the state (terraform state rm) and the next apply creates it at %s", id, strings.Join(own, ","), code,
		quoteIdent(user), quoteIdent(db), strings.Join(spec, ","), strings.Join(own, ","), strings.Join(spec, ","))
}

// recordedDatabase is the name of a provisioned resource's database: the one its config names, else
// the one its state names, when it is a name of the resource's (isDatabaseOf: ours, or Rill's for an
// adopted resource, whose recordedUser is Rill's); "" when neither is.
func recordedDatabase(r *provisioner.Resource, configured string) string {
	user := recordedUser(r)
	if configured != "" && isDatabaseOf(r.ID, user, configured) {
		return configured
	}
	if db, ok := stateString(r, stateDatabase); ok && isDatabaseOf(r.ID, user, db) {
		return db
	}
	return ""
}

// configuredDatabase is the database r.Config names, or "".
func configuredDatabase(r *provisioner.Resource) string {
	if r == nil || r.Config == nil {
		return ""
	}
	db, _ := r.Config["database"].(string)
	return db
}

// recordedUser is the name of a resource's user: the one its config names, else the one its state
// names, when it is a name of the resource's (isUserOf: ours, or Rill's for an adopted resource);
// else ours for its ID. Every operation after an import goes by it, never by re-deriving our name.
func recordedUser(r *provisioner.Resource) string {
	if r.Config != nil {
		if u, _ := r.Config["user"].(string); u != "" && isUserOf(r.ID, u) {
			return u
		}
	}
	if u, ok := stateString(r, stateUser); ok && isUserOf(r.ID, u) {
		return u
	}
	return userName(r.ID)
}

// halfPresent is CheckResource's answer for a provisioned resource of which exactly one half is still
// on the server: its user (userExists) or its database. Such a resource is not gone: a gone verdict
// would have Terraform re-create it under a new ID and leave the half that is still there (often
// the database, with the user's data) on the server, managed by nothing. That is what a destroy
// killed between its DROP USER and DROP DATABASE leaves, or a user dropped by hand. It is found,
// with the same ID, a config that names only the half that exists (the other's name is empty: it is
// not there) and no dsn (it no longer logs in), a state that keeps both names (so that the update
// re-creates the missing half under the name it had) and the drift naming what is missing. The
// caller then plans an in-place update, whose Provision creates the missing half (CREATE ... IF NOT
// EXISTS: a database empty, with its comment; a user with the password of the args or a new one)
// and keeps the other; a destroy drops what is left (DROP ... IF EXISTS).
func (p *Provisioner) halfPresent(r *provisioner.Resource, cluster, user, db string, userExists bool) *provisioner.Resource {
	if cluster == "" {
		cluster = p.cluster
	}
	cfg := &provisioner.ClickhouseConfig{Cluster: cluster}
	var drift string
	if userExists {
		cfg.User = user
		what := "database " + quoteIdent(db)
		if db == "" {
			what = "the database"
		}
		drift = what + " of user " + quoteIdent(user) + " is missing (dropped outside Terraform, or a destroy stopped half-way): " +
			"the apply creates it again, empty, under the same ID and keeps the user; a destroy drops the user"
	} else {
		cfg.Database = db
		drift = "user " + quoteIdent(user) + " of database " + quoteIdent(db) + " is missing (dropped outside Terraform, or a destroy stopped between its DROP USER and DROP DATABASE): " +
			"the apply creates it again under the same ID and keeps the database and its data; a destroy drops the database"
	}
	p.logger.Warn("half of a provisioned ClickHouse resource is missing; keeping it so that the apply re-creates the missing half, or a destroy drops the rest",
		zap.String("resource_id", r.ID), zap.String("user", user), zap.String("database", db), zap.Bool("user_exists", userExists))
	state := map[string]any{stateDatabase: db, stateUser: user, stateCluster: cluster, provisioner.StateKeyDrift: []string{drift}}
	return &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeClickHouse, State: state, Config: cfg.AsMap()}
}

// lookUp returns, read-only through the admin connection, the resource's user (recordedUser) if it
// exists, and its database: db when that is a name of the resource's, else those named for the ID. A
// server older than 20.4 has no system.users, and no SQL users at all (see checkWithoutCredentials).
func (p *Provisioner) lookUp(ctx context.Context, resourceID, user, db string) (users, dbs []string, err error) {
	conn, err := p.adminSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	users, err = conn.QueryStrings(ctx, "SELECT name FROM system.users WHERE name = "+quoteString(user))
	switch {
	case exceptionCode(err) == codeUnknownTable:
		users = nil
	case err != nil:
		return nil, nil, fmt.Errorf("looking up user %s: %s", quoteIdent(user), p.scrub(err.Error()))
	}
	if db == "" || !isDatabaseOf(resourceID, user, db) {
		dbs, err = p.databasesOf(ctx, conn, resourceID)
		return users, dbs, err
	}
	dbs, err = conn.QueryStrings(ctx, "SELECT name FROM system.databases WHERE name = "+quoteString(db))
	if err != nil {
		return nil, nil, fmt.Errorf("looking up database %s: %s", quoteIdent(db), p.scrub(err.Error()))
	}
	return users, dbs, nil
}

// checkWithoutCredentials is CheckResource for a resource whose password is not known here: an import
// (ClickHouse keeps only the password's hash), or a resource whose password the caller keeps out of
// its state (a write-only password). Through the admin connection, read-only, it looks up its user
// (recordedUser) and its database (the one in r.Config or r.State, else those named for the ID).
//
// Either existing is enough, neither is gone. When r.Config names the user and database (a resource
// provisioned or adopted earlier), one of them missing is halfPresent; otherwise (an import) it
// returns a config without a dsn that names those that exist, and when none of ours exists, those
// Rill's admin service made for the ID (adoptRill).
func (p *Provisioner) checkWithoutCredentials(ctx context.Context, r *provisioner.Resource) (*provisioner.Resource, error) {
	known, err := provisioner.NewClickhouseConfig(r.Config)
	if err != nil {
		return nil, fmt.Errorf("checking ClickHouse resource %s: %w", r.ID, err)
	}
	provisioned := known.User != "" && known.Database != ""
	user := recordedUser(r)
	if provisioned && known.User != user {
		return nil, fmt.Errorf("checking ClickHouse resource %s: its config names user %s, but its user is %s", r.ID, quoteIdent(known.User), quoteIdent(user))
	}
	db, ok := known.Database, provisioned
	if !ok {
		db, _ = stateString(r, stateDatabase)
	}
	users, dbs, err := p.lookUp(ctx, r.ID, user, db)
	if err != nil {
		return nil, fmt.Errorf("checking ClickHouse resource %s: %w", r.ID, err)
	}
	imported := len(r.State) == 0 && known.User == "" && known.Database == ""
	if imported && len(users) == 0 && len(dbs) == 1 {
		// A database of ours without our user: maybe a Rill user adopted alone, given ours by the
		// apply (a name Rill's rule cuts before the ID could be another resource's) and made its
		// DEFAULT DATABASE, then `terraform state rm`. Without Rill's user the apply would add ours
		// on the database, and a destroy leave Rill's, with its password and grants, to nobody.
		rill, err := p.rillUserWithDefault(ctx, r.ID, dbs[0])
		if err != nil {
			return nil, fmt.Errorf("checking ClickHouse resource %s: %w", r.ID, err)
		}
		if rill != "" {
			user, users = rill, []string{rill}
		}
	}
	switch {
	case provisioned && len(users) == 0 && len(dbs) == 0:
		return nil, fmt.Errorf("ClickHouse resource %s: its user %s and its database %s no longer exist: %w", r.ID, quoteIdent(user), quoteIdent(db), provisioner.ErrResourceNotFound)
	case provisioned && (len(users) == 0 || len(dbs) == 0):
		return p.keepAdoption(r, p.halfPresent(r, known.Cluster, user, db, len(users) == 1)), nil
	case len(users) == 0 && len(dbs) == 0 && imported:
		// Nothing of ours, and nothing recorded (an import): maybe Rill's admin service made it.
		return p.adoptRill(ctx, r)
	case len(users) == 0 && len(dbs) == 0:
		return nil, fmt.Errorf("ClickHouse resource %s: neither user %s nor a database named for it exists: %w", r.ID, quoteIdent(user), provisioner.ErrResourceNotFound)
	case len(dbs) > 1:
		return nil, fmt.Errorf("ClickHouse resource %s: several databases are named for it (%s); drop all but one first", r.ID, strings.Join(dbs, ", "))
	}
	cfg := &provisioner.ClickhouseConfig{Cluster: p.cluster}
	state := map[string]any{stateDatabase: db, stateUser: user, stateCluster: p.cluster}
	if len(users) == 1 {
		cfg.User = user
	}
	if len(dbs) == 1 {
		cfg.Database, state[stateDatabase] = dbs[0], dbs[0]
	}
	p.logger.Info("found a ClickHouse resource without its credentials", zap.String("resource_id", r.ID),
		zap.String("database", cfg.Database), zap.Bool("user_exists", len(users) == 1), zap.Bool("provisioned_before", provisioned))
	return p.keepAdoption(r, &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeClickHouse, State: state, Config: cfg.AsMap()}), nil
}

// reportAnnotations adds to an imported resource's state (provisioner.StateKeyAnnotations) the
// annotations its database was created with: Provision writes them, as JSON, in the database's
// COMMENT (as Rill does), so that an import restores them and a configuration generated from it, or
// the one it came from, plans no change of them. Those of the creation: a change of the annotations
// since then does not rewrite the comment. A database without such a comment (a server older than
// 21.11 has none; one made by hand), or a comment that cannot be read, restores none: that is no
// reason to fail the import, whose resource is there.
func (p *Provisioner) reportAnnotations(ctx context.Context, res *provisioner.Resource) {
	db := configuredDatabase(res)
	if db == "" || res.State == nil {
		return
	}
	conn, err := p.adminSession(ctx)
	if err != nil {
		return
	}
	comments, err := conn.QueryStrings(ctx, "SELECT comment FROM system.databases WHERE name = "+quoteString(db))
	var annotations map[string]string
	if err != nil || len(comments) != 1 || json.Unmarshal([]byte(comments[0]), &annotations) != nil || len(annotations) == 0 {
		p.logger.Info("the imported database's comment holds no annotations; none are restored", zap.String("database", db),
			zap.Int("clickhouse_code", exceptionCode(err)))
		return
	}
	res.State[provisioner.StateKeyAnnotations] = annotations
}

// adoptRill is checkWithoutCredentials for an import whose ID has none of our names on the server: it
// looks for the objects Rill's admin service makes for the ID (naming.go, rillUserName and
// rillDatabaseName), read-only. The user is found by its name; its database is the user's
// default_database (Rill creates the user with DEFAULT DATABASE), else (no user, no default
// database, or one that is gone) the one database whose name Rill's rule gives the ID
// (rillDatabaseByName). Several such names, or only names cut so short that they cannot tell whose
// they are, are an error naming them and what to do, never "gone": a gone verdict would leave a
// database that may be this resource's, with its data, to nobody. Nothing at all is gone.
//
// What it finds is recorded (the config's and the state's user and database), and every later call
// uses those names. The state carries stateAdoptedFrom until the first Provision, so that every
// refresh until then warns what the apply does to the password Rill's deployment uses.
func (p *Provisioner) adoptRill(ctx context.Context, r *provisioner.Resource) (*provisioner.Resource, error) {
	fail := func(format string, args ...any) (*provisioner.Resource, error) {
		return nil, fmt.Errorf("ClickHouse resource %s: "+format, append([]any{r.ID}, args...)...)
	}
	if lower := strings.ToLower(r.ID); lower != r.ID {
		// Rill names the user after the ID as given and the database after its lowercase: with
		// capitals, the lookup would find Rill's database but not its user, and the update would add
		// a second user to the database and leave Rill's to nobody. Rill's IDs are PostgreSQL's
		// UUIDs, lowercase (as are this provider's).
		return fail("Rill's admin service gives resource IDs in lowercase, and names the user after the ID as written: import it as %s", lower)
	}
	conn, err := p.adminSession(ctx)
	if err != nil {
		return fail("%w", err)
	}
	ours, user := userName(r.ID), rillUserName(r.ID)
	userExists, db, err := p.userDefault(ctx, conn, user)
	if err != nil {
		return fail("%w", err)
	}
	dbExists := false
	if db != "" {
		if rillDatabaseKind(r.ID, db) == rillNone {
			return fail("user %s (the name Rill's admin service gives it) has default database %s, which is not a name Rill gives this resource: "+
				"refusing to adopt it, since a destroy would drop it. If it is this resource's, rename it (RENAME DATABASE) to the name Rill gives it; "+
				"otherwise set the user's DEFAULT DATABASE to its own database, and import again", quoteIdent(user), quoteIdent(db))
		}
		found, err := conn.QueryStrings(ctx, "SELECT name FROM system.databases WHERE name = "+quoteString(db))
		if err != nil {
			return fail("looking up database %s: %s", quoteIdent(db), p.scrub(err.Error()))
		}
		dbExists = len(found) == 1
		if dbExists && rillDatabaseKind(r.ID, db) == rillUndetermined {
			sharers, err := p.sharersOf(ctx, conn, db, user)
			if err != nil {
				return fail("looking up the other users of database %s: %s", quoteIdent(db), p.scrub(err.Error()))
			}
			if sharers != "" {
				return fail("its database %s (user %s's default database) is also the default database of %s: Rill's admin service cut their names to 63 "+
					"characters before the resource IDs, which gave several resources this one database. Refusing to adopt it, since a destroy would "+
					"drop the others' data too. Leave it to Rill's admin service, or move this resource's tables to a database of its own, %s (a name "+
					"Rill's rule gives it), make that user %s's DEFAULT DATABASE, and import again", quoteIdent(db), quoteIdent(user), sharers,
					quoteIdent(rillDatabaseName(r.ID, nil)), quoteIdent(user))
			}
		}
	}
	if !dbExists {
		// No user, a user without a default database, or one whose default database is gone: the
		// database is found by the names Rill's rule gives the ID. ClickHouse keeps a user's
		// default_database as it was when its database is renamed (say, by hand after a project
		// rename) or dropped, so a gone default database is no proof that the resource has none: one
		// renamed to another name of the ID's, with its data, would be left to nobody while the apply
		// created an empty one under the old name. Names that keep too little of the ID to say whose
		// they are do not count then: the user's default database already said which is its own.
		found, err := p.rillDatabaseByName(ctx, conn, r.ID, user, db == "")
		if err != nil {
			return nil, err
		}
		if found != "" {
			db, dbExists = found, true
		}
	}
	if !userExists && !dbExists {
		return nil, fmt.Errorf("ClickHouse resource %s: neither user %s nor a database named for it exists, nor user %s or a database named for it by Rill's admin service: %w",
			r.ID, quoteIdent(ours), quoteIdent(user), provisioner.ErrResourceNotFound)
	}
	cfg := &provisioner.ClickhouseConfig{Cluster: p.cluster}
	if userExists {
		cfg.User = user
	}
	if dbExists {
		cfg.Database = db
	}
	state := map[string]any{stateDatabase: db, stateUser: user, stateCluster: p.cluster, stateAdoptedFrom: stateAdoptedFromRill}
	p.logger.Info("found a ClickHouse resource made by Rill's admin service; adopting it under Rill's names", zap.String("resource_id", r.ID),
		zap.String("user", cfg.User), zap.String("database", cfg.Database))
	return p.keepAdoption(r, &provisioner.Resource{ID: r.ID, Type: provisioner.ResourceTypeClickHouse, State: state, Config: cfg.AsMap()}), nil
}

// rillDatabaseByName is adoptRill's lookup of the database of resource r.ID, whose user is Rill's
// user, by the names Rill's rule gives the ID (rillDatabaseKind): the one that ends with the whole
// ID, else the one cut to 63 characters that keeps enough of it; "" when there is none. Several, or
// (with unsure) only names cut so short that they cannot tell whose they are, are an error naming
// them and what to do, never "none".
func (p *Provisioner) rillDatabaseByName(ctx context.Context, conn session, id, user string, unsure bool) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("ClickHouse resource %s: "+format, append([]any{id}, args...)...)
	}
	names, err := conn.QueryStrings(ctx, "SELECT name FROM system.databases WHERE startsWith(name, "+quoteString(namePrefix)+")")
	if err != nil {
		return fail("looking up its database by the names Rill's admin service gives: %s", p.scrub(err.Error()))
	}
	byKind := map[rillMatch][]string{}
	for _, n := range names {
		k := rillDatabaseKind(id, n)
		byKind[k] = append(byKind[k], n)
	}
	fix := "give user " + quoteIdent(user) + " its database as DEFAULT DATABASE (ALTER USER, or CREATE USER if it is gone), then import again"
	switch whole, cut, short := byKind[rillWhole], byKind[rillCut], byKind[rillUndetermined]; {
	case len(whole) > 1:
		return fail("several databases are named for it by Rill's admin service (%s): drop all but one, or %s", identList(whole), fix)
	case len(whole) == 1:
		return whole[0], nil
	case len(cut) > 1:
		return fail("several databases could be the one Rill's admin service made for it (%s: names cut to 63 characters); to say which, %s", identList(cut), fix)
	case len(cut) == 1:
		return cut[0], nil
	case unsure && len(short) > 0:
		return fail("its database cannot be told from its name: Rill's admin service cuts names to 63 characters, and %s keep too little of the resource ID "+
			"(fewer than %d characters) to say whose they are. If one of them is this resource's, %s",
			identList(short), minRillIDChars, fix)
	}
	return "", nil
}

// rillUserWithDefault returns Rill's user for resourceID when it exists with db as its default
// database, else "".
func (p *Provisioner) rillUserWithDefault(ctx context.Context, resourceID, db string) (string, error) {
	user := rillUserName(resourceID)
	if !isRillUser(resourceID, user) {
		return "", nil
	}
	conn, err := p.adminSession(ctx)
	if err != nil {
		return "", err
	}
	exists, def, err := p.userDefault(ctx, conn, user)
	if err != nil || !exists || def != db {
		return "", err
	}
	return user, nil
}

// userDefault says whether user exists, and its default database ("" for none, or where the server
// cannot say). A server without system.users (older than 20.4) has no SQL users at all; one without
// its default_database column (older than 21.9) says only whether the user exists.
func (p *Provisioner) userDefault(ctx context.Context, conn session, user string) (exists bool, db string, err error) {
	defaults, err := conn.QueryStrings(ctx, "SELECT default_database FROM system.users WHERE name = "+quoteString(user))
	if exceptionCode(err) == codeUnknownIdentifier {
		var names []string
		if names, err = conn.QueryStrings(ctx, "SELECT name FROM system.users WHERE name = "+quoteString(user)); err == nil {
			return len(names) == 1, "", nil
		}
	}
	switch {
	case exceptionCode(err) == codeUnknownTable:
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("looking up user %s (the name Rill's admin service gives it): %s", quoteIdent(user), p.scrub(err.Error()))
	}
	if len(defaults) != 1 {
		return false, "", nil
	}
	return true, defaults[0], nil
}

// sharersOf lists, quoted and sorted, the users other than user whose default database is db ("" for
// none). A database whose name Rill's admin service cut before the ID is the one its rule gives every
// resource of the project, so Rill makes them share it, each user with it as its default: before the
// import adopts such a database, and again before a destroy drops it (Rill may have given it to a
// deployment it created since), another user of it is a refusal. A server without
// system.users.default_database (older than 21.9; Rill needs 24.9) has none.
func (p *Provisioner) sharersOf(ctx context.Context, conn session, db, user string) (string, error) {
	names, err := conn.QueryStrings(ctx, "SELECT name FROM system.users WHERE default_database = "+quoteString(db)+" AND name != "+quoteString(user))
	switch code := exceptionCode(err); {
	case code == codeUnknownIdentifier || code == codeUnknownTable:
		return "", nil
	case err != nil:
		return "", err
	}
	return identList(names), nil
}

// identList is names quoted as identifiers, sorted and joined by ", ", for messages.
func identList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = quoteIdent(n)
	}
	sort.Strings(quoted)
	return strings.Join(quoted, ", ")
}

// keepAdoption carries the mark of a resource adopted from Rill's admin service (stateAdoptedFrom)
// from r (or res) into res, with its warning; a Provision drops it.
func (p *Provisioner) keepAdoption(r, res *provisioner.Resource) *provisioner.Resource {
	from, _ := r.State[stateAdoptedFrom].(string)
	if f, _ := res.State[stateAdoptedFrom].(string); f != "" {
		from = f
	}
	if from != stateAdoptedFromRill {
		return res
	}
	res.State[stateAdoptedFrom] = from
	cfg, _ := provisioner.NewClickhouseConfig(res.Config)
	user, _ := res.State[stateUser].(string)
	db, _ := res.State[stateDatabase].(string)
	res.State[provisioner.StateKeyWarnings] = []string{rillAdoptionWarning(user, db, cfg.User != "", cfg.Database != "")}
	return res
}

// rillAdoptionWarning says, at every refresh from an import of a resource made by Rill's admin service
// until the first apply, what the apply does to the password the running Rill deployment uses (its
// DSN, in Rill's admin database): ClickHouse keeps only its hash, so the import cannot read it back.
// A database that is missing is said to be created empty: the plan's diff shows only an unknown name,
// and the import found no database of the ID's (none under the name the user's default database
// gives, none renamed to another name Rill's rule gives it), so none of the deployment's tables come.
func rillAdoptionWarning(user, db string, userExists, dbExists bool) string {
	names := "user " + quoteIdent(user) + " and database " + quoteIdent(db)
	if !dbExists {
		names = "user " + quoteIdent(user)
	}
	adopted := "Adopting, under Rill's names, what Rill's admin service made for this resource: " + names + ". "
	if !dbExists {
		what := "its database"
		if db != "" {
			what += " " + quoteIdent(db) + " (the user's default database)"
		}
		adopted += "No database of this resource is on the server, so the apply creates " + what + ", empty: the Rill deployment's " +
			"tables are not in it. If they are in a database under another name, stop: make it the user's DEFAULT DATABASE, " +
			"`terraform state rm` this resource and import it again. "
	}
	if !userExists {
		return adopted + "The user is missing, so the apply creates it (with password_wo's password, else a generated one): the Rill " +
			"deployment that used it has no working password until it is given the new dsn (or, with password_wo, the password in Rill's DSN)."
	}
	return adopted + "ClickHouse keeps only a hash of the user's password, so it cannot be read back: without password_wo, the apply " +
		"sets a new generated password, and the running Rill deployment (its DSN is in Rill's admin database) can no longer log in once " +
		"the apply completes, until it is given the new dsn. To keep Rill's password, and the deployment working, set password_wo to the " +
		"password in Rill's DSN (from an ephemeral variable) and password_wo_version before the apply: the apply then sets that same password."
}

// databasesOf returns the databases named for a resource ID (rill_<id> or rill_<org>_<project>_<id>).
func (p *Provisioner) databasesOf(ctx context.Context, conn session, resourceID string) ([]string, error) {
	id := idPart(resourceID)
	q := "SELECT name FROM system.databases WHERE name = " + quoteString(namePrefix+id) +
		" OR (startsWith(name, " + quoteString(namePrefix) + ") AND endsWith(name, " + quoteString("_"+id) + "))"
	names, err := conn.QueryStrings(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("looking up its database: %s", p.scrub(err.Error()))
	}
	var out []string
	for _, n := range names {
		if ownsDatabaseName(resourceID, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// defaultAwaitTimeout bounds AwaitReady when its context has no deadline. A variable so that a test
// can wait less.
var defaultAwaitTimeout = 5 * time.Minute

// AwaitReady runs SELECT 1 with the resource's DSN until it succeeds or ctx ends (defaultAwaitTimeout
// when ctx has no deadline), backing off between attempts. On ClickHouse clusters, users and grants can
// take a moment to reach every replica, so login failures are retried too.
func (p *Provisioner) AwaitReady(ctx context.Context, r *provisioner.Resource) error {
	if err := checkClickHouseResource(r); err != nil {
		return err
	}
	dsn := resourceDSN(r)
	if dsn == "" {
		return fmt.Errorf("ClickHouse resource %s has no dsn in its config: provision it first", r.ID)
	}
	if err := p.waitForLogin(ctx, r.ID, dsn); err != nil {
		return fmt.Errorf("ClickHouse resource %s is not ready: %w", r.ID, err)
	}
	return nil
}

// waitForLogin runs SELECT 1 with dsn until it succeeds or ctx ends (defaultAwaitTimeout when ctx has
// no deadline), backing off between attempts. Its error gives the last attempt that ended on its own
// (the server's answer, a refused connection), not one that ctx's end cut short: as the backoff
// doubles, an attempt may begin just before the deadline, and "context deadline exceeded" said
// nothing of what the server had answered.
func (p *Provisioner) waitForLogin(ctx context.Context, id, dsn string) error {
	until := waits.Until
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultAwaitTimeout)
		defer cancel()
		// The deadline is this wait's own, not the operation's (which has none): "until the
		// operation's deadline" would send users to a timeout they cannot set.
		until = func(err error) string {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Sprintf("the %s it waits when the operation sets no deadline", defaultAwaitTimeout)
			}
			return waits.Until(err)
		}
	}
	delay, start := 200*time.Millisecond, time.Now()
	var last error // of the last attempt that ended on its own, or of the first if ctx cut it short
	for attempt := 1; ; attempt++ {
		err := p.selectOne(ctx, dsn)
		if err == nil {
			return nil
		}
		cutShort := ctx.Err() != nil && errors.Is(err, ctx.Err())
		if !cutShort || last == nil {
			last = err
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			cause := p.scrub(last.Error(), secretsOfDSN(dsn)...)
			if cutShort && last != err {
				cause = "the last attempt cut short by the wait's end; the one before: " + cause
			}
			return fmt.Errorf("logging in as its user failed %d times in %s, until %s (%v): %s", attempt, waits.Elapsed(start), until(ctx.Err()), ctx.Err(), cause)
		case <-timer.C:
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// selectOne opens a short-lived connection with dsn and runs SELECT 1.
func (p *Provisioner) selectOne(ctx context.Context, dsn string) error {
	conn, err := p.dial(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	rows, err := conn.QueryStrings(ctx, "SELECT 1")
	if err != nil {
		return err
	}
	if len(rows) != 1 || strings.TrimSpace(rows[0]) != "1" {
		return fmt.Errorf("SELECT 1 returned %q", rows)
	}
	return nil
}
