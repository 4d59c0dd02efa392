// Package rillmigrate is the one-time migration from Rill's admin service: the
// `terraform-provider-rill migrate-rill-static` command copies the static runtime assignments Rill's
// admin keeps in its PostgreSQL database (table static_runtime_assignments) into this provider's
// ledger, so that the runtimes can be imported into Terraform and no host is double-booked. See
// docs/guides/migrating-from-rill-admin.md.
package rillmigrate

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/static"
)

// Command is the name of the subcommand of the provider binary.
const Command = "migrate-rill-static"

// ReadStaticAssignments reads every row with slots of Rill's static_runtime_assignments table, in
// one snapshot.
func ReadStaticAssignments(ctx context.Context, rillDSN string) ([]static.Assignment, error) {
	conn, err := pgx.Connect(ctx, rillDSN)
	if err != nil {
		return nil, fmt.Errorf("connecting to Rill's admin database %s: %w", database.Redact(rillDSN), err)
	}
	defer func() { _ = conn.Close(ctx) }()
	rows, err := conn.Query(ctx, `SELECT resource_id::text, host, slots FROM static_runtime_assignments WHERE slots > 0 ORDER BY host, resource_id`)
	if err != nil {
		return nil, fmt.Errorf("reading static_runtime_assignments from Rill's admin database: %w", err)
	}
	defer rows.Close()
	var out []static.Assignment
	for rows.Next() {
		var a static.Assignment
		if err := rows.Scan(&a.ResourceID, &a.Host, &a.Slots); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Options are the command's inputs.
type Options struct {
	RillDSN     string // Rill's admin database
	SetJSON     string // the provider's provisioner set
	Provisioner string // the name of the static pool in the set that takes the assignments
	LedgerDSN   string // the provider's ledger ("" = the default SQLite ledger)
}

// Report is what Migrate did: the named pool's import, and the rows it left to another static pool.
type Report struct {
	// Ledger is the ledger written, its DSN with passwords masked: the command names it, since a
	// provider block's ledger_dsn (say from TF_VAR_ledger_dsn) is no default of the command's, which
	// then writes the default SQLite ledger instead of the one Terraform reads.
	Ledger string
	static.ImportReport
	OtherPool []OtherPoolAssignment // rows on a host of another static pool of the set, not imported
}

// OtherPoolAssignment is a row of Rill's table on a host of another static pool of the set (not of
// the named one): that pool's own run of the command imports it.
type OtherPoolAssignment struct {
	static.Assignment
	Pool string
}

// Migrate copies Rill's assignments into the ledger through the named static pool (see
// static.Provisioner.Import). Only that pool is built: the other provisioners of a set pasted from
// Rill's admin service (a kubernetes one whose kubeconfig and templates live on Rill's machines, say)
// need not work where the command runs. The set and the pool are checked before anything is read or
// the ledger is created.
//
// Rill's static_runtime_assignments has no pool column: every static pool of Rill's set writes its
// rows there, keyed by host. A row whose host is not the named pool's but another static pool's of
// the same set is that pool's: it is skipped and listed in the report's OtherPool, not an error, so
// that migrating one pool of several succeeds. A row on a host of no static pool of the set is still
// refused by the import (an error).
func Migrate(ctx context.Context, o Options, logger *zap.Logger) (*Report, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	poolJSON, others, unread, err := poolSet(o.SetJSON, o.Provisioner)
	if err != nil {
		return nil, err
	}
	dsn := o.LedgerDSN
	if dsn == "" {
		if dsn, err = database.DefaultDSN(); err != nil {
			return nil, err
		}
	}
	rows, err := ReadStaticAssignments(ctx, o.RillDSN)
	if err != nil {
		return nil, err
	}
	ledger, err := database.Open(ctx, dsn, logger)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ledger.Close() }()
	set, err := provisioner.NewSet(poolJSON, ledger, logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range set {
			_ = p.Close()
		}
	}()
	pool, ok := set[o.Provisioner].(*static.Provisioner)
	if !ok { // poolSet checked the type; a static initializer that returns something else is a bug
		return nil, fmt.Errorf("provisioner %q is not a static pool", o.Provisioner)
	}
	report := &Report{Ledger: database.Redact(dsn)}
	var mine []static.Assignment
	for _, a := range rows {
		if other := otherPoolOf(a.Host, pool, others); other != "" {
			report.OtherPool = append(report.OtherPool, OtherPoolAssignment{Assignment: a, Pool: other})
			continue
		}
		mine = append(mine, a)
	}
	imported, err := pool.Import(ctx, mine)
	if imported != nil {
		report.ImportReport = *imported
	}
	if errors.Is(err, static.ErrHostNotInSpec) && len(unread) > 0 {
		// A refused row may be on a host of a pool whose spec did not read: say so, or the refusal
		// reads as if the host were in no pool of the set.
		var why []string
		for _, name := range slices.Sorted(maps.Keys(unread)) {
			why = append(why, fmt.Sprintf("static pool %q of the set was left out of the host check, its spec does not read (%v)", name, unread[name]))
		}
		err = fmt.Errorf("%w\n%s; a row on one of its hosts is refused until its spec is fixed", err, strings.Join(why, ";\n"))
	}
	return report, err
}

// otherPoolOf returns the name of the first pool of others (in name order) that has host, when pool
// does not have it; else "".
func otherPoolOf(host string, pool *static.Provisioner, others map[string]*static.Spec) string {
	if pool.HasHost(host) {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(others)) {
		if others[name].HasHost(host) {
			return name
		}
	}
	return ""
}

// poolSet returns the set setJSON reduced to its static pool called name, as JSON, the specs of the
// set's other static pools by name, and the errors of the other static pools whose spec does not
// parse, by name. Such a pool is left out: its rows are then refused as on no pool's host, the safe
// side, and Migrate says why.
func poolSet(setJSON, name string) (string, map[string]*static.Spec, map[string]error, error) {
	specs, err := provisioner.ParseSet(setJSON)
	if err != nil {
		return "", nil, nil, err
	}
	ps, ok := specs[name]
	if !ok {
		have := "none"
		if len(specs) > 0 {
			have = strings.Join(slices.Sorted(maps.Keys(specs)), ", ")
		}
		return "", nil, nil, fmt.Errorf("the provisioner set has no provisioner named %q; it has %s", name, have)
	}
	if ps.Type != static.Type {
		return "", nil, nil, fmt.Errorf("provisioner %q is of type %q; Rill's static assignments go to a static pool", name, ps.Type)
	}
	others, unread := map[string]*static.Spec{}, map[string]error{}
	for other, s := range specs {
		if other == name || s.Type != static.Type {
			continue
		}
		spec, err := static.ParseSpec(s.Spec)
		if err != nil {
			unread[other] = err
			continue
		}
		others[other] = spec
	}
	one, err := json.Marshal(map[string]provisioner.ProvisionerSpec{name: ps})
	return string(one), others, unread, err
}

// say writes one line of the command's output; a closed terminal is not worth an error.
func say(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

// Main runs the command with the arguments after its name and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.RillDSN, "rill-dsn", "", "PostgreSQL DSN of Rill's admin database (required)")
	fs.StringVar(&o.Provisioner, "provisioner", "", "name of the static pool in the provisioner set (required)")
	// The environment's values are taken after Parse, not as the flags' defaults: the usage (-h, a
	// mistyped or missing flag) prints the defaults, and the set and the DSN may hold passwords.
	fs.StringVar(&o.SetJSON, "set-json", "", "the provider's provisioner set JSON (default $"+envnames.ProvisionerSet+")")
	fs.StringVar(&o.LedgerDSN, "ledger-dsn", "", "the provider's ledger DSN (default $"+envnames.LedgerDSN+", else the default SQLite ledger)")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on the whole migration")
	fs.Usage = func() {
		say(stderr, "Usage: terraform-provider-rill %s -rill-dsn <dsn> -provisioner <name> [-set-json <json>] [-ledger-dsn <dsn>]\n\n"+
			"Copies Rill's static_runtime_assignments into the ledger of the named static pool. Stop Rill's admin\n"+
			"service from provisioning on the pool first. Safe to run again: it records only what is new, and not\n"+
			"again what it recorded before and Terraform has freed since (the ledger remembers what it recorded).\n\n"+
			"A flag's value is visible to every user of the machine (ps, /proc/<pid>/cmdline), and the set (a\n"+
			"clickhouse-static dsn) and the DSNs may hold passwords: leave -set-json and -ledger-dsn out, to take\n"+
			"$%s and $%s, and give Rill's database password in PGPASSWORD\n"+
			"or ~/.pgpass, not in -rill-dsn.\n\n", Command, envnames.ProvisionerSet, envnames.LedgerDSN)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.SetJSON == "" {
		o.SetJSON = os.Getenv(envnames.ProvisionerSet)
	}
	if o.LedgerDSN == "" {
		o.LedgerDSN = os.Getenv(envnames.LedgerDSN)
	}
	var missing []string
	for name, v := range map[string]string{"-rill-dsn": o.RillDSN, "-provisioner": o.Provisioner, "-set-json": o.SetJSON} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		say(stderr, "%s: missing %v\n", Command, missing)
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	report, err := Migrate(ctx, o, nil)
	if report != nil {
		say(stdout, "ledger %s\n", report.Ledger)
		for _, a := range report.Imported {
			say(stdout, "imported %s: %d slot(s) on %s\n", a.ResourceID, a.Slots, a.Host)
		}
		for _, a := range report.Present {
			say(stdout, "already in the ledger %s: %d slot(s) on %s\n", a.ResourceID, a.Slots, a.Host)
		}
		for _, a := range report.Released {
			say(stdout, "not recorded again %s: %d slot(s) on %s, recorded by an earlier run and freed since (a terraform destroy)\n",
				a.ResourceID, a.Slots, a.Host)
		}
		for _, a := range report.OtherPool {
			say(stdout, "skipped %s: %d slot(s) on %s, a host of static pool %q (run the command with -provisioner %s for it)\n",
				a.ResourceID, a.Slots, a.Host, a.Pool, a.Pool)
		}
	}
	if err != nil {
		say(stderr, "%s: %v\n", Command, err)
		if errors.Is(err, context.DeadlineExceeded) {
			say(stderr, "%s: gave up after -timeout %s\n", Command, *timeout)
		}
		return 1
	}
	return 0
}
