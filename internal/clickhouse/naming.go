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
func quoteString(s string) string { return "'" + escapeString(s) + "'" }

// escapeString is s as a ClickHouse string literal carries it, between its quotes.
func escapeString(s string) string { return stringEscaper.Replace(s) }

var stringEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

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

// Rill's admin service (admin/provisioner/clickhousestatic) names a resource's objects its own way;
// a resource it provisioned keeps those names when this provider adopts it (an import: see
// adoptRill in provision.go). Its rule, as of Rill's commit e2f71cb (checked 2026-12-01): the user is
// rill_<ID with every character outside [A-Za-z0-9] removed> (case kept), and the database is
// rill[_<org>][_<project>]_<ID>, each part with the same characters removed (an org or project
// annotation that is present adds its part even when empty), cut to 63 characters, '_' trimmed from
// the end, lowercased. The org and project come from the organization_name and project_name
// annotations only.

const rillNameLen = 63

// rillAlnum removes every character outside [A-Za-z0-9] from s (Rill's [^a-zA-Z0-9]+ removed).
func rillAlnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// rillUserName is the user Rill's admin service creates for resourceID.
func rillUserName(resourceID string) string { return namePrefix + rillAlnum(resourceID) }

// rillDatabaseName is the database Rill's admin service creates for resourceID with annotations.
func rillDatabaseName(resourceID string, annotations map[string]string) string {
	name := "rill"
	for _, key := range []string{"organization_name", "project_name"} {
		if v, ok := annotations[key]; ok {
			name += "_" + rillAlnum(v)
		}
	}
	name += "_" + rillAlnum(resourceID)
	if len(name) > rillNameLen {
		name = name[:rillNameLen]
	}
	return strings.ToLower(strings.TrimRight(name, "_"))
}

// rillMatch says how a database name relates to a resource ID under Rill's rule (rillDatabaseKind).
type rillMatch int

const (
	// rillNone: no org and project give this name for the ID.
	rillNone rillMatch = iota
	// rillWhole: the name ends with the whole ID: it is this resource's.
	rillWhole
	// rillCut: the name was cut to 63 characters inside the ID and keeps at least minRillIDChars of
	// it: this resource's, unless another name matches too.
	rillCut
	// rillUndetermined: the name was cut so that at most minRillIDChars-1 characters of the ID (maybe
	// none) are left: it may be this resource's or another's, and its name cannot tell.
	rillUndetermined
)

// minRillIDChars is how much of the ID a cut name must keep to count as the resource's: 8 hex digits
// of a UUID, one chance in 4 billion that another resource's cut name ends the same way. Fewer (a
// long org and project name) could as well be a cut project name.
const minRillIDChars = 8

// rillDatabaseKind reports whether rillDatabaseName(resourceID, annotations) is name for some
// annotations, and how sure that is (rillMatch). TestRillDatabaseKindKnowsEveryNameOfRillsRule holds
// it to rillDatabaseName.
func rillDatabaseKind(resourceID, name string) rillMatch {
	id := strings.ToLower(rillAlnum(resourceID))
	if id == "" || len(name) > rillNameLen || !strings.HasPrefix(name, namePrefix) || strings.HasSuffix(name, "_") ||
		strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return rillNone
	}
	parts := strings.Split(name[len(namePrefix):], "_") // [org] [project] id, the id maybe cut
	last := parts[len(parts)-1]
	switch {
	case len(parts) > 3:
		return rillNone
	case last == id:
		return rillWhole
	case len(name) == rillNameLen && last != "" && strings.HasPrefix(id, last) && len(last) >= minRillIDChars:
		return rillCut
	case len(name) == rillNameLen && strings.HasPrefix(id, last):
		return rillUndetermined // the ID cut after a few characters, or a project name that starts alike
	case len(parts) < 3 && len(name) >= rillNameLen-2:
		// Cut before the ID, then its separators (up to two, after empty parts) trimmed.
		return rillUndetermined
	}
	return rillNone
}

// isUserOf reports whether name is a user name of resourceID's: ours, or Rill's for an adopted one.
func isUserOf(resourceID, name string) bool {
	return name == userName(resourceID) || name == rillUserName(resourceID)
}

// isDatabaseOf reports whether name may be the database of resourceID, whose user is user
// (recordedUser): one of ours (ownsDatabaseName), or, only for a resource adopted from Rill's admin
// service (its user is Rill's), one Rill's rule could give it (adoptRill records the one it found).
// It guards the statements against state that names someone else's database. Rill's rule alone is no
// such guard: a name cut to 63 characters before the ID (rillUndetermined) is one it could give any
// ID, so a resource of ours would otherwise drop another Rill resource's database its state named.
func isDatabaseOf(resourceID, user, name string) bool {
	if ownsDatabaseName(resourceID, name) {
		return true
	}
	return isRillUser(resourceID, user) && rillDatabaseKind(resourceID, name) != rillNone
}

// isRillUser reports whether user is the name Rill's admin service gives resourceID's user, and not
// ours: the mark of a resource adopted from Rill's admin service.
func isRillUser(resourceID, user string) bool {
	return user == rillUserName(resourceID) && user != userName(resourceID)
}
