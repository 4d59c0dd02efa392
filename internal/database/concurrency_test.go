package database

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pool10x2 is the capacity used by the concurrency tests: 2 hosts of 10 slots.
var pool10x2 = map[string]int{"host-a": 10, "host-b": 10}

// raceDelay is spent inside each PlaceFunc, to give a broken lock every chance to let two callers in.
const raceDelay = time.Millisecond

func checkLedgerTotals(t *testing.T, db DB, wantRows int) {
	t.Helper()
	ctx := testContext(t)
	used, err := db.UsedSlotsByHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if used["host-a"] != 10 || used["host-b"] != 10 || len(used) != 2 {
		t.Fatalf("ledger totals = %v, want host-a=10 host-b=10", used)
	}
	list, err := db.ListAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != wantRows {
		t.Fatalf("ledger holds %d allocations, want %d", len(list), wantRows)
	}
}

// TestConcurrentAllocateAcrossHandles: 40 goroutines, spread over 4 independent Open handles (as 4
// processes would hold), each allocate 1 slot on a pool of 10+10. Exactly 20 must succeed.
func TestConcurrentAllocateAcrossHandles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := testContext(t)
		var dbs []DB
		for range 4 {
			dbs = append(dbs, mustOpen(t, dsn))
		}
		ids := make([]string, 40)
		for i := range ids {
			ids[i] = fmt.Sprintf("res-%02d", i)
		}
		ok, full, err := allocateMany(ctx, dbs, ids, placer(pool10x2, 1, raceDelay))
		if err != nil {
			t.Fatal(err)
		}
		if ok != 20 || full != 20 {
			t.Fatalf("%d allocations succeeded and %d hit the capacity error; want 20 and 20", ok, full)
		}
		checkLedgerTotals(t, dbs[0], 20)

		// Re-allocating the same resources concurrently is idempotent: they keep their slots.
		ok, full, err = allocateMany(ctx, dbs, ids, placer(pool10x2, 1, 0))
		if err != nil || ok != 20 || full != 20 {
			t.Fatalf("second round: ok=%d full=%d err=%v", ok, full, err)
		}
		checkLedgerTotals(t, dbs[0], 20)
	})
}

// The test binary re-executes itself as a helper process (see TestMain) when helperEnv is set.
const (
	helperEnv       = "RILL_DATABASE_TEST_HELPER"
	helperDSNEnv    = "RILL_DATABASE_TEST_DSN"
	helperPrefixEnv = "RILL_DATABASE_TEST_PREFIX"
	helperCountEnv  = "RILL_DATABASE_TEST_COUNT"
	helperGoEnv     = "RILL_DATABASE_TEST_GO_FILE"
)

// runHelperProcess opens the ledger through two handles, says READY, waits for the go file to
// appear, then runs COUNT concurrent one-slot allocations and prints
// "RESULT <ok> <full> <start unix ns> <end unix ns>". It returns the exit code.
func runHelperProcess() int {
	fail := func(err error) int {
		fmt.Println("ERROR", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n, err := strconv.Atoi(os.Getenv(helperCountEnv))
	if err != nil {
		return fail(err)
	}
	var dbs []DB
	for range 2 {
		db, err := Open(ctx, os.Getenv(helperDSNEnv), nil)
		if err != nil {
			return fail(err)
		}
		defer func() { _ = db.Close() }()
		dbs = append(dbs, db)
	}
	fmt.Println("READY")
	for {
		if _, err := os.Stat(os.Getenv(helperGoEnv)); err == nil {
			break
		}
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%02d", os.Getenv(helperPrefixEnv), i)
	}
	start := time.Now()
	ok, full, err := allocateMany(ctx, dbs, ids, placer(pool10x2, 1, raceDelay))
	if err != nil {
		return fail(err)
	}
	fmt.Println("RESULT", ok, full, start.UnixNano(), time.Now().UnixNano())
	return 0
}

type helperProc struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

func (h *helperProc) line(t *testing.T) string {
	t.Helper()
	s, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper process: %v (read %q)", err, s)
	}
	return strings.TrimSpace(s)
}

// TestSQLiteCrossProcess: 3 OS processes with 10 goroutines each, plus 10 goroutines in this process,
// race for the 20 slots of one SQLite ledger file. Exactly 20 allocations may succeed, in every
// round. A round proves something only when the processes really allocated at the same time; on a
// loaded machine one may not be scheduled before the others are done, so up to 5 rounds run until
// one overlaps.
func TestSQLiteCrossProcess(t *testing.T) {
	const rounds = 5
	for round := 1; round <= rounds; round++ {
		gap := sqliteCrossProcessRound(t)
		if gap < 0 {
			return
		}
		t.Logf("round %d: the processes did not allocate at the same time (latest start %v after earliest end)", round, gap)
	}
	t.Errorf("in none of %d rounds did the processes allocate at the same time: the test proved nothing", rounds)
}

// sqliteCrossProcessRound races once on a fresh ledger and returns how long after the earliest end
// of a process the latest start came (negative: they overlapped).
func sqliteCrossProcessRound(t *testing.T) time.Duration {
	t.Helper()
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "ledger.db")
	goFile := filepath.Join(dir, "go")
	mustOpen(t, dsn) // create the schema up front; helpers then race only on allocations

	var procs []*helperProc
	for p := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			helperEnv+"=1",
			helperDSNEnv+"="+dsn,
			helperPrefixEnv+"=proc"+strconv.Itoa(p),
			helperCountEnv+"=10",
			helperGoEnv+"="+goFile,
		)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		procs = append(procs, &helperProc{cmd: cmd, out: bufio.NewReader(stdout)})
	}
	for _, p := range procs {
		if l := p.line(t); l != "READY" {
			t.Fatalf("helper process said %q", l)
		}
	}

	local := mustOpen(t, dsn)
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("local-%02d", i)
	}
	start := time.Now()
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok, full, err := allocateMany(testContext(t), []DB{local}, ids, placer(pool10x2, 1, raceDelay))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	t.Logf("this process: %d ok, %d full", ok, full)
	// The latest start must precede the earliest end: every process was allocating at the same time.
	latestStart, earliestEnd := start.UnixNano(), end.UnixNano()
	for i, p := range procs {
		l := p.line(t)
		var pok, pfull, pstart, pend int64
		if _, err := fmt.Sscanf(l, "RESULT %d %d %d %d", &pok, &pfull, &pstart, &pend); err != nil {
			t.Fatalf("helper process %d said %q", i, l)
		}
		latestStart, earliestEnd = max(latestStart, pstart), min(earliestEnd, pend)
		t.Logf("process %d: %d ok, %d full, %v after the go signal, for %v",
			i, pok, pfull, time.Unix(0, pstart).Sub(start).Round(time.Microsecond), time.Duration(pend-pstart).Round(time.Microsecond))
		ok += pok
		full += pfull
		_, _ = io.Copy(io.Discard, p.out)
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("helper process %d: %v", i, err)
		}
	}
	if ok != 20 || full != 20 {
		t.Fatalf("%d allocations succeeded and %d hit the capacity error across processes; want 20 and 20", ok, full)
	}
	checkLedgerTotals(t, local, 20)
	return time.Duration(latestStart - earliestEnd)
}
