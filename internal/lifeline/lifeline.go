// Package lifeline ends the provider process when the Terraform process that started it is gone.
//
// Terraform starts a provider as a child process and talks to it over gRPC (go-plugin). When
// Terraform is killed (kill -9, a CI runner's timeout, an OOM kill), nothing tells the provider:
// go-plugin gives the child Terraform's own stdin, not a pipe, and the gRPC server just stops getting
// requests. Such an orphan used to live on for half an hour holding ledger connections. The kernel
// re-parents an orphan (to init or a subreaper), so a change of the parent process ID is the signal,
// on every Unix; polling it once a second costs nothing.
package lifeline

import (
	"os"
	"sync"
	"time"
)

// Watch calls onLost once, from its own goroutine, when the Terraform process that started this one
// is gone, checking every interval: when the parent of this process changes (the parent that started
// it died), or when this process's standard output is a pipe that nobody reads any more. Terraform
// reads a plugin's stdout for as long as the plugin runs, so a pipe without a reader says that it is
// gone even when the parent ID cannot: Terraform killed while this process was still starting, before
// Watch read the parent's ID, which then is already the orphan's new parent (init or a subreaper).
// stop ends the watch.
func Watch(interval time.Duration, onLost func()) (stop func()) {
	stdoutUnread := readerGone(os.Stdout)
	parent := getppid()
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if getppid() != parent || stdoutUnread() {
					onLost()
					return
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// getppid is os.Getppid; a test replaces it to play a parent's death without dying.
var getppid = os.Getppid

// Supported reports whether Watch can see the parent die on this platform (Windows keeps reporting
// the original parent's ID).
func Supported() bool { return supported }
