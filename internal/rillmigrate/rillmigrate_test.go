package rillmigrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/envnames"
	_ "github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes" // registers the type of the kubernetes entry of Rill's set, as the provider binary does
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/static"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/fakerilladmin"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	r1 = "11111111-1111-4111-8111-111111111111"
	r2 = "22222222-2222-4222-8222-222222222222"
	r3 = "33333333-3333-4333-8333-333333333333"
	r4 = "44444444-4444-4444-8444-444444444444"
	tf = "tf000000-0000-4000-8000-000000000000"
)

// pool: host a has 4 slots, host b 6.
const setJSON = `{"pool": {"type": "static", "spec": {"runtimes": [
	{"host": "http://a.test:9091", "slots": 4}, {"host": "http://b.test:9091", "slots": 6}]}}}`

// Rill's static_runtime_assignments rows, read from a real PostgreSQL database, land in the ledger
// (a PostgreSQL one here) through the static pool: hosts normalized as the spec's are, none
// double-booked (a row that would overfill its host, or names a host outside the spec, is reported
// and left out), a second run records nothing twice, and placements after it go around the imported
// runtimes.
func TestMigrateStaticAssignmentsFromRillAdmin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rillDSN, ledgerDSN := pgtest.Shared(t), pgtest.Shared(t)
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{
		{ResourceID: r1, Host: "http://a.test:9091", Slots: 2},
		{ResourceID: r2, Host: "http://a.test:9091/", Slots: 1}, // Rill kept the spec's trailing slash
		{ResourceID: r3, Host: "http://b.test:9091", Slots: 3},  // b already has 4 of 6 in use here
		{ResourceID: r4, Host: "http://gone.test:9091", Slots: 1},
	}); err != nil {
		t.Fatal(err)
	}
	// A runtime Terraform already placed on b.
	ledger, err := database.Open(ctx, ledgerDSN, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ledger.Close() }()
	if _, err := ledger.Allocate(ctx, tf, func(*database.Allocation, map[string]int) (*database.Allocation, error) {
		return &database.Allocation{ResourceID: tf, Provisioner: "pool", Host: "http://b.test:9091", Slots: 4}, nil
	}); err != nil {
		t.Fatal(err)
	}

	report, err := Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: setJSON, Provisioner: "pool", LedgerDSN: ledgerDSN}, nil)
	if err == nil || !strings.Contains(err.Error(), "2 of 4 assignments not imported") ||
		!strings.Contains(err.Error(), "runtime "+r3+": host http://b.test:9091 has 4 of 6 slots in use, 3 more would double-book it") ||
		!strings.Contains(err.Error(), "runtime "+r4+": host http://gone.test:9091 is not in the static pool's spec") {
		t.Fatalf("error %v: want r3 (double-booking) and r4 (unknown host) reported", err)
	}
	if got := ids(report.Imported); got != r1+","+r2 {
		t.Fatalf("imported %s", got)
	}
	want := map[string]string{r1: "http://a.test:9091 2", r2: "http://a.test:9091 1", tf: "http://b.test:9091 4"}
	if got := ledgerContents(t, ledger); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger %v, want %v", got, want)
	}

	// Again, through the command: nothing new; r3 and r4 are still refused.
	var out, errOut bytes.Buffer
	code := Main([]string{"-rill-dsn", rillDSN, "-provisioner", "pool", "-set-json", setJSON, "-ledger-dsn", ledgerDSN}, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "already in the ledger "+r1) || strings.Contains(out.String(), "imported ") {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if got := ledgerContents(t, ledger); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger after the second run %v, want %v", got, want)
	}

	// New runtimes are placed around the imported ones: a has 1 free slot, b 2.
	set, err := provisioner.NewSet(setJSON, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := set["pool"]
	placed, err := p.Provision(ctx, &provisioner.Resource{ID: "new-2", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 2}).AsMap()})
	if err != nil || placed.Config["host"] != "http://b.test:9091" {
		t.Fatalf("2 slots placed %v, %v: want host b, the only one with room", placed, err)
	}
	_, err = p.Provision(ctx, &provisioner.Resource{ID: "new-3", Type: provisioner.ResourceTypeRuntime},
		&provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 2}).AsMap()})
	if !errors.Is(err, static.ErrInsufficientCapacity) {
		t.Fatalf("2 more slots: %v, want no room (a has 1 free, b none)", err)
	}

	// Terraform destroys r1; a third run does not record it again, though Rill's table still lists it.
	if _, err := ledger.DeleteAllocation(ctx, r1); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code = Main([]string{"-rill-dsn", rillDSN, "-provisioner", "pool", "-set-json", setJSON, "-ledger-dsn", ledgerDSN}, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "not recorded again "+r1+": 2 slot(s) on http://a.test:9091, recorded by an earlier run and freed since") {
		t.Fatalf("run after a destroy: exit %d, stdout %q", code, out.String())
	}
	delete(want, r1)
	want["new-2"] = "http://b.test:9091 2" // placed above
	if got := ledgerContents(t, ledger); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger after the run that followed a destroy %v, want %v", got, want)
	}
}

func TestMainRefusesMissingFlags(t *testing.T) {
	t.Setenv(envnames.ProvisionerSet, "")
	var out, errOut bytes.Buffer
	if code := Main([]string{"-provisioner", "pool"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "-rill-dsn") || !strings.Contains(errOut.String(), "-set-json") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// The usage, printed for -h and for a mistyped or missing flag, shows no value of the environment
// variables the command falls back to: the set and the ledger DSN may hold passwords, and the usage
// goes to a terminal or a CI log. Before, they were the flags' defaults, printed in full.
func TestUsageShowsNoValueFromTheEnvironment(t *testing.T) {
	t.Setenv(envnames.ProvisionerSet, `{"ch": {"type": "clickhouse-static", "spec": {"dsn": "clickhouse://admin:set-secret@ch:9000"}}}`)
	t.Setenv(envnames.LedgerDSN, "postgres://ledger:dsn-secret@db/ledger")
	for _, args := range [][]string{{"-h"}, {"-no-such-flag"}, {"-rill-dsn", "postgres://rill@db/rill"}} {
		var out, errOut bytes.Buffer
		if code := Main(args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "Usage:") {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		if s := out.String() + errOut.String(); strings.Contains(s, "set-secret") || strings.Contains(s, "dsn-secret") {
			t.Errorf("%v: the usage shows a value from the environment:\n%s", args, s)
		}
	}
}

// Without -set-json the command takes the set from the environment, after parsing the flags (so
// that the usage does not print it): the error names the provisioners of the environment's set.
func TestMainTakesTheSetFromTheEnvironmentWithoutTheFlag(t *testing.T) {
	t.Setenv(envnames.ProvisionerSet, `{"from-env": {"type": "static", "spec": {"runtimes": []}}}`)
	var out, errOut bytes.Buffer
	code := Main([]string{"-rill-dsn", "postgres://rill@127.0.0.1:1/rill", "-provisioner", "pool"}, &out, &errOut)
	if want := `the provisioner set has no provisioner named "pool"; it has from-env`; code != 1 || !strings.Contains(errOut.String(), want) {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
}

func ids(as []static.Assignment) string {
	var out []string
	for _, a := range as {
		out = append(out, a.ResourceID)
	}
	return strings.Join(out, ",")
}

func ledgerContents(t *testing.T, db database.DB) map[string]string {
	t.Helper()
	list, err := db.ListAllocations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range list {
		out[a.ResourceID] = fmt.Sprintf("%s %d", a.Host, a.Slots)
	}
	return out
}

// A set pasted from Rill's admin service carries provisioners the migration does not need, such as a
// kubernetes one whose templates and kubeconfig exist only on Rill's machines: only the named pool is
// built, so they do not stop it. A pool name the set lacks, or one that is not static, is refused
// before Rill's database is read or the ledger is created.
func TestMigrateBuildsOnlyTheNamedPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rillSet := `{
	  "pool": {"type": "static", "spec": {"runtimes": [{"host": "http://a.test:9091", "slots": 4}]}},
	  "kubernetes-example": {"type": "kubernetes", "spec": {
	    "kubeconfig_path": "kubeconfig.yaml", // Rill's README example: files on Rill's machines
	    "template_paths": {"service": "templates/service.yaml"}
	  }}
	}`
	if _, err := provisioner.NewSet(rillSet, nil, nil); err == nil || !strings.Contains(err.Error(), "kubernetes-example") {
		t.Fatalf("building the whole set: %v, want the kubernetes provisioner's missing files", err)
	}

	ledgerPath := t.TempDir() + "/ledger.db"
	for _, tc := range []struct{ provisioner, want string }{
		{"pol", `no provisioner named "pol"; it has kubernetes-example, pool`},
		{"kubernetes-example", `provisioner "kubernetes-example" is of type "kubernetes"; Rill's static assignments go to a static pool`},
	} {
		_, err := Migrate(ctx, Options{RillDSN: "postgres://nobody@127.0.0.1:1/rill", SetJSON: rillSet, Provisioner: tc.provisioner, LedgerDSN: "sqlite://" + ledgerPath}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("-provisioner %s: %v, want %q", tc.provisioner, err, tc.want)
		}
		if _, statErr := os.Stat(ledgerPath); !errors.Is(statErr, os.ErrNotExist) {
			t.Fatalf("-provisioner %s created the ledger (%v)", tc.provisioner, statErr)
		}
	}

	rillDSN := pgtest.Shared(t)
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{{ResourceID: r1, Host: "http://a.test:9091", Slots: 2}}); err != nil {
		t.Fatal(err)
	}
	report, err := Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: rillSet, Provisioner: "pool", LedgerDSN: "sqlite://" + ledgerPath}, nil)
	if err != nil || ids(report.Imported) != r1 {
		t.Fatalf("migrating with Rill's whole set: %v, %+v", err, report)
	}
}

// An empty set names no provisioner the error could list: it says so rather than "it has " and
// nothing.
func TestMigrateFromAnEmptySetSaysItHasNone(t *testing.T) {
	_, err := Migrate(context.Background(), Options{RillDSN: "postgres://nobody@127.0.0.1:1/rill", SetJSON: `{}`, Provisioner: "pool",
		LedgerDSN: "sqlite://" + t.TempDir() + "/ledger.db"}, nil)
	if want := `the provisioner set has no provisioner named "pool"; it has none`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Migrate with an empty set: %v, want %q", err, want)
	}
}

// Rill's static_runtime_assignments has no pool column: every static pool of Rill's set writes its
// rows there, keyed by host. Migrating one pool of several skips the rows on another static pool's
// hosts (reported as that pool's, left for its own run) and exits 0; a row whose host is in no static
// pool of the set is still refused, exit 1. Before, every other pool's row was an error, so a
// migration of one pool among several always exited 1.
func TestMigrateOnePoolOfSeveralSkipsTheOtherPoolsRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rillSet := `{
	  "pool": {"type": "static", "spec": {"runtimes": [{"host": "http://a.test:9091", "slots": 4}]}},
	  "other": {"type": "static", "spec": {"runtimes": [{"host": "http://c.test:9091", "slots": 4}]}},
	  "k8s": {"type": "kubernetes", "spec": {"template_paths": {"service": "templates/service.yaml"}}}
	}`
	rillDSN, ledgerDSN := pgtest.Shared(t), "sqlite://"+t.TempDir()+"/ledger.db"
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{
		{ResourceID: r1, Host: "http://a.test:9091", Slots: 1},
		{ResourceID: r2, Host: "HTTP://C.test:9091/", Slots: 2}, // other's host, in another spelling
	}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"-rill-dsn", rillDSN, "-provisioner", "pool", "-set-json", rillSet, "-ledger-dsn", ledgerDSN}, &out, &errOut)
	if want := "skipped " + r2 + `: 2 slot(s) on HTTP://C.test:9091/, a host of static pool "other"`; code != 0 || !strings.Contains(out.String(), "imported "+r1) ||
		!strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, r1 imported and %q", code, out.String(), errOut.String(), want)
	}

	// The other pool's own run imports its row and skips pool's (already in the ledger or not).
	out.Reset()
	errOut.Reset()
	code = Main([]string{"-rill-dsn", rillDSN, "-provisioner", "other", "-set-json", rillSet, "-ledger-dsn", ledgerDSN}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "imported "+r2+": 2 slot(s) on http://c.test:9091") ||
		!strings.Contains(out.String(), "skipped "+r1) {
		t.Fatalf("other's run: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}

	// A row on a host of no static pool of the set is still an error.
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{{ResourceID: r3, Host: "http://gone.test:9091", Slots: 1}}); err != nil {
		t.Fatal(err)
	}
	report, err := Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: rillSet, Provisioner: "pool", LedgerDSN: ledgerDSN}, nil)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 assignments not imported") ||
		!strings.Contains(err.Error(), "runtime "+r3+": host http://gone.test:9091 is not in the static pool's spec") {
		t.Fatalf("error %v: want only r3 refused (r2 is other's)", err)
	}
	if report == nil || len(report.OtherPool) != 1 || report.OtherPool[0].ResourceID != r2 || report.OtherPool[0].Pool != "other" {
		t.Fatalf("report %+v: want r2 skipped as other's", report)
	}
}

// The usage warns that a flag's value is visible to every user of the machine (ps,
// /proc/<pid>/cmdline) and says where the secrets go instead: the set and the ledger DSN in their
// environment variables, Rill's database password in PGPASSWORD or a password file.
func TestUsageSaysWhereThePasswordsGo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"-h"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"/proc/<pid>/cmdline", "$" + envnames.ProvisionerSet, "$" + envnames.LedgerDSN, "PGPASSWORD", "~/.pgpass"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the usage does not say %q:\n%s", want, errOut.String())
		}
	}
}

// A static pool of the set whose spec does not read has no hosts the command can know, so a row on
// one of them is refused as on no pool's host (the safe side); the error says which pool was left
// out and why, so that the refusal is not a mystery. Before, it said only that the host is not in
// the named pool's spec.
func TestMigrateSaysWhichOtherPoolsSpecDidNotRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rillSet := `{
	  "pool": {"type": "static", "spec": {"runtimes": [{"host": "http://a.test:9091", "slots": 4}]}},
	  "other": {"type": "static", "spec": {"runtimes": [{"host": "http://c.test:9091", "slots": -1}]}}
	}`
	rillDSN, ledgerDSN := pgtest.Shared(t), "sqlite://"+t.TempDir()+"/ledger.db"
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{
		{ResourceID: r1, Host: "http://a.test:9091", Slots: 1},
		{ResourceID: r2, Host: "http://c.test:9091", Slots: 2},
	}); err != nil {
		t.Fatal(err)
	}
	_, err := Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: rillSet, Provisioner: "pool", LedgerDSN: ledgerDSN}, nil)
	if err == nil || !strings.Contains(err.Error(), "runtime "+r2+": host http://c.test:9091 is not in the static pool's spec") ||
		!strings.Contains(err.Error(), `static pool "other" of the set was left out`) || !strings.Contains(err.Error(), "runtimes[0].slots: must be between") {
		t.Fatalf("error %v: want r2 refused, saying that pool other's spec (runtimes[0].slots) did not read", err)
	}
	// A set whose other pools all read says nothing of the kind.
	_, err = Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: setJSON, Provisioner: "pool", LedgerDSN: ledgerDSN}, nil)
	if err == nil || strings.Contains(err.Error(), "left out") {
		t.Fatalf("error %v: want r2 refused with no word of a pool left out", err)
	}
	// Nor does an error that no host caused (a row that would double-book the pool's own host).
	rillDSN = pgtest.Shared(t)
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{
		{ResourceID: r3, Host: "http://a.test:9091", Slots: 3},
		{ResourceID: r4, Host: "http://a.test:9091", Slots: 3},
	}); err != nil {
		t.Fatal(err)
	}
	_, err = Migrate(ctx, Options{RillDSN: rillDSN, SetJSON: rillSet, Provisioner: "pool", LedgerDSN: "sqlite://" + t.TempDir() + "/ledger.db"}, nil)
	if err == nil || !strings.Contains(err.Error(), "would double-book it") || strings.Contains(err.Error(), "left out") {
		t.Fatalf("error %v: want r4 refused for the room on its host, with no word of a pool left out", err)
	}
}

// The command names the ledger it writes, passwords masked: without -ledger-dsn and RILL_LEDGER_DSN
// it is the default SQLite ledger, not the one a provider block's ledger_dsn (TF_VAR_ledger_dsn, say)
// gives Terraform, which the command does not read; before, nothing said where the rows went, and the
// import then found no allocation.
func TestMainNamesTheLedgerItWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rillDSN := pgtest.Shared(t)
	if err := fakerilladmin.CreateStaticAssignments(ctx, rillDSN, []fakerilladmin.StaticAssignment{{ResourceID: r1, Host: "http://a.test:9091", Slots: 1}}); err != nil {
		t.Fatal(err)
	}
	dataHome := t.TempDir()
	t.Setenv(database.DefaultSQLitePathEnv, dataHome)
	t.Setenv(envnames.LedgerDSN, "")
	var out, errOut bytes.Buffer
	code := Main([]string{"-rill-dsn", rillDSN, "-provisioner", "pool", "-set-json", setJSON}, &out, &errOut)
	want := "ledger sqlite://" + dataHome + "/" + database.DefaultDataDirName + "/" + database.DefaultSQLiteFileName + "\nimported " + r1
	if code != 0 || !strings.HasPrefix(out.String(), want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and stdout starting %q", code, out.String(), errOut.String(), want)
	}

	ledgerDSN := pgtest.Shared(t)
	withPassword := strings.Replace(ledgerDSN, "://postgres@", "://postgres:Ledger-S3cret@", 1)
	if withPassword == ledgerDSN {
		t.Fatalf("no user postgres in %s", ledgerDSN)
	}
	out.Reset()
	code = Main([]string{"-rill-dsn", rillDSN, "-provisioner", "pool", "-set-json", setJSON, "-ledger-dsn", withPassword}, &out, &errOut)
	if want := "ledger " + database.Redact(withPassword) + "\nimported " + r1; code != 0 || !strings.HasPrefix(out.String(), want) || strings.Contains(out.String(), "S3cret") {
		t.Fatalf("exit %d, stdout %q; want 0 and stdout starting %q, no password", code, out.String(), want)
	}
}
