#!/usr/bin/env bash
# Print the release notes of one version: the body of its CHANGELOG.md section, the lines under
# `## <version> (<date>)` up to the next `## ` heading, without leading or trailing blank lines.
# The release workflow passes this to `goreleaser release --release-notes`, in place of the changelog
# goreleaser would make from the commits (.goreleaser.yml); before, the GitHub release had no notes.
# Fails (exit 1, saying why) when the version has no section or an empty one, so that a tag pushed
# before CHANGELOG.md's Unreleased entries were moved under its version publishes nothing.
#
# Usage:
#   scripts/release-notes.sh VERSION [CHANGELOG]   # VERSION as in the tag (v0.1.0) or without the v
set -euo pipefail

case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 0 ;;
  "") echo "usage: $0 VERSION [CHANGELOG]" >&2; exit 2 ;;
esac
version="${1#v}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
  echo "$0: $1 is not a release version (v<major>.<minor>.<patch>, as the tag must be)" >&2
  exit 2
fi
changelog="${2:-$(dirname "${BASH_SOURCE[0]}")/../CHANGELOG.md}"

# Headings are "## 0.1.0 (2026-01-31)"; the version is compared as a string, so 0.1.0 is not 0.1.0-rc1.
notes="$(awk -v v="$version" '
  /^## / { if (found) exit; if ($2 == v && (NF == 2 || $3 ~ /^\(/)) { found = 1; next } }
  found { print }
  END { if (!found) exit 3 }' "$changelog")" || {
  rc=$?
  if [[ $rc -eq 3 ]]; then
    echo "$0: $changelog has no section \"## $version (<date>)\": move the Unreleased entries under it before tagging v$version" >&2
  fi
  exit 1
}
# Trim the blank lines around the section's body.
notes="$(printf '%s\n' "$notes" | awk 'NF { for (; blank > 0; blank--) print ""; print; seen = 1; next } seen { blank++ }')"
if [[ -z "$notes" ]]; then
  echo "$0: the section \"## $version\" of $changelog is empty" >&2
  exit 1
fi
printf '%s\n' "$notes"
