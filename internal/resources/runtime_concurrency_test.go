package resources_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// Two terraform processes applying to one static pool through one ledger never oversubscribe it: each
// asks for more than half the pool, so exactly the pool's slots get allocated, the losers fail with a
// capacity error, and both states together hold exactly what the ledger holds.
func TestAccRuntime_twoTerraformProcessesShareSQLiteLedger(t *testing.T) {
	requireAcc(t)
	runTwoProcesses(t, sqliteLedger(t))
}

func TestAccRuntime_twoTerraformProcessesSharePostgresLedger(t *testing.T) {
	requireAcc(t)
	runTwoProcesses(t, pgtest.Shared(t))
}

const (
	concurrencyHosts          = 2
	concurrencySlotsPerHost   = 4
	concurrencyRuntimesPerRun = 6 // two runs want 12 one-slot runtimes from a pool of 8 slots
)

func runTwoProcesses(t *testing.T, ledger string) {
	tfPath := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tfPath == "" {
		t.Skip("TF_ACC_TERRAFORM_PATH is not set")
	}
	cliConfig := devOverrideCLIConfig(t)

	var hosts []string
	for i := 0; i < concurrencyHosts; i++ {
		hosts = append(hosts, fmt.Sprintf(`{"host": "http://shared-%d.test:9091", "slots": %d}`, i, concurrencySlotsPerHost))
	}
	set := fmt.Sprintf(`{"shared": {"type": "static", "spec": {"runtimes": [%s]}}}`, strings.Join(hosts, ", "))
	var body strings.Builder
	fmt.Fprintf(&body, "terraform {\n  required_providers {\n    rill = { source = \"rill-provisioner/rill\" }\n  }\n}\n")
	fmt.Fprintf(&body, "provider \"rill\" {\n  ledger_dsn = %q\n  provisioner_set_json = %q\n}\n", ledger, set)
	for i := 0; i < concurrencyRuntimesPerRun; i++ {
		fmt.Fprintf(&body, "resource \"rill_runtime\" \"rt%d\" {\n  slots = 1\n}\n", i)
	}

	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "main.tf"), []byte(body.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	run := func(dir string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tfPath, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	// Both applies at once.
	var wg sync.WaitGroup
	outputs := make([]string, len(dirs))
	errs := make([]error, len(dirs))
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outputs[i], errs[i] = run(d, "apply", "-auto-approve", "-no-color", "-parallelism=6")
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, d := range dirs {
			if out, err := run(d, "destroy", "-auto-approve", "-no-color"); err != nil {
				t.Errorf("destroy in %s: %v\n%s", d, err, out)
			}
		}
		allocs, err := ledgerAllocations(t, ledger)
		if err != nil || len(allocs) != 0 {
			t.Errorf("after destroy the ledger holds %d allocation(s) (err %v)", len(allocs), err)
		}
	})

	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if !wordsRegexp("no runtimes found with sufficient available slots").MatchString(outputs[i]) {
				t.Fatalf("apply %d failed without the capacity error:\n%s", i, outputs[i])
			}
		}
	}
	if failed == 0 {
		t.Fatalf("both applies succeeded, which needs %d slots from a pool of %d:\n%s\n%s",
			2*concurrencyRuntimesPerRun, concurrencyHosts*concurrencySlotsPerHost, outputs[0], outputs[1])
	}

	// The ledger holds exactly the pool's slots, no host above its capacity.
	allocs, err := ledgerAllocations(t, ledger)
	if err != nil {
		t.Fatal(err)
	}
	perHost := map[string]int{}
	total := 0
	for _, a := range allocs {
		perHost[a.Host] += a.Slots
		total += a.Slots
	}
	for h, used := range perHost {
		if used > concurrencySlotsPerHost {
			t.Errorf("host %s oversubscribed: %d of %d slots", h, used, concurrencySlotsPerHost)
		}
	}
	if want := concurrencyHosts * concurrencySlotsPerHost; total != want {
		t.Errorf("ledger holds %d slots, want exactly %d (the whole pool)", total, want)
	}

	// Both states together hold exactly the runtimes the ledger holds.
	inState := 0
	for _, d := range dirs {
		out, err := run(d, "state", "list")
		if err != nil {
			t.Fatalf("state list: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.HasPrefix(line, "rill_runtime.") {
				inState++
			}
		}
	}
	if inState != len(allocs) {
		t.Errorf("the two states hold %d runtimes, the ledger %d allocations", inState, len(allocs))
	}
	t.Logf("ledger: %d slots allocated across %v; %d of 2 applies hit the capacity error", total, perHost, failed)
}

// devOverrideCLIConfig builds the provider binary once per test binary and returns a CLI config file
// that makes Terraform (or OpenTofu) use it, as a user's `dev_overrides` would.
func devOverrideCLIConfig(t *testing.T) string {
	t.Helper()
	bin, err := providerBinary()
	if err != nil {
		t.Fatalf("building the provider: %v", err)
	}
	cfg := filepath.Join(t.TempDir(), "terraformrc")
	content := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"rill-provisioner/rill\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(bin))
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var buildProvider struct {
	once sync.Once
	path string
	err  error
}

func providerBinary() (string, error) {
	buildProvider.once.Do(func() {
		dir, err := os.MkdirTemp("", "rill-provider-bin-")
		if err != nil {
			buildProvider.err = err
			return
		}
		out := filepath.Join(dir, "terraform-provider-rill")
		// The tag adds one provisioner type, "clickhouse-static-fake" (internal/clickhouse/
		// fakeserver_tagged.go): everything else is the production build.
		cmd := exec.Command("go", "build", "-tags", "rill_fake_clickhouse", "-o", out, ".")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildProvider.err = fmt.Errorf("%v: %s", err, b)
			return
		}
		buildProvider.path = out
	})
	return buildProvider.path, buildProvider.err
}
