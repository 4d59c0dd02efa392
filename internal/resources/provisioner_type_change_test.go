package resources_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// A set entry whose type is edited in place, keeping its name: runtime "rt" was allocated by static
// pool "default", which then becomes a kubernetes provisioner (whose kubeconfig does not exist, so
// any call of it would fail). Its refresh (plan, apply -refresh-only), a plan with -refresh=false that
// changes it, and a destroy with -refresh=false each fail with "Provisioner type changed", naming both
// types and what to do, before any call of the kubernetes provisioner; none reads the runtime as gone,
// and the state file and the ledger's allocation stay as they were. With the type put back the plan
// is empty. A state from before the type was recorded gains it on its next refresh through the type
// that made it. Before, nothing recorded the type: each type reads another's state as an old one of
// its own, and a Kubernetes runtime refreshed through a static pool was reported "removed outside
// Terraform" and planned anew, its Deployment left to nobody.
func TestAccRuntime_aSetEntryThatChangedTypeIsRefusedNeverGone(t *testing.T) {
	acctest.RequireAcc(t)
	w, main, static := appliedStaticRuntime(t)
	if got := w.PrivateStateWithout(nil)["rill_runtime.rt"]["provisioner_type"]; got != `"static"` {
		t.Fatalf("the created runtime records provisioner type %s, want \"static\"", got)
	}
	changed := toKubernetes(t, w, main, static)
	refusedAfterTheTypeChanged(t, w, changed, []string{"Provisioner type changed", `type "static"`, `type "kubernetes"`, "terraform state rm"})

	plansNoChangeWithTheTypePutBack(t, w, main)

	// A state from before the key: the refresh through the type that made it records it.
	editPrivateStates(t, filepath.Join(w.Dir, "terraform.tfstate"), "rill_runtime", func(keys map[string][]byte) { delete(keys, "provisioner_type") })
	w.Must("apply", "-refresh-only", "-auto-approve", "-no-color")
	if got := w.PrivateStateWithout(nil)["rill_runtime.rt"]["provisioner_type"]; got != `"static"` {
		t.Errorf("after a refresh of a state without it the runtime records provisioner type %s, want \"static\"", got)
	}
}

// A state from before the Terraform layer recorded the type that made each resource
// (provisioner_type, TestAccRuntime_aSetEntryThatChangedTypeIsRefusedNeverGone) has nothing to compare
// the entry's new type with: the kubernetes provisioner itself refuses the static runtime's state,
// by the ledger_id it records, before any request (provisioner.ForeignStateError), and the refresh,
// the plan of a resize with -refresh=false and the destroy fail with the same "Provisioner type
// changed", saying what gave the other type away; state file and ledger stay as they were. Before,
// the kubernetes provisioner took the state for an old one of its own and went to its cluster: here
// (no kubeconfig) "Reading the runtime failed" and a plan of the resize that the apply would have
// provisioned in the cluster, and with a cluster that answers, "removed outside Terraform".
func TestAccRuntime_aStateWithoutItsTypeIsRefusedByAnotherTypesProvisioner(t *testing.T) {
	acctest.RequireAcc(t)
	w, main, static := appliedStaticRuntime(t)
	editPrivateStates(t, filepath.Join(w.Dir, "terraform.tfstate"), "rill_runtime", func(keys map[string][]byte) { delete(keys, "provisioner_type") })

	changed := toKubernetes(t, w, main, static)
	refusedAfterTheTypeChanged(t, w, changed, []string{"Provisioner type changed",
		"runtime's state was written by a static provisioner (it records ledger_id)", `type "static"`, `type "kubernetes"`, "terraform state rm"})

	plansNoChangeWithTheTypePutBack(t, w, main)
}

// appliedStaticRuntime applies runtime rt (slots = 1) on a static pool "default" of one host and
// returns its workspace, its main.tf and the set JSON in it; the cleanup puts main.tf back and
// destroys.
func appliedStaticRuntime(t *testing.T) (w *acctest.Workspace, main, static string) {
	t.Helper()
	static = `{"default": {"type": "static", "spec": {"runtimes": [{"host": "http://runtime-a.test:9091", "slots": 4}]}}}`
	w = cliWorkspace(t, static, acctest.RuntimeBlock("rt", 1))
	main = w.Read("main.tf")
	w.Must("apply", "-no-color", "-auto-approve")
	t.Cleanup(func() { w.Write("main.tf", main); _, _ = w.Run("destroy", "-no-color", "-auto-approve") })
	return w, main, static
}

// plansNoChangeWithTheTypePutBack writes main (the entry of its first type) back: the plan is empty.
func plansNoChangeWithTheTypePutBack(t *testing.T, w *acctest.Workspace, main string) {
	t.Helper()
	w.Write("main.tf", main)
	if out := w.Must("plan", "-no-color"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan with the entry's type put back:\n%s", acctest.Tail(out))
	}
}

// toKubernetes is main with the static set turned into a kubernetes one of the same entry name, whose
// kubeconfig does not exist (any request of it would fail, naming no.kubeconfig).
func toKubernetes(t *testing.T, w *acctest.Workspace, main, static string) string {
	t.Helper()
	kubernetes := `{"default": {"type": "kubernetes", "spec": {"host": "http://*.rill.test", "namespace": "rill", "kubeconfig_path": "` +
		filepath.Join(w.Dir, "no.kubeconfig") + `"}}}`
	changed := strings.Replace(main, strconvQuoteInner(static), strconvQuoteInner(kubernetes), 1)
	if changed == main {
		t.Fatalf("could not change the entry's type in:\n%s", main)
	}
	return changed
}

// refusedAfterTheTypeChanged runs, on runtime rt (slots = 1) of a static pool whose entry now has type
// kubernetes (config changed), a plan, an apply -refresh-only, a plan with -refresh=false of a resize
// and a destroy with -refresh=false: each must fail with every one of wants, without calling the
// kubernetes provisioner's cluster nor reading the runtime as gone, and leave the state file and the
// ledger's allocation as they were.
func refusedAfterTheTypeChanged(t *testing.T, w *acctest.Workspace, changed string, wants []string) {
	t.Helper()
	ledger := "sqlite://" + filepath.Join(w.Dir, "ledger.db")
	statePath := filepath.Join(w.Dir, "terraform.tfstate")
	before, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	resized := strings.Replace(changed, "slots = 1", "slots = 2", 1)
	for _, step := range []struct {
		config string
		args   []string
	}{
		{changed, []string{"plan", "-no-color"}},
		{changed, []string{"apply", "-refresh-only", "-auto-approve", "-no-color"}},
		{resized, []string{"plan", "-refresh=false", "-no-color"}},
		{changed, []string{"destroy", "-refresh=false", "-auto-approve", "-no-color"}},
	} {
		w.Write("main.tf", step.config)
		cmd := strings.Join(step.args, " ")
		out, err := w.Run(step.args...)
		if err == nil {
			t.Fatalf("%s after the entry changed type succeeded:\n%s", cmd, acctest.Tail(out))
		}
		for _, want := range wants {
			if !acctest.WordsRegexp(want).MatchString(out) {
				t.Errorf("%s: the output lacks %q:\n%s", cmd, want, acctest.Tail(out))
			}
		}
		for _, wrong := range []string{"removed outside Terraform", "Reading the runtime failed", "no.kubeconfig"} {
			if strings.Contains(out, wrong) {
				t.Errorf("%s: the output has %q (the kubernetes provisioner was called):\n%s", cmd, wrong, acctest.Tail(out))
			}
		}
		if after, err := os.ReadFile(statePath); err != nil || !sameJSON(before, after) {
			t.Errorf("%s changed the state file (%v)", cmd, err)
		}
		if allocs, err := acctest.LedgerAllocations(ledger); err != nil || len(allocs) != 1 {
			t.Errorf("after %s the ledger holds %v (%v), want the runtime's allocation", cmd, allocs, err)
		}
	}
}

// sameJSON reports whether a and b are the same JSON document, whatever their layout (a state file
// edited by the test is rewritten by Terraform in its own).
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// strconvQuoteInner is s as it appears inside a quoted HCL string (CLIHeader quotes the set).
func strconvQuoteInner(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
