package ci

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records whether the test was skipped or failed, and stops there as
// the real ones do (runtime.Goexit is replaced by a panic the caller recovers).
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped, r.msg = true, toString(args)
	panic(stop{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	panic(stop{})
}

func toString(args []any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s
		}
	}
	return ""
}

func outcome(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); !ok {
					panic(p)
				}
			}
		}()
		Skip(r, "no %s", "PostgreSQL")
	}()
	return r
}

func TestSkipsOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	if r := outcome(t); !r.skipped || r.failed || r.msg != "no PostgreSQL" {
		t.Fatalf("outside CI: skipped=%v failed=%v msg=%q", r.skipped, r.failed, r.msg)
	}
}

func TestFailsInCIUnlessShort(t *testing.T) {
	t.Setenv("CI", "true")
	r := outcome(t)
	if testing.Short() {
		if !r.skipped || r.failed {
			t.Fatalf("CI=true with -short must skip: skipped=%v failed=%v", r.skipped, r.failed)
		}
		return
	}
	if !r.failed || r.skipped || !strings.Contains(r.msg, "rather than skip") {
		t.Fatalf("CI=true must fail: skipped=%v failed=%v msg=%q", r.skipped, r.failed, r.msg)
	}
}
