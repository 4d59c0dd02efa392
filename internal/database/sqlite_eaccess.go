//go:build unix && !linux

package database

import "golang.org/x/sys/unix"

// eaccess asks the kernel whether this process may access path with mode (unix.R_OK, unix.W_OK)
// as an open would, with its effective IDs: faccessat with AT_EACCESS is a system call here (on
// Linux it may not be: see sqlite_eaccess_linux.go).
func eaccess(path string, mode uint32) error {
	return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS)
}
