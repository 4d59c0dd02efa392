package main

import (
	"os"
	"regexp"
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
	raw, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			ModTimestamp string `json:"mod_timestamp"`
		} `json:"builds"`
		Archives []struct {
			Files []struct {
				Src  string `json:"src"`
				Info struct {
					MTime string `json:"mtime"`
					Mode  any    `json:"mode"`
				} `json:"info"`
			} `json:"files"`
		} `json:"archives"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
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
