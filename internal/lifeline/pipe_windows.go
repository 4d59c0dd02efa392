package lifeline

import "os"

// readerGone never reports on Windows, where the watch is not used (Supported).
func readerGone(*os.File) func() bool { return func() bool { return false } }
