package mutate

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// The mutant list cannot rot silently: every mutant still applies to the current source exactly once,
// the mutated file still parses, and every test it names exists in its package. This is the cheap half
// of `make mutate`, run by every `go test ./...`.
func TestMutantsMatchTheSource(t *testing.T) {
	names := map[string]bool{}
	for _, m := range Mutants {
		t.Run(m.Name, func(t *testing.T) {
			if m.Name == "" || names[m.Name] {
				t.Fatalf("mutant names must be unique and non-empty: %q", m.Name)
			}
			names[m.Name] = true
			if m.Breaks == "" || len(m.Checks) == 0 {
				t.Fatalf("mutant %s must say what it breaks and name the tests that catch it", m.Name)
			}
			src, err := os.ReadFile(filepath.Join(root, m.File))
			if err != nil {
				t.Fatal(err)
			}
			mutated, err := m.Apply(src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parser.ParseFile(token.NewFileSet(), m.File, mutated, 0); err != nil {
				t.Fatalf("the mutated file does not parse: %v", err)
			}
			for _, c := range m.Checks {
				for _, name := range c.Tests {
					if !testExists(t, filepath.Join(root, c.Package), name) {
						t.Errorf("check %s: no func %s in %s's tests", c, name, c.Package)
					}
				}
			}
		})
	}
}

// Every mutant compiles: one that does not would be reported as an error by `make mutate`, never as
// killed, but it should fail here first. Each is built with go build -overlay (the tree is not
// touched); skipped with -short, since it compiles a package per mutant.
func TestMutantsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a package per mutant")
	}
	for _, m := range Mutants {
		t.Run(m.Name, func(t *testing.T) {
			file, err := filepath.Abs(filepath.Join(root, m.File))
			if err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			mutated, err := m.Apply(src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			replacement := filepath.Join(dir, filepath.Base(file))
			overlay := filepath.Join(dir, "overlay.json")
			spec, _ := json.Marshal(map[string]map[string]string{"Replace": {file: replacement}})
			if err := os.WriteFile(replacement, mutated, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(overlay, spec, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "build", "-overlay", overlay, "./"+filepath.ToSlash(filepath.Dir(m.File)))
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the mutated package does not compile: %v\n%s", err, out)
			}
		})
	}
}

// testExists reports whether a _test.go file of dir declares func name(t *testing.T).
func testExists(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(t \*testing\.T\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if decl.Match(b) {
			return true
		}
	}
	return false
}

func TestApplyNeedsExactlyOneMatch(t *testing.T) {
	m := Mutant{Name: "m", File: "f.go", Search: "a < b", Replace: "a > b"}
	if got, err := m.Apply([]byte("x := a < b")); err != nil || string(got) != "x := a > b" {
		t.Fatalf("one match: %q %v", got, err)
	}
	for _, src := range []string{"x := a <= b", "a < b; a < b"} {
		if _, err := m.Apply([]byte(src)); err == nil || !strings.Contains(err.Error(), "exactly once") {
			t.Errorf("%q: want an error saying the text must match once, got %v", src, err)
		}
	}
	if _, err := (Mutant{Name: "same", Search: "a", Replace: "a"}).Apply([]byte("a")); err == nil {
		t.Error("a replacement equal to the search text should be refused")
	}
	two := Mutant{Name: "two", Search: "a < b", Replace: "a > b", More: []Edit{{"c == d", "c != d"}}}
	if got, err := two.Apply([]byte("a < b && c == d")); err != nil || string(got) != "a > b && c != d" {
		t.Fatalf("two edits: %q %v", got, err)
	}
	if _, err := two.Apply([]byte("a < b")); err == nil || !strings.Contains(err.Error(), `"c == d" found 0 times`) {
		t.Errorf("a missing further edit should name its search text, got %v", err)
	}
}

func TestParseTestEventsReportsTopLevelFailuresWhatRanAndWhatSkipped(t *testing.T) {
	out := `# building
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA/sub"}
{"Action":"fail","Package":"p","Test":"TestA/sub"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    k8stest.go:95: no Kubernetes cluster: kube-apiserver exited\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.01s)\n"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"skip","Package":"p","Test":"TestB/sub"}
{"Action":"fail","Package":"p"}
`
	failed, ran, skipped, err := ParseTestEvents(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(failed, ",") != "TestA" {
		t.Errorf("failed %v, want [TestA]", failed)
	}
	if !ran["TestA"] || !ran["TestB"] || !ran["TestC"] || len(ran) != 3 {
		t.Errorf("ran %v", ran)
	}
	// A skipped check proves nothing: runCheck says so, with the reason, instead of a survivor.
	if len(skipped) != 1 || skipped["TestC"] != "k8stest.go:95: no Kubernetes cluster: kube-apiserver exited" {
		t.Errorf("skipped %q, want TestC's reason alone (a subtest's skip is not the test's)", skipped)
	}
	if missing := missingTests([]string{"TestB", "TestD"}, ran); strings.Join(missing, ",") != "TestD" {
		t.Errorf("missing %v, want [TestD]", missing)
	}
}

func TestTableAndSurvivors(t *testing.T) {
	results := []Result{
		{Mutant: Mutant{Name: "killed", Breaks: "x"}, Killed: true, By: []string{"./p TestA"}},
		{Mutant: Mutant{Name: "survived", Breaks: "y"}},
	}
	table := Table(results)
	for _, want := range []string{"| killed | x | yes | ./p TestA |", "| survived | y | no |  |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if s := Survivors(results); len(s) != 1 || s[0].Mutant.Name != "survived" {
		t.Errorf("survivors %v", s)
	}
}

// The scratch copy finds the tool cache (Terraform, the control plane) of the checkout it was made
// from. Before, `make mutate` (root ".") in a checkout whose .tools is a directory linked the copy's
// .tools to the relative path ".tools", that is to itself: every check needing a tool skipped ("too
// many levels of symbolic links"), and its mutant was reported as a survivor.
func TestCopyTreeLinksTheToolCacheFromARelativeRoot(t *testing.T) {
	repo := t.TempDir()
	git := exec.Command("git", "init", "-q")
	git.Dir = repo
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, body := range map[string]string{".gitignore": "/.tools/\n", "main.go": "package main\n", ".tools/marker": "tools\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(repo)
	dst := t.TempDir()
	if err := CopyTree(".", dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, ".tools", "marker")); err != nil || string(b) != "tools\n" {
		t.Fatalf("the copy's .tools does not lead to the checkout's: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "main.go")); err != nil {
		t.Fatalf("the copy lacks the checkout's files: %v", err)
	}
}
