// Package waits words the error of a wait that its context ended: what it waited for, for how long,
// and what ended it (the operation's deadline, from its `timeouts`, or a cancel such as Ctrl-C). Every
// wait in the provider is bounded by its operation's context, and its error says these three things
// the same way, so that a user reading one knows which timeout to raise or which other operation to
// look at.
package waits

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Elapsed is how long a wait that began at start has lasted, rounded as messages show it.
func Elapsed(start time.Time) time.Duration {
	return time.Since(start).Round(100 * time.Millisecond)
}

// Until names what ended a wait whose context ended with err.
func Until(err error) string {
	if errors.Is(err, context.Canceled) {
		return "the operation was canceled"
	}
	return "the operation's deadline"
}

// Ended is the error of a wait, begun at start, for what (a phrase such as "the ledger X to open"),
// that ctx ended: "waited 1.2s for the ledger X to open, until the operation's deadline: context
// deadline exceeded". It wraps ctx.Err(). A wait whose deadline had passed before start did not wait,
// and says so: "waited 0s for X, until the operation's deadline" reads as a wait that X cut short
// (a `timeouts.read = "1ns"` was blamed on another operation opening the ledger).
func Ended(ctx context.Context, start time.Time, what string) error {
	err := ctx.Err()
	if PassedBefore(ctx, start) {
		return fmt.Errorf("did not wait for %s: the operation's deadline had passed before the wait began: %w", what, err)
	}
	return fmt.Errorf("waited %s for %s, until %s: %w", Elapsed(start), what, Until(err), err)
}

// PassedBefore reports whether ctx ended at a deadline that had passed at start: a wait begun then did
// not wait.
func PassedBefore(ctx context.Context, start time.Time) bool {
	deadline, ok := ctx.Deadline()
	return ok && errors.Is(ctx.Err(), context.DeadlineExceeded) && !deadline.After(start)
}
