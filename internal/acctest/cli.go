package acctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// TraceLog, given to NewWorkspace, runs the CLI with TF_LOG=trace: for tests that search the logs
// (for a secret that must not be there, or a provisioner's line that must).
const TraceLog = "TF_LOG=trace"

// Workspace is a Terraform working directory driven through the real CLI (TerraformCLI) and the
// real provider binary (dev_overrides), for the stories the test framework cannot tell: kills,
// generated configuration, commands from a guide, several processes, environment variables.
type Workspace struct {
	// Dir is the working directory.
	Dir string
	t   testing.TB
	tf  string
	env []string // added to this process's environment
}

// NewWorkspace returns a workspace in a fresh directory whose CLI runs with the extra environment
// variables env ("NAME=value"; the last value of a variable wins).
func NewWorkspace(t testing.TB, env ...string) *Workspace {
	t.Helper()
	return WorkspaceIn(t, t.TempDir(), env...)
}

// WorkspaceIn is NewWorkspace in an existing directory: several workspaces, told apart by their
// environment, may share one configuration and state.
func WorkspaceIn(t testing.TB, dir string, env ...string) *Workspace {
	t.Helper()
	base := []string{"TF_CLI_CONFIG_FILE=" + DevOverrideCLIConfig(t), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"PLUGIN_UNIX_SOCKET_DIR=" + pluginSocketDir(t)}
	return &Workspace{Dir: dir, t: t, tf: TerraformCLI(), env: append(base, env...)}
}

// pluginSocketDir returns a directory, removed when the test ends, for the Unix sockets the provider
// serves Terraform on (go-plugin reads PLUGIN_UNIX_SOCKET_DIR; without it they go to $TMPDIR). A
// provider that exits normally removes its socket, but one the crash tests kill cannot, and each
// run of the suite left about sixty /tmp/plugin* files behind. The directory is not t.TempDir():
// a socket's path must fit in 108 bytes, and t.TempDir's holds the test's name.
func pluginSocketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tfsock") //nolint:usetesting // t.TempDir's path is too long for a socket (above)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Write replaces (or, with an empty body, removes) a file of the workspace.
func (w *Workspace) Write(name, body string) {
	w.t.Helper()
	p := filepath.Join(w.Dir, name)
	if body == "" {
		_ = os.Remove(p)
		return
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// Read returns a file of the workspace.
func (w *Workspace) Read(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Dir, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// Command prepares a CLI command in the workspace, with output to out.
func (w *Workspace) Command(ctx context.Context, out *bytes.Buffer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.tf, args...)
	// This process's environment as it is now (a test may t.Setenv TF_VAR_... between commands).
	cmd.Dir, cmd.Env = w.Dir, append(os.Environ(), w.env...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// Run runs a CLI command (with -no-color, which the CLI takes anywhere in the arguments) to its end,
// within 10 minutes, and returns its output (stdout and stderr) and error.
func (w *Workspace) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if !slices.Contains(args, "-no-color") {
		args = append(args, "-no-color")
	}
	var out bytes.Buffer
	err := w.Command(ctx, &out, args...).Run()
	return out.String(), err
}

// Must runs a CLI command that must succeed.
func (w *Workspace) Must(args ...string) string {
	w.t.Helper()
	out, err := w.Run(args...)
	if err != nil {
		w.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, Tail(out))
	}
	return out
}

// RuntimesInState returns the rill_runtime IDs in the workspace's state, by address.
func (w *Workspace) RuntimesInState() map[string]string {
	w.t.Helper()
	ids := map[string]string{}
	for addr, attrs := range w.runtimeAttributes() {
		ids[addr] = attrs["id"]
	}
	return ids
}

// RuntimeAttributeInState returns an attribute of every rill_runtime in the workspace's state, by
// address, as `terraform show -json` gives it (numbers are float64).
func (w *Workspace) RuntimeAttributeInState(name string) map[string]any {
	w.t.Helper()
	values := map[string]any{}
	for addr, v := range w.runtimeValues() {
		values[addr] = v[name]
	}
	return values
}

// runtimeValues returns the attributes of every rill_runtime in the workspace's state, by address, as
// `terraform show -json` gives them.
func (w *Workspace) runtimeValues() map[string]map[string]any {
	w.t.Helper()
	out := w.Must("show", "-json")
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
	values := map[string]map[string]any{}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Type == "rill_runtime" {
			values[r.Address] = r.Values
		}
	}
	return values
}

// runtimeAttributes is runtimeValues as flatmap strings, the form LedgerDisagreements reads.
func (w *Workspace) runtimeAttributes() map[string]map[string]string {
	w.t.Helper()
	state := map[string]map[string]string{}
	for addr, values := range w.runtimeValues() {
		state[addr] = map[string]string{}
		for k, v := range values {
			flatten(state[addr], k, v)
		}
	}
	return state
}

// PrivateStateWithout fails the test if any of secrets (what -> value) is in the private state of a
// resource instance in the workspace's state file, and returns that private state, decoded: address
// (with the index key, " (deposed <key>)" for a deposed object) -> key -> value. Neither
// `terraform show -json`, which leaves private state out, nor a grep of the state file, where each
// instance's "private" is base64 of the framework's JSON object whose values are base64 again, can
// see a secret there. The caller checks the returned keys, so that a state without the private
// state it expects does not pass as one without secrets.
func (w *Workspace) PrivateStateWithout(secrets map[string]string) map[string]map[string]string {
	w.t.Helper()
	var doc struct {
		Resources []struct {
			Module, Type, Name string
			Instances          []struct {
				IndexKey any    `json:"index_key"`
				Deposed  string `json:"deposed"`
				Private  []byte `json:"private"` // encoding/json decodes the base64
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(w.Read("terraform.tfstate")), &doc); err != nil {
		w.t.Fatalf("terraform.tfstate: %v", err)
	}
	decoded := map[string]map[string]string{}
	for _, r := range doc.Resources {
		for _, inst := range r.Instances {
			addr := strings.TrimPrefix(r.Module+"."+r.Type+"."+r.Name, ".")
			if inst.IndexKey != nil {
				addr += fmt.Sprintf("[%v]", inst.IndexKey)
			}
			if inst.Deposed != "" {
				addr += " (deposed " + inst.Deposed + ")"
			}
			if len(inst.Private) == 0 {
				continue
			}
			var keys map[string][]byte // the framework's encoding: the values are base64 too
			if err := json.Unmarshal(inst.Private, &keys); err != nil {
				w.t.Fatalf("%s: private state is not the framework's JSON object of base64 values (%v): %q", addr, err, inst.Private)
			}
			decoded[addr] = map[string]string{}
			for key, value := range keys {
				decoded[addr][key] = string(value)
				for what, secret := range secrets {
					if i := strings.Index(string(value), secret); i >= 0 {
						w.t.Errorf("%s: private state %q holds the %s near: %q", addr, key, what, value[max(0, i-100):min(len(value), i+len(secret)+20)])
					}
				}
			}
		}
	}
	return decoded
}

// CheckStateEqualsLedger fails unless the workspace's runtimes are exactly the ledger's allocations,
// want of them, and each says what its allocation says (LedgerDisagreements: host, slots, name, ...).
func (w *Workspace) CheckStateEqualsLedger(ledger string, want int) {
	w.t.Helper()
	state := w.runtimeAttributes()
	allocs, err := LedgerAllocations(ledger)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, d := range LedgerDisagreements(state, allocs) {
		w.t.Error(d)
	}
	if len(state) != want || len(allocs) != want {
		w.t.Errorf("state holds %d runtimes and the ledger %d allocations, want %d each", len(state), len(allocs), want)
	}
}

// CLIVersion is what `<cli> version -json` says about the CLI.
type CLIVersion struct {
	Name         string // "Terraform" or "OpenTofu"
	Major, Minor int
	Full         string // e.g. "1.12.6"
}

// AtLeast reports whether v is major.minor or newer.
func (v CLIVersion) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

func (v CLIVersion) String() string { return v.Name + " v" + v.Full }

// ParseCLIVersion reads `version -json` output of the CLI at path (named in errors). Output without a
// version fails the test: a CLI the tests cannot identify is a broken setup, never a reason to skip.
func ParseCLIVersion(t testing.TB, path string, out []byte) CLIVersion {
	t.Helper()
	var doc struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s version -json: %v in %q", path, err, out)
	}
	v := CLIVersion{Name: "Terraform", Full: doc.Version}
	if _, err := fmt.Sscanf(doc.Version, "%d.%d", &v.Major, &v.Minor); err != nil {
		t.Fatalf("%s version -json: terraform_version %q is not major.minor...: %v", path, doc.Version, err)
	}
	// OpenTofu's -json output has the same keys as Terraform's; only the binary's text names it.
	if txt, err := exec.Command(path, "version").Output(); err == nil && bytes.HasPrefix(txt, []byte("OpenTofu")) {
		v.Name = "OpenTofu"
	}
	return v
}

// RequireCLIVersion stops t unless the acceptance tests' CLI (TerraformCLI) is major.minor or newer,
// which feature needs. The stop is ci.Skip's: a skip naming the CLI, its version and the feature on a
// developer's machine, a failure under CI=true, where a skip would hide a story that never ran --
// unless ciTooOldAllowed names that CLI release with the reason it may skip there.
func RequireCLIVersion(t testing.TB, major, minor int, feature string) {
	t.Helper()
	path := TerraformCLI()
	v := CLIVersionOf(t, path)
	if v.AtLeast(major, minor) {
		return
	}
	SkipTooOld(t, v, fmt.Sprintf("%s (%s) is too old for %s, which need %s %d.%d or newer", v, path, feature, v.Name, major, minor))
}

// CLIVersionOf runs the CLI at path with `version -json`; output it cannot read fails the test.
func CLIVersionOf(t testing.TB, path string) CLIVersion {
	t.Helper()
	out, err := exec.Command(path, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", path, err)
	}
	return ParseCLIVersion(t, path, out)
}

// SkipTooOld skips a story the CLI release v is too old for, saying why: under CI=true only when
// ciTooOldAllowed names that release, and otherwise the test fails there (ci.Skip).
func SkipTooOld(t testing.TB, v CLIVersion, reason string) {
	t.Helper()
	if why, ok := ciTooOldAllowed[fmt.Sprintf("%s %d.%d", v.Name, v.Major, v.Minor)]; ok {
		t.Skipf("%s; allowed in CI: %s", reason, why)
	}
	ci.Skip(t, "%s", reason)
}

// ciTooOldAllowed lists the CLI releases (name major.minor) that scripts/test-all.sh runs although
// they lack a feature some story needs, and why that is accepted. The stories RequireCLIVersion
// guards skip under them, saying so, even under CI=true; under any other too-old CLI they fail there.
var ciTooOldAllowed = map[string]string{
	"Terraform 1.5": "scripts/terraform-cli.sh builds Terraform 1.5.7, the newest release the Go module proxy serves, on a machine with no terraform on PATH; " +
		"no newer Terraform can be had there, so these stories run only where one is installed (CI's machines have 1.11.4), as the docs check does",
}

// DevOverrideCLIConfig builds the provider binary once per test binary and returns a CLI config file
// that makes Terraform (or OpenTofu) use it, as a user's `dev_overrides` would.
func DevOverrideCLIConfig(t testing.TB) string {
	t.Helper()
	bin, err := providerBinary()
	if err != nil {
		t.Fatalf("building the provider: %v", err)
	}
	cfg := filepath.Join(t.TempDir(), "terraformrc")
	content := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", provider.Source, filepath.Dir(bin))
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var buildProvider struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// RemoveProviderBinary removes the directory the provider binary was built into (Main calls it at
// exit).
func RemoveProviderBinary() {
	if buildProvider.dir != "" {
		_ = os.RemoveAll(buildProvider.dir)
	}
}

// providerBinDirPrefix names the directories providerBinary builds into, in the temp folder.
const providerBinDirPrefix = "rill-provider-bin-"

// sweepStaleProviderBinaries removes the builds of test binaries that could not clean up (killed, or
// timed out: go test's timeout exits without running TestMain's end), once they are older than any
// test run can be.
func sweepStaleProviderBinaries() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), providerBinDirPrefix+"*"))
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && time.Since(info.ModTime()) > 3*time.Hour {
			_ = os.RemoveAll(d)
		}
	}
}

func providerBinary() (string, error) {
	buildProvider.once.Do(func() {
		sweepStaleProviderBinaries()
		root, err := proc.RepoRoot()
		if err != nil {
			buildProvider.err = err
			return
		}
		dir, err := os.MkdirTemp("", providerBinDirPrefix)
		if err != nil {
			buildProvider.err = err
			return
		}
		buildProvider.dir = dir
		out := filepath.Join(dir, "terraform-provider-rill")
		// The tag adds one provisioner type, clickhouse.FakeType (internal/clickhouse/
		// fakeserver_tagged.go): everything else is the production build.
		if buildProvider.err = BuildProvider(root, out, "-tags", clickhouse.FakeBuildTag); buildProvider.err == nil {
			buildProvider.path = out
		}
	})
	return buildProvider.path, buildProvider.err
}

// BuildProvider builds the provider of the checkout at root into out, with CGO off as the release
// build has it and the extra go build flags. Without -trimpath, so that it reuses the packages
// `go test` and `go vet` already compiled.
func BuildProvider(root, out string, flags ...string) error {
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), ".")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	return nil
}
