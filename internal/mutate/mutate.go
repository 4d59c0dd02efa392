// Package mutate checks that the test suite catches the behaviours users depend on: each mutant in
// Mutants is one small, deliberate bug (a file, an exact search text and its replacement), applied
// alone to a scratch copy of the tree; the tests named for it must then fail. `make mutate` runs them
// (tools/mutate) and fails when a mutant survives. The real tree is never changed.
package mutate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Mutant is one deliberate bug and the tests that must catch it.
type Mutant struct {
	Name    string  // short identifier, unique
	Breaks  string  // the behaviour users depend on that it breaks
	File    string  // path from the repository root
	Search  string  // exact text, found exactly once in File
	Replace string  // what Search becomes
	More    []Edit  // further edits of File, for a bug that takes more than one
	Checks  []Check // run in order until one fails
}

// Edit is one more exact search and replacement of a mutant.
type Edit struct{ Search, Replace string }

// Check is one `go test` run: named test functions of one package.
type Check struct {
	Package string   // "./internal/static"
	Tests   []string // top-level test function names
	Acc     bool     // acceptance tests: run with TF_ACC=1 (TF_ACC_TERRAFORM_PATH comes from the environment)
}

// RunPattern is the -run pattern that selects exactly c's tests.
func (c Check) RunPattern() string { return "^(" + strings.Join(c.Tests, "|") + ")$" }

func (c Check) String() string {
	return c.Package + " " + strings.Join(c.Tests, ",")
}

// Apply returns content with m's edits made, or an error unless each search text occurs exactly once.
func (m Mutant) Apply(content []byte) ([]byte, error) {
	for _, e := range append([]Edit{{m.Search, m.Replace}}, m.More...) {
		if n := bytes.Count(content, []byte(e.Search)); n != 1 {
			return nil, fmt.Errorf("mutant %s: search text %q found %d times in %s, want exactly once (the source changed: update the mutant)", m.Name, e.Search, n, m.File)
		}
		if e.Search == e.Replace {
			return nil, fmt.Errorf("mutant %s: replacement equals the search text %q", m.Name, e.Search)
		}
		content = bytes.Replace(content, []byte(e.Search), []byte(e.Replace), 1)
	}
	return content, nil
}

// Result is what happened to one mutant.
type Result struct {
	Mutant   Mutant
	Killed   bool
	By       []string // the failing tests ("package TestName") of the check that killed it
	Err      error    // the mutant could not be judged (no match, does not compile, baseline failing)
	Duration time.Duration
}

// Options configure Run.
type Options struct {
	Root    string        // repository root to copy from (never written to)
	Scratch string        // directory for the copy; a new temp directory when empty (removed afterwards)
	Env     []string      // environment of the go test runs (os.Environ() when nil)
	Timeout time.Duration // per go test run
	Log     io.Writer     // progress lines; nil for none
	// Baseline runs every distinct check once on the unmutated copy first: a check that fails there
	// would "kill" every mutant, so its mutants are reported as errors instead.
	Baseline bool
}

// Run applies each mutant alone to a scratch copy of opts.Root and runs its checks.
func Run(ctx context.Context, opts Options, mutants []Mutant) ([]Result, error) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			_, _ = fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	scratch := opts.Scratch
	if scratch == "" {
		dir, err := os.MkdirTemp("", "rill-mutate-")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		scratch = dir
	}
	if err := CopyTree(opts.Root, scratch); err != nil {
		return nil, err
	}
	logf("scratch copy: %s", scratch)
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}

	baseline := map[string]error{}
	if opts.Baseline {
		for _, m := range mutants {
			for _, c := range m.Checks {
				key := c.String()
				if _, done := baseline[key]; done {
					continue
				}
				start := time.Now()
				failed, err := runCheck(ctx, scratch, env, c, opts.Timeout)
				if err == nil && len(failed) > 0 {
					err = fmt.Errorf("fails without any mutant: %s", strings.Join(failed, ", "))
				}
				baseline[key] = err
				logf("baseline %-60s %s (%s)", key, okOr(err), time.Since(start).Round(time.Second))
			}
		}
	}

	results := make([]Result, 0, len(mutants))
	for _, m := range mutants {
		start := time.Now()
		res := runMutant(ctx, scratch, env, m, opts.Timeout, baseline)
		res.Duration = time.Since(start)
		status := "SURVIVED"
		switch {
		case res.Err != nil:
			status = "ERROR: " + res.Err.Error()
		case res.Killed:
			status = "killed by " + strings.Join(res.By, ", ")
		}
		logf("mutant %-40s %s (%s)", m.Name, status, res.Duration.Round(time.Second))
		results = append(results, res)
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
	}
	return results, nil
}

func okOr(err error) string {
	if err != nil {
		return "FAILED: " + err.Error()
	}
	return "ok"
}

// runMutant applies m in scratch, runs its checks until one fails, and restores the file.
func runMutant(ctx context.Context, scratch string, env []string, m Mutant, timeout time.Duration, baseline map[string]error) Result {
	res := Result{Mutant: m}
	path := filepath.Join(scratch, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		res.Err = err
		return res
	}
	mutated, err := m.Apply(orig)
	if err != nil {
		res.Err = err
		return res
	}
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		res.Err = err
		return res
	}
	defer func() {
		if err := os.WriteFile(path, orig, 0o644); err != nil && res.Err == nil {
			res.Err = fmt.Errorf("restoring %s: %w", m.File, err)
		}
	}()
	for _, c := range m.Checks {
		if err := baseline[c.String()]; err != nil {
			res.Err = fmt.Errorf("check %s %v", c, err)
			return res
		}
		failed, err := runCheck(ctx, scratch, env, c, timeout)
		if err != nil {
			res.Err = err
			return res
		}
		if len(failed) > 0 {
			res.Killed, res.By = true, failed
			return res
		}
	}
	return res
}

// runCheck runs one check with go test -json and returns the tests that failed. A package that does
// not build, or a run that fails without a failing test (a panic in TestMain, a timeout), is an error.
func runCheck(ctx context.Context, dir string, env []string, c Check, timeout time.Duration) ([]string, error) {
	args := []string{"test", "-json", "-count=1", "-p=1", "-run", c.RunPattern()}
	if timeout > 0 {
		args = append(args, "-timeout", timeout.String())
	}
	args = append(args, c.Package)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append([]string(nil), env...)
	if c.Acc {
		cmd.Env = append(cmd.Env, "TF_ACC=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	failed, ran, skipped, err := ParseTestEvents(&stdout)
	if err != nil {
		return nil, err
	}
	if len(failed) > 0 {
		for i, f := range failed {
			failed[i] = c.Package + " " + f
		}
		return failed, nil
	}
	if runErr != nil {
		return nil, fmt.Errorf("go test %s failed without a failing test (build error?): %v\n%s%s", c, runErr, tailOf(stderr.String()), tailOf(stdout.String()))
	}
	if missing := missingTests(c.Tests, ran); len(missing) > 0 {
		return nil, fmt.Errorf("go test %s ran none of %s (renamed?)", c, strings.Join(missing, ", "))
	}
	// A check that skipped proves nothing: said as such, not as a mutant that survived.
	for _, t := range c.Tests {
		if why, ok := skipped[t]; ok {
			return nil, fmt.Errorf("go test %s skipped %s, so it cannot tell: %s", c, t, why)
		}
	}
	return nil, nil
}

func missingTests(want []string, ran map[string]bool) []string {
	var out []string
	for _, w := range want {
		if !ran[w] {
			out = append(out, w)
		}
	}
	return out
}

func tailOf(s string) string {
	const n = 3000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// ParseTestEvents reads `go test -json` output and returns the top-level tests that failed (sorted,
// each once), the set of top-level tests that ran (passed, failed or skipped), and those that
// skipped, each with the last line it printed (its reason, from t.Skip).
func ParseTestEvents(r io.Reader) (failed []string, ran map[string]bool, skipped map[string]string, err error) {
	ran, skipped = map[string]bool{}, map[string]string{}
	failedSet := map[string]bool{}
	lastLine := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // build output interleaved by go test
		}
		var e testEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, nil, nil, fmt.Errorf("reading go test -json output: %w", err)
		}
		if e.Test == "" {
			continue
		}
		top, sub, _ := strings.Cut(e.Test, "/")
		switch e.Action {
		case "output":
			if out := strings.TrimSpace(e.Output); out != "" && !strings.HasPrefix(out, "=== ") && !strings.HasPrefix(out, "--- ") {
				lastLine[top] = out
			}
		case "pass":
			ran[top] = true
		case "skip":
			ran[top] = true
			if sub == "" {
				skipped[top] = lastLine[top]
			}
		case "fail":
			ran[top] = true
			failedSet[top] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, err
	}
	for t := range failedSet {
		failed = append(failed, t)
	}
	sort.Strings(failed)
	return failed, ran, skipped, nil
}

// CopyTree copies the files git knows of in root (tracked, and untracked but not ignored) to dst,
// and links dst/.tools to root's tool cache so that tests find Terraform, PostgreSQL and the control
// plane.
func CopyTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing the files of %s: %w", root, err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || name == ".tools" || strings.HasPrefix(name, ".tools/") {
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	// Absolute: with root "." (make mutate) a relative target would be the link itself.
	tools, err := filepath.Abs(filepath.Join(root, ".tools"))
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(tools); err == nil {
		link := filepath.Join(dst, ".tools")
		_ = os.Remove(link)
		if err := os.Symlink(real, link); err != nil {
			return err
		}
	}
	return nil
}

// Table renders results as a Markdown table: mutant, killed, by which test, time.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| mutant | breaks | killed | by | time |\n|---|---|---|---|---|\n")
	for _, r := range results {
		killed := "no"
		by := ""
		switch {
		case r.Err != nil:
			killed, by = "error", strings.ReplaceAll(firstLine(r.Err.Error()), "|", "/")
		case r.Killed:
			killed, by = "yes", strings.Join(r.By, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Mutant.Name, r.Mutant.Breaks, killed, by, r.Duration.Round(time.Second))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Survivors returns the results that are not killed (including those that could not be judged).
func Survivors(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if !r.Killed || r.Err != nil {
			out = append(out, r)
		}
	}
	return out
}
