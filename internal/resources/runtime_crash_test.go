package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// The crash stories of named runtimes: an apply of 100 named runtimes on a pool of exactly 100 slots
// is killed (kill -9) at random points, then one plain `terraform apply` converges to state == ledger
// == 100. A leaked allocation would leave the pool one slot short, so the last apply would fail.
const (
	crashRuntimes = 100
	crashHosts    = 2 // of crashRuntimes/crashHosts slots each: the pool is exactly full at the end
)

func TestAccRuntime_killedTerraformConvergesSQLite(t *testing.T) {
	acctest.RequireAcc(t)
	runKilledApplies(t, acctest.SQLiteLedger(t), killTerraform, 5)
}

func TestAccRuntime_killedProviderConvergesSQLite(t *testing.T) {
	acctest.RequireAcc(t)
	runKilledApplies(t, acctest.SQLiteLedger(t), killProvider, 5)
}

// PostgreSQL: 3 kill points each, to keep the CI time reasonable (SQLite has 5).
func TestAccRuntime_killedTerraformConvergesPostgres(t *testing.T) {
	acctest.RequireAcc(t)
	runKilledApplies(t, pgtest.Shared(t), killTerraform, 3)
}

func TestAccRuntime_killedProviderConvergesPostgres(t *testing.T) {
	acctest.RequireAcc(t)
	runKilledApplies(t, pgtest.Shared(t), killProvider, 3)
}

type victim int

const (
	killTerraform victim = iota
	killProvider
	interruptTerraform // a single Ctrl-C (SIGINT)
)

func (v victim) String() string {
	return [...]string{"terraform (SIGKILL)", "the provider (SIGKILL)", "terraform (one SIGINT)"}[v]
}

// A single Ctrl-C during an apply of 100 unnamed runtimes: terraform stops, and what it leaves in
// state is exactly what the ledger holds, nothing tainted; the next apply completes.
func TestAccRuntime_interruptedApplyLeavesStateEqualToLedger(t *testing.T) {
	acctest.RequireAcc(t)
	if runtime.GOOS != "linux" {
		t.Skip("signals")
	}
	ledger := acctest.SQLiteLedger(t)
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", strings.Replace(crashConfig(ledger), "  name  = format(\"rt-%03d\", count.index)\n", "", 1))
	t.Cleanup(func() {
		if out, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
	})
	k := killApply(t, w, ledger, interruptTerraform, crashRuntimes/3, 5*time.Second)
	t.Logf("%s", k)
	if !k.killed {
		t.Fatalf("the Ctrl-C did not interrupt the apply (%s): this run proves nothing", k.where)
	}
	allocs, err := acctest.LedgerAllocations(ledger)
	if err != nil {
		t.Fatal(err)
	}
	w.CheckStateEqualsLedger(ledger, len(allocs))
	checkNothingTainted(t, w)
	w.Must("apply", "-auto-approve")
	w.CheckStateEqualsLedger(ledger, crashRuntimes)
}

// An in-place update (slots 1 -> 2 of 40 named runtimes, on a pool of exactly 80 slots) is
// interrupted once a quarter of the runtimes are resized in the ledger: by a single Ctrl-C (terraform
// saves a state equal to the ledger), and by kill -9 of terraform (the state may be lost whole; the
// names bring the runtimes back). A resize can reach the ledger and not the state; the refresh of the
// next apply reads the ledger's slots, so one plain apply converges: every runtime at 2 slots in state
// and ledger, nothing tainted, an empty plan after. A slot leaked by the interruption would leave the
// pool short, and that apply would fail.
func TestAccRuntime_interruptedUpdateConverges(t *testing.T) {
	acctest.RequireAcc(t)
	if runtime.GOOS != "linux" {
		t.Skip("signals")
	}
	for _, who := range []victim{interruptTerraform, killTerraform} {
		t.Run(who.String(), func(t *testing.T) {
			ledger := acctest.SQLiteLedger(t)
			w := acctest.NewWorkspace(t)
			w.Write("main.tf", resizeConfig(ledger, 1))
			t.Cleanup(func() {
				if out, err := w.Run("destroy", "-auto-approve"); err != nil {
					t.Errorf("destroy: %v\n%s", err, out)
				}
			})
			w.Must("apply", "-auto-approve")
			w.Write("main.tf", resizeConfig(ledger, 2))
			k := killApplyWhen(t, w, ledger, who, func(allocs map[string]*database.Allocation) bool {
				return allocationsWithSlots(allocs, 2) >= resizeRuntimes/4
			}, 2*time.Minute)
			recoverUnreadableState(t, w)
			allocs, err := acctest.LedgerAllocations(ledger)
			if err != nil {
				t.Fatal(err)
			}
			inState := 0
			for _, slots := range w.RuntimeAttributeInState("slots") {
				if slots == float64(2) {
					inState++
				}
			}
			t.Logf("%s; resized: %d in the ledger, %d in the state", k, allocationsWithSlots(allocs, 2), inState)
			if !k.killed || inState == resizeRuntimes {
				t.Fatalf("the interruption came after the update had completed: nothing left to recover, so this run proves nothing")
			}
			if who == interruptTerraform {
				// Terraform saves the state when it stops. (Killed, it may leave none at all: the local
				// backend truncates the file before it writes it. The names bring the runtimes back.)
				w.CheckStateEqualsLedger(ledger, resizeRuntimes)
				checkNothingTainted(t, w)
			}

			w.Must("apply", "-auto-approve")
			w.CheckStateEqualsLedger(ledger, resizeRuntimes)
			checkNothingTainted(t, w)
			if allocs, err = acctest.LedgerAllocations(ledger); err != nil {
				t.Fatal(err)
			}
			if n := allocationsWithSlots(allocs, 2); n != resizeRuntimes {
				t.Errorf("after the apply %d of %d allocations have 2 slots", n, resizeRuntimes)
			}
			if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
				t.Fatalf("the plan after convergence is not empty (%v):\n%s", err, out)
			}
		})
	}
}

const resizeRuntimes = 40

func resizeConfig(ledger string, slots int) string {
	set := fmt.Sprintf(`{"pool": {"type": "static", "spec": {"runtimes": [{"host": "http://resize-0.test:9091", "slots": %d}, {"host": "http://resize-1.test:9091", "slots": %d}]}}}`,
		resizeRuntimes, resizeRuntimes)
	return acctest.CLIHeader(strconv.Quote(ledger), set) + fmt.Sprintf(`
resource "rill_runtime" "rt" {
  count = %d
  name  = format("rt-%%03d", count.index)
  slots = %d
}
`, resizeRuntimes, slots)
}

func allocationsWithSlots(allocs map[string]*database.Allocation, slots int) int {
	n := 0
	for _, a := range allocs {
		if a.Slots == slots {
			n++
		}
	}
	return n
}

func crashConfig(ledger string) string {
	var hosts []string
	for i := 0; i < crashHosts; i++ {
		hosts = append(hosts, fmt.Sprintf(`{"host": "http://crash-%d.test:9091", "slots": %d}`, i, crashRuntimes/crashHosts))
	}
	set := fmt.Sprintf(`{"pool": {"type": "static", "spec": {"runtimes": [%s]}}}`, strings.Join(hosts, ", "))
	return acctest.CLIHeader(strconv.Quote(ledger), set) + fmt.Sprintf(`
resource "rill_runtime" "rt" {
  count = %d
  name  = format("rt-%%03d", count.index)
  slots = 1
}
`, crashRuntimes)
}

// killAttempts bounds the tries of one round: a try whose apply ends before the kill point kills
// nothing, and the round tries again from where that apply left the ledger.
const killAttempts = 5

func runKilledApplies(t *testing.T, ledger string, who victim, kills int) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the provider process through /proc")
	}
	w := acctest.NewWorkspace(t)
	w.Write("main.tf", crashConfig(ledger))
	t.Cleanup(func() {
		if out, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
		if allocs, err := acctest.LedgerAllocations(ledger); err != nil || len(allocs) != 0 {
			t.Errorf("after destroy the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("kill points from seed %d", seed)
	// lasted is how long the last apply that ended on its own took: a time-based kill point falls
	// within it.
	lasted := 3500 * time.Millisecond
	for round := 1; round <= kills; round++ {
		killed := false
		for attempt := 1; attempt <= killAttempts && !killed; attempt++ {
			allocs, err := acctest.LedgerAllocations(ledger)
			if err != nil {
				t.Fatal(err)
			}
			// Kill at a random point of the apply: once the ledger has grown by a random number of
			// allocations short of complete. When (almost) all are allocated already, kill at a
			// random time within what such an apply takes (it refreshes every runtime).
			remaining := crashRuntimes - len(allocs)
			target, after := len(allocs)+1+rng.IntN(max(remaining-1, 1)), 2*time.Minute
			if remaining <= 1 {
				target, after = crashRuntimes+1, time.Duration(rng.Int64N(int64(lasted)))
			}
			k := killApply(t, w, ledger, who, target, after)
			t.Logf("round %d, try %d: %s", round, attempt, k)
			if killed = k.killed; !killed {
				lasted = k.ran
			}
			recoverUnreadableState(t, w)
		}
		if !killed {
			t.Fatalf("round %d: %d applies in a row ended before the kill point: no kill of %s happened mid-apply", round, killAttempts, who)
		}
	}

	// One plain apply converges.
	w.Must("apply", "-auto-approve")
	w.CheckStateEqualsLedger(ledger, crashRuntimes)
	checkNothingTainted(t, w)
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after convergence is not empty (%v):\n%s", err, out)
	}
}

// kill is what killApplyWhen did: killed is true only when the signal reached its victim while the
// apply ran (terraform died of the SIGKILL, stopped on the SIGINT, or failed when its provider was
// killed); where says when, or why not; ran is how long the apply ran.
type kill struct {
	killed bool
	where  string
	ran    time.Duration
}

func (k kill) String() string {
	if !k.killed {
		return "no kill: " + k.where
	}
	return "killed " + k.where
}

// killApply starts `terraform apply` and kills who with SIGKILL once the ledger holds target
// allocations or after has passed, whichever is first. When terraform is the victim, its provider
// process must exit within 10 s.
func killApply(t *testing.T, w *acctest.Workspace, ledger string, who victim, target int, after time.Duration) kill {
	t.Helper()
	return killApplyWhen(t, w, ledger, who, func(allocs map[string]*database.Allocation) bool { return len(allocs) >= target }, after)
}

// killApplyWhen is killApply with the moment given by a condition on the ledger's allocations. It
// waits for the provider process too, so that a kill of either process happens mid-apply.
func killApplyWhen(t *testing.T, w *acctest.Workspace, ledger string, who victim, ready func(map[string]*database.Allocation) bool, after time.Duration) kill {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, out, exited := startTerraform(ctx, t, w, "apply")

	start := time.Now()
	count := 0
	var providers []int
	for due := false; !due || len(providers) == 0; {
		select {
		case err := <-exited:
			return kill{where: fmt.Sprintf("the apply ended first after %s (%v)", time.Since(start).Round(time.Millisecond), err), ran: time.Since(start)}
		case <-time.After(50 * time.Millisecond):
		}
		providers = childrenNamed(cmd.Process.Pid, "terraform-provider-rill")
		if allocs, err := acctest.LedgerAllocations(ledger); err == nil {
			count = len(allocs)
			due = due || ready(allocs)
		}
		due = due || time.Since(start) >= after
	}
	where := fmt.Sprintf("%s after %s with %d allocations in the ledger", who, time.Since(start).Round(time.Millisecond), count)
	switch who {
	case killTerraform:
		_ = cmd.Process.Signal(syscall.SIGKILL)
	case interruptTerraform:
		_ = cmd.Process.Signal(syscall.SIGINT)
	case killProvider:
		for _, pid := range providers {
			proc.KillPID(pid)
		}
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("terraform did not exit after %s was signalled:\n%s", who, out.String())
	}
	k := kill{where: where, ran: time.Since(start)}
	switch who {
	case killTerraform:
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		k.killed = ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	case interruptTerraform:
		k.killed = strings.Contains(out.String(), "Interrupt received")
	case killProvider:
		k.killed = err != nil
	}
	if !k.killed {
		k.where += fmt.Sprintf(", but the apply had ended by then (%v)", err)
		return k
	}
	if err != nil {
		t.Logf("terraform exited after %s: %v", who, err)
	}
	if who == killTerraform {
		for _, pid := range providers {
			if !proc.GoneWithin(pid, 10*time.Second) {
				t.Errorf("provider process %d still runs 10 s after terraform was killed", pid)
			}
		}
		k.where += fmt.Sprintf("; its %d provider process(es) exited within 10 s", len(providers))
	}
	return k
}

// startTerraform starts `terraform <command> -auto-approve` (apply or destroy) in w, for a test that
// kills it mid-way: the command, its output so far, and a channel that receives its exit.
func startTerraform(ctx context.Context, t *testing.T, w *acctest.Workspace, command string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	out := &bytes.Buffer{}
	cmd := w.Command(ctx, out, command, "-auto-approve", "-no-color")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd, out, exited
}

// childrenNamed returns the PIDs of the child processes of pid whose command name starts with name
// (or, cut by the kernel to 15 bytes, begins it).
func childrenNamed(pid int, name string) []int {
	var pids []int
	for _, c := range proc.Children(pid) {
		if strings.HasPrefix(name, c.Comm) || strings.HasPrefix(c.Comm, name) {
			pids = append(pids, c.PID)
		}
	}
	return pids
}

// checkNothingTainted fails when the workspace's state holds a tainted instance.
func checkNothingTainted(t *testing.T, w *acctest.Workspace) {
	t.Helper()
	state := w.Read("terraform.tfstate")
	if strings.Contains(state, `"status": "tainted"`) {
		t.Errorf("the state holds tainted runtimes:\n%s", state)
	}
}

// The guide's recovery from a state file a kill cut short, made deterministic: after applies of 5 and
// then 10 named runtimes, terraform.tfstate is cut as a kill during Terraform's write leaves it: in
// half, where Terraform then refuses to run, or to 0 bytes (the kill landed between the truncate and
// the write), which Terraform reads as no state at all, without a word, and plans every runtime anew.
// The guide's steps (the backup, with 5 runtimes, back in place) and one plain apply bring state ==
// ledger == 10, and an empty plan.
func TestAccRuntime_stateCutShortByAKillIsRecoveredAsTheGuideSays(t *testing.T) {
	acctest.RequireAcc(t)
	for _, tc := range []struct {
		name string
		cut  func([]byte) []byte
		// planSays is what a plan of the cut state shows before the recovery, and planFails whether it fails.
		planSays  []string
		planFails bool
	}{
		{"cut in half", func(s []byte) []byte { return s[:len(s)/2] }, []string{"Unsupported state file format"}, true},
		{"emptied", func([]byte) []byte { return nil }, []string{"Plan: 10 to add", "Named runtime exists already: the apply adopts it"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := acctest.SQLiteLedger(t)
			w := acctest.NewWorkspace(t)
			t.Cleanup(func() {
				if out, err := w.Run("destroy", "-auto-approve"); err != nil {
					t.Errorf("destroy: %v\n%s", err, out)
				}
			})
			config := func(n int) string {
				return strings.Replace(resizeConfig(ledger, 1), fmt.Sprintf("count = %d", resizeRuntimes), fmt.Sprintf("count = %d", n), 1)
			}
			w.Write("main.tf", config(5))
			w.Must("apply", "-auto-approve")
			w.Write("main.tf", config(10))
			w.Must("apply", "-auto-approve")

			path := filepath.Join(w.Dir, "terraform.tfstate")
			state, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.cut(state), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := w.Run("plan", "-no-color")
			if (err != nil) != tc.planFails {
				t.Fatalf("plan on a state %s: want it to fail: %v, got (%v):\n%s", tc.name, tc.planFails, err, out)
			}
			for _, want := range tc.planSays {
				if !strings.Contains(out, want) {
					t.Fatalf("plan on a state %s: want %q, got:\n%s", tc.name, want, out)
				}
			}
			recoverUnreadableState(t, w)
			if n := len(w.RuntimesInState()); n != 5 {
				t.Fatalf("the backup holds %d runtimes, want the 5 of the apply before", n)
			}
			w.Must("apply", "-auto-approve")
			w.CheckStateEqualsLedger(ledger, 10)
			if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
				t.Fatalf("the plan after recovery is not empty (%v):\n%s", err, out)
			}
		})
	}
}

// recoverUnreadableState does what docs/guides/recovering-orphaned-runtimes.md says when a kill cut
// Terraform's own state write short (the local backend rewrites terraform.tfstate in place,
// hashicorp/terraform#34266): a file that ends mid-JSON, or one of 0 bytes when the kill landed between
// the truncate and the write, which Terraform reads as no state without an error. The cut file moves
// aside and the backup Terraform keeps of the state before that write takes its place (none when that
// is unreadable too). A file of 0 bytes with no backup is what a kill of the first apply leaves: no
// state, which is what it holds. (A later apply leaves it too when the state it was writing was the
// one it read, which Terraform does not back up; the tests that kill both terraform and the provider
// stop terraform first, so it cannot write after the provider's death.)
func recoverUnreadableState(t *testing.T, w *acctest.Workspace) {
	t.Helper()
	state, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil || (len(state) > 0 && json.Valid(state)) {
		return
	}
	backup, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate.backup"))
	backupUsable := err == nil && json.Valid(backup)
	if len(state) == 0 && !backupUsable {
		return
	}
	if err := os.Rename(filepath.Join(w.Dir, "terraform.tfstate"), filepath.Join(w.Dir, "terraform.tfstate.broken")); err != nil {
		t.Fatal(err)
	}
	restored := "no state"
	if backupUsable {
		if err := os.WriteFile(filepath.Join(w.Dir, "terraform.tfstate"), backup, 0o600); err != nil {
			t.Fatal(err)
		}
		restored = "terraform.tfstate.backup"
	}
	t.Logf("the kill left terraform.tfstate cut short (%d bytes): moved aside, continuing from %s as the guide says", len(state), restored)
}
