package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
