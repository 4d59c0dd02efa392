package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provider"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
)

// registryAddress is the provider's source address (main.go serves it; the registry manifest and
// every example's required_providers use it).
const registryAddress = provider.Source

// Every configuration a user may copy passes `terraform fmt -check` and `terraform validate` against
// this provider's schema: each directory under examples/ with .tf files (the docs render them), and
// each terraform/hcl code block of README.md and docs-templates/ that is a whole configuration (it
// has a terraform block). Those must name the provider in required_providers; the provider comes
// from a local plugin directory holding only rill-provisioner/rill, so one without it (which would
// resolve hashicorp/rill) fails init, and no registry is contacted. The other code blocks of the
// docs are fragments meant to sit beside a configuration: they only pass `terraform fmt -check`.
//
// The CLI is TF_ACC_TERRAFORM_PATH (as for the acceptance tests; scripts/test-all.sh sets it), else
// `terraform` on PATH; with neither the test skips, or fails with CI=true (internal/testutil/ci).
func TestExamplesFormatAndValidate(t *testing.T) {
	tf := terraformCLI(t)
	plugins := pluginDir(t, providerBinary(t))

	configs := exampleConfigs(t)
	if len(configs) == 0 {
		t.Fatal("found no example configurations")
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fragment := c.fragment && !anyContains(c.files, "terraform {")
			if !fragment && !anyContains(c.files, `"`+registryAddress+`"`) {
				t.Errorf("%s: no required_providers entry with source = %q (without it a copy resolves hashicorp/rill)", c.name, registryAddress)
			}
			run := func(args ...string) (string, error) {
				cmd := exec.Command(tf, args...)
				cmd.Dir = dir
				cmd.Env = tfEnv(t)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if fragment {
				if out, err := run("fmt", "-check", "-diff", "-no-color"); err != nil {
					t.Errorf("%s is not formatted (run `terraform fmt`): %v\n%s", c.name, err, out)
				}
				return
			}
			// init first: it checks the configuration's required_version before its syntax, so that a
			// CLI too old for it (provider::rill::... function calls, which Terraform 1.5 cannot even
			// parse) skips it below rather than failing `terraform fmt`.
			if out, err := run("init", "-backend=false", "-input=false", "-no-color", "-plugin-dir="+plugins); err != nil {
				if strings.Contains(out, "Unsupported Terraform Core version") {
					// The example states the version it needs (write-only attributes, ephemeral
					// variables): under CI=true an older CLI fails here rather than leaving the
					// example unchecked, unless acctest lists that release as one a machine may have.
					acctest.SkipTooOld(t, acctest.CLIVersionOf(t, tf), fmt.Sprintf("%s needs a newer CLI than %s:\n%s", c.name, tf, out))
				}
				t.Fatalf("%s: terraform init: %v\n%s", c.name, err, out)
			}
			if out, err := run("fmt", "-check", "-diff", "-no-color"); err != nil {
				t.Errorf("%s is not formatted (run `terraform fmt`): %v\n%s", c.name, err, out)
			}
			if out, err := run("validate", "-no-color"); err != nil {
				t.Errorf("%s: terraform validate: %v\n%s", c.name, err, out)
			}
		})
	}
}

func anyContains(files map[string][]byte, s string) bool {
	for _, content := range files {
		if bytes.Contains(content, []byte(s)) {
			return true
		}
	}
	return false
}

// exampleConfig is one configuration to check: a directory's files, or one code block as main.tf.
type exampleConfig struct {
	name     string
	files    map[string][]byte
	fragment bool // a code block of the docs, which may be a fragment
}

// exampleConfigs collects the directories under examples/ that hold .tf files (with every file of
// the directory, for file() calls) and the terraform/hcl code blocks of the hand-written docs.
func exampleConfigs(t *testing.T) []exampleConfig {
	t.Helper()
	var configs []exampleConfig
	dirs := map[string]bool{}
	err := filepath.WalkDir("examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			dirs[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, e := range entries {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".tfstate") || strings.HasSuffix(e.Name(), ".tfstate.backup") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		if !docSnippetDir(dir) {
			configs = append(configs, exampleConfig{name: filepath.ToSlash(dir), files: files})
			continue
		}
		// tfplugindocs renders each file of these directories as its own snippet: each stands alone.
		for name, content := range files {
			if strings.HasSuffix(name, ".tf") {
				configs = append(configs, exampleConfig{name: filepath.ToSlash(filepath.Join(dir, name)), files: map[string][]byte{"main.tf": content}})
			}
		}
	}

	docs := []string{"README.md"}
	err = filepath.WalkDir("docs-templates", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".md.tmpl")) {
			docs = append(docs, p)
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range hclBlocks(string(b)) {
			configs = append(configs, exampleConfig{
				name:     fmt.Sprintf("%s#%d(line %d)", filepath.ToSlash(doc), i+1, block.line),
				files:    map[string][]byte{"main.tf": []byte(block.text)},
				fragment: doc != "README.md",
			})
		}
	}
	sort.Slice(configs, func(i, j int) bool { return configs[i].name < configs[j].name })
	return configs
}

// docSnippetDir reports whether dir holds tfplugindocs' per-page snippets (examples/provider,
// examples/resources/<type>, examples/data-sources/<type>) rather than one configuration.
func docSnippetDir(dir string) bool {
	dir = filepath.ToSlash(dir)
	return dir == "examples/provider" || strings.HasPrefix(dir, "examples/resources/") || strings.HasPrefix(dir, "examples/data-sources/")
}

type codeBlock struct {
	line int // of the opening fence
	text string
}

var fence = regexp.MustCompile("^```(\\w*)\\s*$")

// hclBlocks returns the fenced code blocks tagged terraform, hcl or tf. A block indented under a list
// item has the opening fence's indentation removed from each of its lines, as CommonMark renders it
// (and as a reader copies it).
func hclBlocks(markdown string) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	var body strings.Builder
	var indent string
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if m := fence.FindStringSubmatch(trimmed); m != nil && m[1] != "" {
				indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
				switch m[1] {
				case "terraform", "hcl", "tf":
					cur = &codeBlock{line: i + 1}
					body.Reset()
				default:
					cur = &codeBlock{line: -1} // skipped block: still track its end
				}
			}
			continue
		}
		if trimmed == "```" {
			if cur.line > 0 {
				cur.text = body.String()
				blocks = append(blocks, *cur)
			}
			cur = nil
			continue
		}
		body.WriteString(strings.TrimPrefix(line, indent))
		body.WriteString("\n")
	}
	return blocks
}

// terraformCLI returns the CLI the examples are checked with.
func terraformCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	if p, err := exec.LookPath("terraform"); err == nil {
		return p
	}
	ci.Skip(t, "no Terraform CLI: set TF_ACC_TERRAFORM_PATH (scripts/terraform-cli.sh prints one) or put terraform on PATH")
	return ""
}

// pluginDir lays the binary out as a local filesystem mirror under both registries' hosts (OpenTofu
// resolves rill-provisioner/rill under registry.opentofu.org).
func pluginDir(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		d := filepath.Join(dir, host, registryAddress, testVersion, platform)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(d, "terraform-provider-rill_v"+testVersion)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tfEnv is the environment of the CLI: no user CLI configuration (a dev_overrides block there would
// bypass the plugin directory), no update checks, no plugin cache.
func tfEnv(t *testing.T) []string {
	t.Helper()
	rc := filepath.Join(t.TempDir(), "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "TF_CLI_CONFIG_FILE" || k == "TF_PLUGIN_CACHE_DIR" || strings.HasPrefix(k, "TF_ACC") || k == "TF_REATTACH_PROVIDERS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
}

// A block indented under a list item is checked as a reader copies it: without the fence's
// indentation (before, terraform fmt refused such a block for its indentation alone).
func TestHCLBlocksDropTheIndentationOfTheirFence(t *testing.T) {
	md := "* a step:\n\n    ```terraform\n    output \"x\" {\n      value = 1\n    }\n    ```\n\n```hcl\na = 1\n```\n"
	got := hclBlocks(md)
	if len(got) != 2 || got[0].text != "output \"x\" {\n  value = 1\n}\n" || got[0].line != 3 || got[1].text != "a = 1\n" {
		t.Fatalf("got %+v", got)
	}
}

// The examples a pipeline copies apply on a static pool with the default SQLite ledger, and the plan
// after the apply has no changes (`terraform plan -detailed-exitcode` exits 0), which a GitOps pipeline
// reads as "nothing to do" and a scheduled drift check as "no drift" (docs/guides/gitops.md). The
// provider block is left to RILL_ADMIN_PROVISIONER_SET_JSON and RILL_ADMIN_DEFAULT_PROVISIONER. Before,
// rill_provisioners' example had a data source scoped in a check block, which Terraform reads during
// every apply: every plan exited 2.
func TestExamplesApplyAndPlanNoChangeAfter(t *testing.T) {
	tf := terraformCLI(t)
	plugins := pluginDir(t, providerBinary(t))
	const set = `{"static-pool": {"type": "static", "spec": {"runtimes": [
		{"host": "http://runtime-1.internal:9091", "slots": 50}, {"host": "http://runtime-2.internal:9091", "slots": 50}]}}}`
	for _, dir := range []string{"examples/resources/rill_runtime", "examples/data-sources/rill_allocations", "examples/data-sources/rill_provisioners"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".tf") {
					b, err := os.ReadFile(filepath.Join(dir, e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(work, e.Name()), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			env := append(tfEnv(t), "XDG_DATA_HOME="+t.TempDir(), "RILL_ADMIN_PROVISIONER_SET_JSON="+set, "RILL_ADMIN_DEFAULT_PROVISIONER=static-pool")
			run := func(args ...string) (string, error) {
				cmd := exec.Command(tf, append(args, "-no-color")...)
				cmd.Dir, cmd.Env = work, env
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := run("init", "-input=false", "-plugin-dir="+plugins); err != nil {
				t.Fatalf("terraform init: %v\n%s", err, out)
			}
			if out, err := run("apply", "-auto-approve", "-input=false"); err != nil {
				t.Fatalf("terraform apply: %v\n%s", err, out)
			}
			t.Cleanup(func() {
				if out, err := run("destroy", "-auto-approve", "-input=false"); err != nil {
					t.Errorf("terraform destroy: %v\n%s", err, out)
				}
			})
			if out, err := run("plan", "-detailed-exitcode", "-input=false"); err != nil {
				t.Fatalf("the plan after the apply is not empty (%v): a pipeline would see changes on every run\n%s", err, out)
			}
		})
	}
}
