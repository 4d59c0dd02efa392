package provisioner

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on a provisioner set, checked before any JSON parser sees it. The JSON parsers recurse per
// nesting level (hujson without a bound: a set nested a million levels deep overflowed the stack and
// killed the plugin), and a real set is a few kilobytes nested at most five levels deep.
const (
	// MaxSetBytes is the largest provisioner set accepted.
	MaxSetBytes = 1 << 20
	// MaxSetDepth is the deepest nesting of objects and lists accepted in a provisioner set.
	MaxSetDepth = 32
)

// checkSetText refuses a set that is too large, nested too deeply, or not valid UTF-8 (raw bytes, or
// a \u escape that is half of a surrogate pair), saying where. encoding/json would otherwise replace
// such bytes with U+FFFD without a word, so that a host "http://h\xff1:9091" became another host.
// It scans strings and comments the way hujson reads them; what it does not understand is left to
// the parser, which reports it.
func checkSetText(s string) error {
	if len(s) > MaxSetBytes {
		return fmt.Errorf("provisioner set is %d bytes; at most %d are accepted", len(s), MaxSetBytes)
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Errorf("provisioner set is not valid UTF-8 at %s: byte 0x%02x begins no UTF-8 character", position(s, i), s[i])
		}
		i += n
	}
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			end, err := scanString(s, i)
			if err != nil {
				return err
			}
			i = end
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			if end := strings.IndexByte(s[i:], '\n'); end >= 0 {
				i += end
			} else {
				i = len(s)
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if end := strings.Index(s[i+2:], "*/"); end >= 0 {
				i += end + 4
			} else {
				i = len(s) // unterminated: the parser says so
			}
		case c == '{' || c == '[':
			depth++
			if depth > MaxSetDepth {
				return fmt.Errorf("provisioner set is nested more than %d levels deep at %s", MaxSetDepth, position(s, i))
			}
			i++
		case c == '}' || c == ']':
			depth--
			i++
		default:
			i++
		}
	}
	return nil
}

// scanString checks the JSON string starting at s[start] (a '"') and returns the index after it.
func scanString(s string, start int) (int, error) {
	for i := start + 1; i < len(s); {
		switch s[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) && !strings.ContainsRune(`"\\/bfnrtu`, rune(s[i+1])) {
				return 0, fmt.Errorf("provisioner set has an escape JSON does not allow inside a string at %s: "+
					"a backslash must be followed by one of \" \\ / b f n r t u (write a backslash as \\\\)", position(s, i))
			}
			if i+1 < len(s) && s[i+1] == 'u' {
				r, ok := hex4(s, i+2)
				if !ok {
					return 0, fmt.Errorf("provisioner set has \\u without four hex digits inside a string at %s", position(s, i))
				}
				if r >= 0xD800 && r <= 0xDBFF {
					// A high surrogate must be followed by an escaped low one.
					if lo, ok2 := hex4(s, i+8); i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && ok2 && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 12
						continue
					}
					return 0, fmt.Errorf("provisioner set is not valid UTF-8 at %s: %s is half of a surrogate pair", position(s, i), s[i:i+6])
				}
				if r >= 0xDC00 && r <= 0xDFFF {
					return 0, fmt.Errorf("provisioner set is not valid UTF-8 at %s: %s is half of a surrogate pair", position(s, i), s[i:i+6])
				}
			}
			i += 2
		default:
			// The parser would refuse it too, quoting the whole string: a password that file() read
			// with its trailing newline, which the masking of a URL's password stops at.
			if s[i] < 0x20 {
				return 0, fmt.Errorf("provisioner set has a control character (byte 0x%02x) inside a string at %s: JSON strings "+
					"cannot hold one as it is (write a newline as \\n); a value read with file() may end with a newline: trimspace() it",
					s[i], position(s, i))
			}
			i++
		}
	}
	return len(s), nil // unterminated: the parser says so
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | (c - '0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | (c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | (c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// position renders a byte offset as "line L, column C (byte N)", columns counted in bytes from 1.
func position(s string, offset int) string {
	line := 1 + strings.Count(s[:offset], "\n")
	col := offset - strings.LastIndexByte(s[:offset], '\n')
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, offset)
}
