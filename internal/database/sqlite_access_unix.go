//go:build unix

package database

import "golang.org/x/sys/unix"

// canWrite reports whether this process may write path. It asks the kernel (faccessat) rather
// than opening the file: closing any descriptor of the ledger would drop every SQLite lock this
// process holds on it (POSIX advisory locks, https://www.sqlite.org/howtocorrupt.html, 2.2).
func canWrite(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}
