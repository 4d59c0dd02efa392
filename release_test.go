package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The snapshot's version is in every archive's name, and a user who installs the archives from a
// filesystem mirror must pin it with an exact version constraint (a pre-release is chosen by no
// other). Terraform and OpenTofu read the version from the name lowercased: goreleaser's default
// template, "{{ .Version }}-SNAPSHOT-{{ .ShortCommit }}", made archives that Terraform listed as
// 0.0.0-snapshot-... while `version = "0.0.0-SNAPSHOT-..."`, copied from the name, matched nothing
// ("no available releases match the given constraints"). So .goreleaser.yml sets a lowercase
// template, and the getting-started guide's pin is the name's version as it is.
func TestReleaseSnapshotVersionIsWhatTerraformReads(t *testing.T) {
	raw, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^snapshot:\n(?:\s*#.*\n)*\s+version_template:\s*"([^"]*)"`).FindSubmatch(raw)
	if m == nil {
		t.Fatal(`.goreleaser.yml has no snapshot.version_template: goreleaser's default puts "SNAPSHOT" in the version, which Terraform reads lowercased`)
	}
	literal := regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(string(m[1]), "")
	if literal != strings.ToLower(literal) {
		t.Fatalf("snapshot.version_template %q has capitals outside its template actions: Terraform reads the archive's version lowercased, "+
			"so the version in its name would not be the constraint that selects it", m[1])
	}
	if !strings.Contains(string(m[1]), "-") {
		t.Fatalf("snapshot.version_template %q is no pre-release: a snapshot must never look like a release", m[1])
	}
}

// Two checkouts of one commit make the same archives: the binary's time is the commit's
// (builds[].mod_timestamp), and so is every file's beside it in the zips (archives[].files[].info),
// with a fixed mode. goreleaser's default files (README, LICENSE, CHANGELOG) carried their checkout's
// time and mode (the umask's), so the zips and SHA256SUMS changed from one clone to the next (found by
// reviews that built the release twice: two clones, then two umasks, 022 and 002).
func TestReleaseArchivesCarryTheCommitsTime(t *testing.T) {
	cfg := readGoreleaserConfig(t)
	for _, b := range cfg.Builds {
		if b.ModTimestamp != "{{ .CommitTimestamp }}" {
			t.Errorf("a build's mod_timestamp is %q, want the commit's", b.ModTimestamp)
		}
	}
	for _, a := range cfg.Archives {
		if len(a.Files) == 0 {
			t.Errorf("an archive lists no files: goreleaser then adds README, LICENSE and CHANGELOG with their checkout's time")
		}
		for _, f := range a.Files {
			if f.Info.MTime != "{{ .CommitDate }}" {
				t.Errorf("archive file %q has mtime %q, want the commit's ({{ .CommitDate }})", f.Src, f.Info.MTime)
			}
			if f.Info.Mode != float64(0o644) {
				t.Errorf("archive file %q has mode %v, want 0o644 (else the checkout's umask decides it)", f.Src, f.Info.Mode)
			}
		}
	}
}

// goreleaserConfig is what the release tests read of .goreleaser.yml.
type goreleaserConfig struct {
	ProjectName string `json:"project_name"`
	Builds      []struct {
		Ldflags      []string `json:"ldflags"`
		ModTimestamp string   `json:"mod_timestamp"`
	} `json:"builds"`
	Archives []struct {
		NameTemplate string `json:"name_template"`
		Files        []struct {
			Src  string `json:"src"`
			Info struct {
				MTime string `json:"mtime"`
				Mode  any    `json:"mode"`
			} `json:"info"`
		} `json:"files"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		ExtraFiles   []struct {
			Glob         string `json:"glob"`
			NameTemplate string `json:"name_template"`
		} `json:"extra_files"`
	} `json:"checksum"`
	Changelog struct {
		Disable any `json:"disable"`
	} `json:"changelog"`
}

func readGoreleaserConfig(t *testing.T) goreleaserConfig {
	t.Helper()
	raw, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// renderTemplate fills the goreleaser template actions of s from fields ("Version" for
// {{ .Version }}), failing on any other action.
func renderTemplate(t *testing.T, s string, fields map[string]string) string {
	t.Helper()
	out := regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`).ReplaceAllStringFunc(s, func(action string) string {
		name := regexp.MustCompile(`\w+`).FindString(action)
		if v, ok := fields[name]; ok {
			return v
		}
		return action
	})
	if strings.Contains(out, "{{") {
		t.Fatalf("cannot render %q: an action other than %v", s, fields)
	}
	return out
}

// `make release-snapshot` leaves in dist/ every file its SHA256SUMS list, so that `sha256sum -c` of
// them (the getting-started guide's check) passes and proves every archive there. The sums list the
// registry manifest (checksum.extra_files), which goreleaser only uploads with a release and writes
// nowhere: dist/ lacked it, the check failed on it, and the guide said to pass --ignore-missing, which
// also passed a dist/ missing an archive. The target copies it beside the sums. Run here with a stand-in
// goreleaser that writes what the real one writes (one archive and the sums, named from .goreleaser.yml).
func TestReleaseSnapshotWritesEveryFileItsSumsList(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	cfg := readGoreleaserConfig(t)
	fields := map[string]string{"ProjectName": cfg.ProjectName, "Version": "0.0.0-snapshot-abc1234", "Os": "linux", "Arch": "amd64"}
	if len(cfg.Archives) != 1 || len(cfg.Checksum.ExtraFiles) == 0 {
		t.Fatalf(".goreleaser.yml: want one archive and the manifest among the checksum's extra files, got %+v", cfg)
	}
	dir := t.TempDir()
	sums := map[string][]byte{renderTemplate(t, cfg.Archives[0].NameTemplate, fields) + ".zip": []byte("an archive")}
	for _, f := range cfg.Checksum.ExtraFiles {
		b, err := os.ReadFile(f.Glob)
		if err != nil {
			t.Fatalf("checksum.extra_files: %v", err)
		}
		sums[renderTemplate(t, f.NameTemplate, fields)] = b
	}
	sumsName := renderTemplate(t, cfg.Checksum.NameTemplate, fields)
	// The stand-in writes the archive and the sums of every file, as goreleaser does.
	var lines, stub strings.Builder
	stub.WriteString("#!/bin/sh\nset -e\nrm -rf dist && mkdir dist\n")
	fmt.Fprintf(&stub, "printf 'an archive' > 'dist/%s'\n", renderTemplate(t, cfg.Archives[0].NameTemplate, fields)+".zip")
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&lines, "%x  %s\n", sha256.Sum256(sums[name]), name)
	}
	fmt.Fprintf(&stub, "cat > 'dist/%s' <<'SUMS'\n%sSUMS\n", sumsName, lines.String())
	writeExec := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExec(filepath.Join(dir, "goreleaser"), stub.String())
	writeExec(filepath.Join(dir, "scripts", "goreleaser.sh"), "#!/bin/sh\necho '"+filepath.Join(dir, "goreleaser")+"'\n")
	for _, f := range append([]string{"GNUmakefile"}, cfg.Checksum.ExtraFiles[0].Glob) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeExec(filepath.Join(dir, f), string(b))
	}
	cmd := exec.Command(mk, "release-snapshot")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-snapshot: %v\n%s", err, out)
	}
	for name, want := range sums {
		got, err := os.ReadFile(filepath.Join(dir, "dist", name))
		if err != nil {
			t.Errorf("%s lists %s, which make release-snapshot did not write into dist/: %v", sumsName, name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("dist/%s is not the file %s lists (%q, want %q)", name, sumsName, got, want)
		}
	}
}

// The release's notes are its version's section of CHANGELOG.md. .goreleaser.yml had the changelog
// disabled (notes "from CHANGELOG.md, written by hand"), and nothing passed them: the GitHub release
// had no notes at all. The workflow now writes the tag's section with tools/releasenotes and
// passes it as --release-notes, which goreleaser reads only when the changelog is not disabled.
func TestReleaseNotesAreTheTagsChangelogSection(t *testing.T) {
	cfg := readGoreleaserConfig(t)
	if d := fmt.Sprint(cfg.Changelog.Disable); d != "<nil>" && d != "false" {
		t.Errorf(".goreleaser.yml: changelog.disable is %s: goreleaser then skips the pipe that reads --release-notes, and the release has no notes", d)
	}
	raw, err := os.ReadFile(".github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	notesFile, released := "", false
	for _, job := range wf.Jobs {
		for _, step := range job.Steps {
			if m := regexp.MustCompile(`go run \./tools/releasenotes "\$GITHUB_REF_NAME" > (\S+)`).FindStringSubmatch(step.Run); m != nil {
				notesFile = m[1]
			}
			if strings.Contains(step.Run, `" release `) {
				released = true
				if notesFile == "" || !strings.Contains(step.Run, "--release-notes "+notesFile) {
					t.Errorf("release.yml runs %q without --release-notes of the file an earlier step writes with go run ./tools/releasenotes \"$GITHUB_REF_NAME\"", strings.TrimSpace(step.Run))
				}
			}
		}
	}
	if !released {
		t.Error("release.yml: no step runs goreleaser release")
	}
}

// The workflows run scripts, make targets and files of this repository: each must exist (a renamed
// script or target fails only when the workflow runs, for the release workflow on a tag).
func TestWorkflowsReferToWhatExists(t *testing.T) {
	makefile, err := os.ReadFile("GNUmakefile")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(".github/workflows/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?:^|[\s"'(])(scripts/[\w./-]+)`).FindAllStringSubmatch(string(raw), -1) {
			if st, err := os.Stat(m[1]); err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("%s runs %s, which is not an executable file here", f, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`\bmake ([\w-]+)`).FindAllStringSubmatch(string(raw), -1) {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `:`).Match(makefile) {
				t.Errorf("%s runs make %s, which GNUmakefile does not define", f, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`go-version-file:\s*(\S+)`).FindAllStringSubmatch(string(raw), -1) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s reads the Go version from %s: %v", f, m[1], err)
			}
		}
	}
}
