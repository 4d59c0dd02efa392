package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	begin = "<!-- bench:results:begin (written by scripts/bench.sh --update) -->"
	end   = "<!-- bench:results:end -->"
)

func TestReplaceBetweenMarkers(t *testing.T) {
	doc := "# Title\n\nintro\n\n" + begin + "\nold run\nold table\n" + end + "\n\nafter\n"
	got, err := Replace([]byte(doc), "bench", []byte("new run\n| a |\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nintro\n\n" + begin + "\nnew run\n| a |\n" + end + "\n\nafter\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// Updating again with the same results changes nothing: the file never grows run after run.
	again, err := Replace(got, "bench", []byte("new run\n| a |"))
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != want {
		t.Fatalf("second update: got\n%s\nwant\n%s", again, want)
	}
}

func TestReplaceOtherNameLeftAlone(t *testing.T) {
	k8s := "<!-- bench-kubernetes:results:begin (written by scripts/bench-kubernetes.sh --update) -->"
	doc := begin + "\nA\n" + end + "\n" + k8s + "\nB\n<!-- bench-kubernetes:results:end -->\n"
	got, err := Replace([]byte(doc), "bench-kubernetes", []byte("C\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := begin + "\nA\n" + end + "\n" + k8s + "\nC\n<!-- bench-kubernetes:results:end -->\n"; string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReplaceRefusesDamagedMarkers(t *testing.T) {
	for name, tc := range map[string]struct{ doc, results, wantErr string }{
		"no markers":      {doc: "# Title\n", wantErr: "not found"},
		"no begin":        {doc: "x\n" + end + "\n", wantErr: "results:begin ... -->\" not found"},
		"no end":          {doc: begin + "\nx\n", wantErr: "results:end -->\" not found"},
		"begin twice":     {doc: begin + "\n" + begin + "\n" + end + "\n", wantErr: "stands twice (lines 1 and 2)"},
		"end twice":       {doc: begin + "\n" + end + "\n" + end + "\n", wantErr: "stands twice (lines 2 and 3)"},
		"end first":       {doc: end + "\nx\n" + begin + "\n", wantErr: "comes before"},
		"marker in input": {doc: begin + "\n" + end + "\n", results: "x\n" + end + "\n", wantErr: "the results hold the marker line"},
		// A marker inside a line (as in the corrupted BENCHMARKS-kubernetes.md) is no marker.
		"marker mid-line": {doc: "a" + begin + "\n" + end + "\n", wantErr: "not found"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Replace([]byte(tc.doc), "bench", []byte(tc.results+"new\n"))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.wantErr)
			}
		})
	}
}

func TestRunWritesFileOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	bad := filepath.Join(dir, "bad.md")
	badDoc := "# no markers here\n"
	if err := os.WriteFile(good, []byte(begin+"\nold\n"+end+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(badDoc), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := run("bench", good, strings.NewReader("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(good); string(b) != begin+"\nnew\n"+end+"\n" {
		t.Fatalf("good.md: %q", b)
	}
	if st, _ := os.Stat(good); st.Mode().Perm() != 0o640 {
		t.Fatalf("good.md mode %v, want 0640", st.Mode().Perm())
	}

	if err := run("bench", bad, strings.NewReader("new\n")); err == nil || !strings.Contains(err.Error(), "bad.md") {
		t.Fatalf("bad.md: got %v, want an error naming the file", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != badDoc {
		t.Fatalf("bad.md changed (appended?): %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// The repository's own benchmark documents keep one pair of markers each, so `--update` works on them.
func TestRepositoryBenchmarkDocuments(t *testing.T) {
	for file, name := range map[string]string{
		"BENCHMARKS.md":            "bench",
		"BENCHMARKS-kubernetes.md": "bench-kubernetes",
	} {
		doc, err := os.ReadFile(filepath.Join("..", "..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Replace(doc, name, []byte("x\n")); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}
