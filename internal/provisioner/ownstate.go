package provisioner

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// A provisioner set entry keeps its name when its type is edited in place ("pool" was static, is now
// kubernetes), and a caller that has no record of the type that made a resource (the Terraform
// layer's private state written before it recorded the type) hands the new type the old type's
// Resource.State. Each type read another's state as an old one of its own, written before it
// recorded where it works: it looked where it would have put the resource, found nothing, and called
// it gone, so the resource was planned anew and the old one (its slots, its Deployment) was left to
// nobody. Only the provisioners know their own state's keys, and no provisioner may know another's
// (they do not import one another: DESIGN.md, "Layers"), so each registers the keys that are its
// alone here, beside its type, and every one refuses, through CheckStateOwner, a state that holds
// another type's.
var (
	ownKeysMu sync.RWMutex
	keyOwner  = map[string]string{}   // state key -> the provisioner type that alone writes it
	ownKeys   = map[string][]string{} // provisioner type -> its keys, in the order registered
	keyTypes  []string                // the types in ownKeys, sorted
)

// RegisterStateKeys records keys as keys of Resource.State that only provisioners of type typ write:
// where they made a resource (a ledger's identity, a namespace, a cluster's identity), which every
// state they return holds. It is called from the init function that registers typ. It panics, as
// Register does, on a key another type registered (a key two types write tells neither apart) and on a
// key of the contract's own (StateKey...), which every type may write.
func RegisterStateKeys(typ string, keys ...string) {
	if typ == "" || len(keys) == 0 {
		panic("provisioner: RegisterStateKeys needs a type and keys")
	}
	ownKeysMu.Lock()
	defer ownKeysMu.Unlock()
	for _, k := range keys {
		if slices.Contains(observationKeys, k) {
			panic(fmt.Sprintf("provisioner: state key %q is the contract's, not type %q's alone", k, typ))
		}
		if owner, ok := keyOwner[k]; ok && owner != typ {
			panic(fmt.Sprintf("provisioner: state key %q is already type %q's, so it cannot tell type %q's states apart", k, owner, typ))
		}
		if keyOwner[k] == "" {
			keyOwner[k] = typ
			ownKeys[typ] = append(ownKeys[typ], k)
		}
	}
	keyTypes = slices.Sorted(maps.Keys(ownKeys))
}

// CheckStateOwner returns a *ForeignStateError when r's State holds a key that RegisterStateKeys
// recorded for another type than typ (the type of the provisioner about to read it), and nil
// otherwise: for an empty State (an import, a create, the adoption of a named resource), for one that
// holds typ's own keys, and for one that holds no type's (which only the provisioner can judge). The
// error names the first type in sorted order whose keys the State holds, and the first of its keys
// as it registered them (the most telling: namespace before cluster_id), so it is the same on every run.
// Provisioners call it wherever they read a State they did not just make, before any other work.
func CheckStateOwner(typ string, r *Resource) error {
	if r == nil || len(r.State) == 0 {
		return nil
	}
	ownKeysMu.RLock()
	defer ownKeysMu.RUnlock()
	for _, other := range keyTypes {
		if other == typ {
			continue
		}
		for _, k := range ownKeys[other] {
			if _, ok := r.State[k]; ok {
				return &ForeignStateError{ResourceID: r.ID, ResourceType: r.Type, Writer: other, Key: k, Reader: typ}
			}
		}
	}
	return nil
}

// ForeignStateError says that a resource's state was written by a provisioner of another type than
// the one asked to read it (see CheckStateOwner). It wraps ErrIdentityMismatch, never
// ErrResourceNotFound: the resource may well exist where the other type made it, and a caller that
// took it for gone would plan it anew and leave the old one behind.
type ForeignStateError struct {
	ResourceID   string
	ResourceType ResourceType
	Writer       string // the type whose key the state records
	Key          string // that key
	Reader       string // the type that was asked to read it
}

func (e *ForeignStateError) Error() string {
	noun := string(e.ResourceType)
	if noun == "" {
		noun = "resource"
	}
	return fmt.Sprintf("%s %s: this %s's state was written by a %s provisioner (it records %s), and a %s provisioner cannot read, "+
		"update or free what a %s one made: the entry of the provisioner set that made it has another type now, under the same name. "+
		"Not treating the %s as deleted, and changing nothing. Put `\"type\": %q` (and its spec) back on that entry to refresh, "+
		"update or destroy it; to move it to a %s provisioner, add a new entry of that type and move the %s to it while the old "+
		"entry still has type %q (the %s is replaced: freed through the old entry, created through the new one); to forget it, "+
		"`terraform state rm` it, and what it holds stays where it was made",
		noun, e.ResourceID, noun, e.Writer, e.Key, e.Reader,
		e.Writer,
		noun, e.Writer,
		e.Reader, noun,
		e.Writer, noun)
}

// Unwrap returns ErrIdentityMismatch.
func (e *ForeignStateError) Unwrap() error { return ErrIdentityMismatch }
