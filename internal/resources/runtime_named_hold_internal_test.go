package resources

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The Create and Delete of two instances of one named runtime in one apply take turns (namedInstances);
// the one that waits does so within its own operation's timeout, and its error says what it waited
// for. Before, it waited on a mutex for as long as the other took, past its own timeout.
func TestNamedInstancesWaitIsBoundedByTheOperationsTimeout(t *testing.T) {
	var n namedInstances
	unlock, err := n.hold(context.Background(), "id-1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // time to begin the wait: a deadline passed before it is no wait (waits.Ended)
	defer cancel()
	if _, err := n.hold(ctx, "id-1"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "runtime id-1") ||
		!strings.HasPrefix(err.Error(), "waited ") {
		t.Fatalf("a second hold of a held ID past its timeout: %v, want the deadline and what it waited for", err)
	}
	other, err := n.hold(ctx, "id-2") // another ID does not wait, whatever is held
	if err != nil {
		t.Fatalf("another ID: %v", err)
	}
	other()
	unlock()
	again, err := n.hold(context.Background(), "id-1")
	if err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
	again()
}
