package waits

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"
)

// The error of an ended wait says what it waited for, for how long, and what ended it, and wraps
// the context's error.
func TestEndedSaysWhatHowLongAndUntilWhat(t *testing.T) {
	start := time.Now()
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelDeadline()
	<-deadline.Done()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, tc := range map[string]struct {
		ctx  context.Context
		want []string // regular expressions
		is   error
	}{
		"deadline": {deadline, []string{`^waited ([2-9]00ms|[1-4](\.[0-9])?s) for the ledger x to open, until the operation's deadline: context deadline exceeded$`}, context.DeadlineExceeded},
		"canceled": {canceled, []string{`^waited ([2-9]00ms|[1-4](\.[0-9])?s) for the ledger x to open, until the operation was canceled: context canceled$`}, context.Canceled},
	} {
		t.Run(name, func(t *testing.T) {
			err := Ended(tc.ctx, start, "the ledger x to open")
			if !errors.Is(err, tc.is) {
				t.Errorf("%v does not wrap %v", err, tc.is)
			}
			for _, w := range tc.want {
				// The 200ms wait lasts longer on a loaded machine: up to 4.9s is accepted; below 200ms is not.
				if got := err.Error(); !regexp.MustCompile(w).MatchString(got) {
					t.Errorf("got %q, want %s", got, w)
				}
			}
		})
	}
}

// A wait whose deadline had passed before it began did not wait: its error says so instead of
// "waited 0s ... until the operation's deadline", which read as a wait that what it named cut short
// (a `timeouts.read = "1ns"` blamed another operation for opening the ledger).
func TestEndedBeforeItBeganSaysItDidNotWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := Ended(ctx, time.Now(), "the ledger x to open")
	want := "did not wait for the ledger x to open: the operation's deadline had passed before the wait began: context deadline exceeded"
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}
