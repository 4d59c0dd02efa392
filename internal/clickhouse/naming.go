package clickhouse

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Names of the objects a resource owns on the ClickHouse server.
//
// The database is rill_<org>_<project>_<id> and the user rill_<id>, where <id> is the resource ID
// part described at idPart. Every name is made of [a-z0-9_] only, so nothing that came from an
// annotation can reach SQL as anything but a plain identifier (and identifiers are quoted besides).

// maxNameLen is the longest database or user name we generate.
const maxNameLen = 63

const namePrefix = "rill_"

// Annotation keys that name the organization and the project. The first key present with a non-empty
// value wins; the *_name keys are the ones the Terraform layer sets, the short ones are accepted for
// annotations written by hand.
var (
	orgAnnotationKeys     = []string{"organization_name", "organization"}
	projectAnnotationKeys = []string{"project_name", "project"}
)

// maxReadableIDLen caps the readable part of an ID that is not a canonical UUID (see idPart).
const maxReadableIDLen = 24

var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// sanitize lowercases s, turns every rune outside [a-z0-9_] into '_', collapses runs of '_' and trims
// '_' from both ends. The result may be empty.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	lastUnderscore := true // drops leading '_'
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			lastUnderscore = false
			continue
		}
		if !lastUnderscore {
			b.WriteByte('_')
			lastUnderscore = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// idPart returns the part of the names that identifies the resource. It is never truncated by
// databaseName, and distinct IDs always give distinct parts that no other ID's part can end with:
//
//   - a canonical lowercase UUID (what the provider generates) keeps its 36 characters with '-' as '_';
//   - any other ID becomes its sanitized form (at most 24 characters, possibly empty) followed by '_'
//     and 16 hex digits of the SHA-256 of the raw ID, because sanitizing alone loses information
//     ("A-b", "a_b" and "a b" would collide).
//
// The two forms differ at a fixed position from the end ('_' 13 characters from the end for a UUID,
// a hex digit there for a hash), so a database name's tail identifies its resource.
func idPart(id string) string {
	if canonicalUUID.MatchString(id) {
		return strings.ReplaceAll(id, "-", "_")
	}
	sum := sha256.Sum256([]byte(id))
	hash := hex.EncodeToString(sum[:8])
	readable := sanitize(id)
	if len(readable) > maxReadableIDLen {
		readable = strings.TrimRight(readable[:maxReadableIDLen], "_")
	}
	if readable == "" {
		return hash
	}
	return readable + "_" + hash
}

// userName returns the ClickHouse user of a resource: rill_<id part>.
func userName(resourceID string) string {
	return namePrefix + idPart(resourceID)
}

// annotation returns the first non-empty value among keys.
func annotation(annotations map[string]string, keys []string) string {
	for _, k := range keys {
		if v := annotations[k]; v != "" {
			return v
		}
	}
	return ""
}

// databaseName returns rill_<org>_<project>_<id part>, at most maxNameLen characters. The org and
// project parts are sanitized, dropped when empty, and shortened (fairly, the shorter keeping all it
// can) when the name would be too long; the id part is kept whole, which keeps the name unique.
func databaseName(resourceID string, annotations map[string]string) string {
	id := idPart(resourceID)
	org := sanitize(annotation(annotations, orgAnnotationKeys))
	project := sanitize(annotation(annotations, projectAnnotationKeys))

	// Room for the org and project parts, each followed by its '_' separator.
	room := maxNameLen - len(namePrefix) - len(id)
	parts := fitParts([]string{org, project}, room)

	var b strings.Builder
	b.WriteString(namePrefix)
	for _, p := range parts {
		b.WriteString(p)
		b.WriteByte('_')
	}
	b.WriteString(id)
	return b.String()
}

// fitParts drops empty parts and shortens the others so that the sum of len(part)+1 stays within room.
// Space is shared evenly; a part shorter than its share leaves the rest to the others.
func fitParts(parts []string, room int) []string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	total := 0
	for _, p := range kept {
		total += len(p) + 1
	}
	if total <= room {
		return kept
	}
	// Water-filling: find the largest cap such that sum(min(len, cap)+1) <= room.
	limit := 0
	for c := 1; ; c++ {
		sum := 0
		grown := false
		for _, p := range kept {
			sum += min(len(p), c) + 1
			if len(p) >= c {
				grown = true
			}
		}
		if sum > room || !grown {
			break
		}
		limit = c
	}
	var out []string
	for _, p := range kept {
		if len(p) > limit {
			p = strings.TrimRight(p[:limit], "_")
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ownsDatabaseName reports whether name is a database name that databaseName could have produced for
// resourceID (with any annotations). It guards Deprovision against state that names someone else's
// database.
func ownsDatabaseName(resourceID, name string) bool {
	if len(name) > maxNameLen || sanitize(name) != name {
		return false
	}
	id := idPart(resourceID)
	return name == namePrefix+id || (strings.HasPrefix(name, namePrefix) && strings.HasSuffix(name, "_"+id) && len(name) > len(namePrefix)+len(id)+1)
}

// quoteIdent quotes a ClickHouse identifier with backticks, escaping backslashes and backticks.
func quoteIdent(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "`", "\\`")
	return "`" + r.Replace(s) + "`"
}

// quoteString quotes a ClickHouse string literal with single quotes, escaping backslashes and quotes.
func quoteString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}

// onCluster returns " ON CLUSTER `cluster`" or "" when cluster is empty.
func onCluster(cluster string) string {
	if cluster == "" {
		return ""
	}
	return " ON CLUSTER " + quoteIdent(cluster)
}

const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// passwordLen is the length of generated passwords: 40 characters of 62 symbols, about 238 bits.
const passwordLen = 40

// newPassword returns a random alphanumeric password from crypto/rand, without modulo bias.
func newPassword() (string, error) {
	out := make([]byte, 0, passwordLen)
	buf := make([]byte, 64)
	for len(out) < passwordLen {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generating a password: %w", err)
		}
		for _, c := range buf {
			// 248 = 4*62: bytes at or above it would favour the first symbols.
			if c < 248 && len(out) < passwordLen {
				out = append(out, passwordAlphabet[int(c)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}
