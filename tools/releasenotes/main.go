// Command releasenotes prints the release notes of one version: the body of its CHANGELOG.md section,
// the lines under `## <version> (<date>)` up to the next `## ` heading, without the blank lines around
// them. The release workflow passes them to `goreleaser release --release-notes`, in place of the
// changelog goreleaser would make from the commits (.goreleaser.yml). It fails, saying why, when the
// version has no section or an empty one, so that a tag pushed before CHANGELOG.md's Unreleased
// entries were moved under its version publishes nothing, and when the tag is no version.
//
//	go run ./tools/releasenotes VERSION [CHANGELOG]   # VERSION as in the tag (v0.1.0) or without the v
package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/releasenotes VERSION [CHANGELOG]")
		os.Exit(2)
	}
	changelog := "CHANGELOG.md"
	if len(os.Args) == 3 {
		changelog = os.Args[2]
	}
	text, err := os.ReadFile(changelog)
	if err == nil {
		var out string
		if out, err = notes(string(text), os.Args[1]); err == nil {
			fmt.Print(out)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "releasenotes: %s: %v\n", changelog, err)
	os.Exit(1)
}

// releaseVersion is a tag's version, without its "v": <major>.<minor>.<patch>[-pre][+build].
var releaseVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)

// notes is the body of version's section of changelog, ending in a newline. The heading is
// "## <version>" or "## <version> (<date>)"; versions compare as strings, so 0.1.0 is not 0.1.0-rc1.
func notes(changelog, tag string) (string, error) {
	version := strings.TrimPrefix(tag, "v")
	if !releaseVersion.MatchString(version) {
		return "", fmt.Errorf("%s is not a release version (v<major>.<minor>.<patch>, as the tag must be)", tag)
	}
	var body []string
	found, fenced := false, false
	for _, line := range strings.Split(changelog, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced // a "## " line in a code block is no heading
		}
		if strings.HasPrefix(line, "## ") && !fenced {
			if found {
				break
			}
			fields := strings.Fields(line)
			found = len(fields) >= 2 && fields[1] == version && (len(fields) == 2 || strings.HasPrefix(fields[2], "("))
			continue
		}
		if found {
			body = append(body, strings.TrimRight(line, "\r"))
		}
	}
	if !found {
		return "", fmt.Errorf("no section \"## %s (<date>)\": move the Unreleased entries under it before tagging v%s", version, version)
	}
	text := strings.Trim(strings.Join(body, "\n"), "\n")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the section \"## " + version + "\" is empty")
	}
	return text + "\n", nil
}
