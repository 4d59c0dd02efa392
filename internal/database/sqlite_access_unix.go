//go:build unix

package database

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// canWrite reports whether this process may write path. It asks the kernel (eaccess) rather
// than opening the file: closing any descriptor of the ledger would drop every SQLite lock this
// process holds on it (POSIX advisory locks, https://www.sqlite.org/howtocorrupt.html, 2.2).
func canWrite(path string) bool {
	return eaccess(path, unix.W_OK) == nil
}

// canRead returns why this process may not read path (nil: it may), asking the kernel as canWrite does.
func canRead(path string) error {
	if err := eaccess(path, unix.R_OK); err != nil {
		return &fs.PathError{Op: "access", Path: path, Err: err}
	}
	return nil
}
