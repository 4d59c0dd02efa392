package provisioner

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// DuplicateKeyMessage is the warning for a key given twice in one JSON object of a set. encoding/json
// applies the last value over the earlier one without a word (see specAsRillReadsIt), and Rill's admin
// service reads the set with it, so this provider reads it so too (a set Rill accepts is accepted); the
// warning points at the key.
const DuplicateKeyMessage = "duplicate key: the last value is used, as Rill's admin service uses it (inside a spec, a later object or list is applied over the earlier one, and an earlier value of the wrong type is still an error); remove the one you do not mean"

// duplicateKeyWarnings returns a warning for every key given more than once in an object of std, a
// standard JSON object (the set after hujson.Standardize), each named once by its path. A key of the
// set itself is a provisioner name, warned about with an empty field. The set's nesting is bounded by
// checkSetText, so the recursion is too.
func duplicateKeyWarnings(std []byte) []SetWarning {
	dec := json.NewDecoder(bytes.NewReader(std))
	// Numbers as text: one too large for a float64 (1e400, which Rill's admin service accepts in a
	// field it ignores) ended the walk, and the duplicates after it went unreported.
	dec.UseNumber()
	var out []SetWarning
	var walk func(top bool, provisioner, field string) bool
	walk = func(top bool, provisioner, field string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := kt.(string)
				p, f := provisioner, joinPath(field, key)
				if top {
					p, f = key, "" // the set's own keys are provisioner names
				}
				if seen[key]++; seen[key] == 2 {
					out = append(out, SetWarning{Provisioner: p, Field: f, Message: DuplicateKeyMessage})
				}
				if !walk(false, p, f) {
					return false
				}
			}
			_, err = dec.Token() // '}'
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(false, provisioner, field+"["+strconv.Itoa(i)+"]") {
					return false
				}
			}
			_, err = dec.Token() // ']'
			return err == nil
		}
		return true
	}
	walk(true, "", "")
	return out
}
