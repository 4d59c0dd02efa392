//go:build !unix

package lifeline

import "os"

// readerGone never reports where poll(2) is not available (Windows, where the watch is not used:
// Supported; plan9, js, wasip1, which no release targets but on which the package still compiles).
func readerGone(*os.File) func() bool { return func() bool { return false } }
