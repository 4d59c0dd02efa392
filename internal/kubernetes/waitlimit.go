package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// waitLimit bounds a wait by the spec's own limit (timeout_seconds) and by the caller's context, and
// tells afterwards which one ended it: the caller's context may carry Terraform's timeouts.create or
// timeouts.delete, Create's cleanup deadline, or an interrupt, and blaming timeout_seconds for those
// sends the user to the wrong setting.
type waitLimit struct {
	parent context.Context
	start  time.Time
	limit  time.Duration
	name   string // how the spec's limit is spelled in messages, e.g. "timeout_seconds=600"
}

// newWaitLimit returns ctx bounded by limit as well as by parent.
func newWaitLimit(parent context.Context, limit time.Duration, name string) (context.Context, context.CancelFunc, *waitLimit) {
	ctx, cancel := context.WithTimeout(parent, limit)
	return ctx, cancel, &waitLimit{parent: parent, start: time.Now(), limit: limit, name: name}
}

// specWaitLimit bounds a wait of p's (AwaitReady, Deprovision) by the spec's timeout_seconds as well
// as by parent.
func (p *Provisioner) specWaitLimit(parent context.Context) (context.Context, context.CancelFunc, *waitLimit) {
	return newWaitLimit(parent, time.Duration(p.spec.TimeoutSeconds)*time.Second, fmt.Sprintf("timeout_seconds=%d", p.spec.TimeoutSeconds))
}

// reason says how long the wait took and which limit ended it.
func (w *waitLimit) reason() string {
	elapsed := time.Since(w.start).Round(time.Millisecond)
	if errors.Is(w.parent.Err(), context.Canceled) {
		return fmt.Sprintf("after %s the wait was canceled (interrupted, or the operation ended)", elapsed)
	}
	if dl, ok := w.parent.Deadline(); ok && !dl.After(w.start.Add(w.limit)) {
		return fmt.Sprintf("after %s the operation's own deadline ended the wait (the resource's timeouts block, or the time given to clean up a failed create), before %s", elapsed, w.name)
	}
	return fmt.Sprintf("after %s %s ended the wait", elapsed, w.name)
}
