//go:build unix

package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// helperEnv makes the test binary act as a process that starts a cluster and dies without cleanup.
const helperEnv = "PGTEST_CRASH_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		crashHelper()
		return
	}
	Main(m)
}

// crashHelper starts a cluster, reports its postmaster PID and directory, and exits abruptly.
func crashHelper() {
	c, err := StartCluster(context.Background())
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(3)
	}
	fmt.Printf("PID %d %s\n", c.server.Pid(), c.dir)
	os.Exit(0) // no Stop: the parent-death signal must take the server down
}

func query(t *testing.T, dsn, q string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var s string
	if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSharedGivesFreshDatabases(t *testing.T) {
	a, b := Shared(t), Shared(t)
	dbA, dbB := query(t, a, "SELECT current_database()"), query(t, b, "SELECT current_database()")
	if dbA == dbB {
		t.Fatalf("both calls returned database %s", dbA)
	}
	if !strings.HasPrefix(dbA, "t_testsharedgivesfreshdatabases_") {
		t.Errorf("database name %q not derived from the test name", dbA)
	}
	if n := query(t, a, "SELECT count(*)::text FROM pg_tables WHERE schemaname = 'public'"); n != "0" {
		t.Errorf("fresh database has %s tables", n)
	}
	t.Logf("server: %s", query(t, a, "SELECT version()"))
}

// waitGone fails the test unless every process of pids is gone (or a zombie) within one bound.
func waitGone(t *testing.T, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, pid := range pids {
		if !proc.GoneWithin(pid, time.Until(deadline)) {
			t.Fatalf("process %d still running", pid)
		}
	}
}

func TestStartClusterStopLeavesNothing(t *testing.T) {
	if os.Getenv(EnvDSN) != "" {
		t.Skip("external server in use")
	}
	start := time.Now()
	c, err := StartCluster(context.Background())
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("cluster started in %v", time.Since(start).Round(time.Millisecond))
	dsn, _, err := c.CreateDatabase(context.Background(), "stop")
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, dsn, "SELECT current_user"); got != "postgres" {
		t.Errorf("current_user = %q", got)
	}
	pid := c.server.Pid()
	procs := []int{pid}
	for _, c := range proc.Children(pid) {
		procs = append(procs, c.PID)
	}
	if len(procs) < 2 {
		t.Errorf("expected the postmaster to have children, found %v", procs)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, procs, 5*time.Second)
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists (%v)", c.dir, err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartPerTest(t *testing.T) {
	dsn := Start(t)
	if got := query(t, dsn, "SELECT 'ok'"); got != "ok" {
		t.Fatal(got)
	}
}

// TestServerDiesWithTestBinary proves a test binary that dies without cleaning up (a timeout, a
// crash, os.Exit) leaves no server running.
func TestServerDiesWithTestBinary(t *testing.T) {
	if os.Getenv(EnvDSN) != "" {
		t.Skip("external server in use")
	}
	if _, err := findBinDir(); err != nil {
		unavailable(t, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Wait()
	var pid int
	var dir string
	if _, err := fmt.Sscanf(line, "PID %d %s", &pid, &dir); err != nil {
		t.Fatalf("helper said %q", line)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	waitGone(t, []int{pid}, 10*time.Second)
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5/old?sslmode=disable": "postgres://u:p@h:5/newdb?sslmode=disable",
		"postgresql://h":                         "postgresql://h/newdb",
		"host=h dbname=old user=u":               "host=h dbname=newdb user=u",
		"host=h user=u":                          "host=h user=u dbname=newdb",
	} {
		got, err := withDatabase(in, "newdb")
		if err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSweepStale(t *testing.T) {
	// A directory owned by a process that has exited, and one owned by us.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead, err := makeDir("pgtest-sweeptest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, ownerFile), []byte(strconv.Itoa(cmd.Process.Pid)+" 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := makeDir("pgtest-sweeptest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(live); _ = os.RemoveAll(dead) })
	sweepStale()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("directory of a dead process survived the sweep: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("directory of this process was swept: %v", err)
	}
}
