//go:build unix

package lifeline

import (
	"os"

	"golang.org/x/sys/unix"
)

// readerGone returns a check of whether f is a pipe whose reading end is closed (poll reports
// POLLERR on Linux, POLLHUP on the BSDs, for the writing end of a pipe without readers). A file that
// is no pipe (a terminal, /dev/null, a regular file) is never reported. The poll asks for POLLOUT,
// whose answer it ignores: macOS's poll watches only the events asked for (a kqueue filter for each;
// with none asked it registers none), so with no event asked it never reported the reader gone,
// where Linux reports POLLERR and POLLHUP whatever was asked.
func readerGone(f *os.File) func() bool {
	never := func() bool { return false }
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return never
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return never
	}
	return func() bool {
		gone := false
		_ = rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			n, err := unix.Poll(fds, 0)
			gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
		})
		return gone
	}
}
