package main

import (
	"strings"
	"testing"
)

// notes prints a version's section of the changelog, without the blank lines around it, and refuses a
// version without a section or with an empty one (a tag pushed before the Unreleased entries were
// moved under its version), and a tag that is no version.
func TestNotesAreTheVersionsSection(t *testing.T) {
	const changelog = "# Changelog\n\nIntro.\n\n## Unreleased\n\n- next\n\n## 0.2.0 (2026-02-01)\n\n### Added\n\n- b\n\n```sh\n## 0.1.0 in a code block\n```\n\n- c\n\n" +
		"## 0.1.0 (2026-01-01)\n\n- a\n\n## \n\n## 0.1.0-rc1 (2025-12-20)\n\n- rc\n\n## 0.0.9 (2025-12-01)\n\n## 0.0.8 (2025-11-01)\n\n- old\n"
	for version, want := range map[string]string{
		"v0.2.0":     "### Added\n\n- b\n\n```sh\n## 0.1.0 in a code block\n```\n\n- c\n",
		"0.1.0":      "- a\n",
		"v0.1.0-rc1": "- rc\n",
		"v0.0.8":     "- old\n",
	} {
		if got, err := notes(changelog, version); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", version, got, err, want)
		}
	}
	for version, why := range map[string]string{
		"v0.3.0":      "no section",
		"v0.0.9":      "is empty",
		"v0.2":        "is not a release version",
		"vUnreleased": "is not a release version",
	} {
		if got, err := notes(changelog, version); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %q, %v; want a failure saying %q", version, got, err, why)
		}
	}
}
