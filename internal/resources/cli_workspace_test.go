package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workspace is a Terraform working directory driven through the real CLI and the real provider
// binary (dev_overrides), for the stories the test framework cannot tell: kills, generated
// configuration, commands from a guide.
type workspace struct {
	t   *testing.T
	dir string
	tf  string
	env []string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	tfPath := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tfPath == "" {
		t.Skip("TF_ACC_TERRAFORM_PATH is not set")
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+devOverrideCLIConfig(t), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return &workspace{t: t, dir: t.TempDir(), tf: tfPath, env: env}
}

// cliHeader is the terraform block and provider block of a workspace's main.tf.
func cliHeader(ledger, setJSON string) string {
	return fmt.Sprintf("terraform {\n  required_providers {\n    rill = { source = \"rill-provisioner/rill\" }\n  }\n}\n"+
		"provider \"rill\" {\n  ledger_dsn = %q\n  provisioner_set_json = %q\n}\n", ledger, setJSON)
}

// write replaces (or, with an empty body, removes) a file of the workspace.
func (w *workspace) write(name, body string) {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if body == "" {
		_ = os.Remove(p)
		return
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// command prepares a CLI command in the workspace, with output to out.
func (w *workspace) command(ctx context.Context, out *bytes.Buffer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.tf, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// run runs a CLI command to its end and returns its output and error.
func (w *workspace) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := w.command(ctx, &out, append(args, "-no-color")...).Run()
	return out.String(), err
}

// must runs a CLI command that must succeed.
func (w *workspace) must(args ...string) string {
	w.t.Helper()
	out, err := w.run(args...)
	if err != nil {
		w.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// runtimesInState returns the rill_runtime IDs in the workspace's state, by address.
func (w *workspace) runtimesInState() map[string]string {
	w.t.Helper()
	ids := map[string]string{}
	for addr, v := range w.runtimeAttributeInState("id") {
		ids[addr], _ = v.(string)
	}
	return ids
}

// runtimeAttributeInState returns an attribute of every rill_runtime in the workspace's state, by
// address, as `terraform show -json` gives it (numbers are float64).
func (w *workspace) runtimeAttributeInState(name string) map[string]any {
	w.t.Helper()
	out := w.must("show", "-json")
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Type    string         `json:"type"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		w.t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	values := map[string]any{}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Type == "rill_runtime" {
			values[r.Address] = r.Values[name]
		}
	}
	return values
}

// checkStateEqualsLedger fails unless the workspace's runtimes are exactly the ledger's allocations,
// want of them.
func (w *workspace) checkStateEqualsLedger(ledger string, want int) {
	w.t.Helper()
	inState := w.runtimesInState()
	allocs, err := ledgerAllocations(w.t, ledger)
	if err != nil {
		w.t.Fatal(err)
	}
	ids := map[string]bool{}
	for addr, id := range inState {
		if _, ok := allocs[id]; !ok {
			w.t.Errorf("%s (%s) is in state but has no allocation", addr, id)
		}
		ids[id] = true
	}
	for id, a := range allocs {
		if !ids[id] {
			w.t.Errorf("allocation %s (name %q, host %s) is in no state: leaked", id, a.Name, a.Host)
		}
	}
	if len(inState) != want || len(allocs) != want {
		w.t.Errorf("state holds %d runtimes and the ledger %d allocations, want %d each", len(inState), len(allocs), want)
	}
}

// cliVersionAtLeast reports whether the workspace's CLI is at least major.minor (OpenTofu numbers
// its releases like Terraform for the features used here).
func (w *workspace) cliVersionAtLeast(major, minor int) bool {
	out := w.must("version", "-json")
	var v struct {
		Version string `json:"terraform_version"`
	}
	_ = json.Unmarshal([]byte(out), &v)
	var ma, mi int
	_, _ = fmt.Sscanf(v.Version, "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}
