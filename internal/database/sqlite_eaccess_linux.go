package database

import (
	"os"

	"golang.org/x/sys/unix"
)

// eaccess asks the kernel whether this process may access path with mode (unix.R_OK, unix.W_OK)
// as an open would: with its effective IDs, ACLs and read-only mounts included.
//
// Without faccessat2 (Linux before 5.8, or a seccomp profile older than it, which older Docker and
// containerd answer with EPERM), unix.Faccessat with AT_EACCESS checks the mode bits itself, as
// glibc does, blind to ACLs and read-only mounts: a ledger readable through an ACL was refused.
// access(2) asks the kernel with the real IDs instead, which are the effective ones unless this
// process is setuid or setgid.
func eaccess(path string, mode uint32) error {
	err := unix.Faccessat2(unix.AT_FDCWD, path, mode, unix.AT_EACCESS)
	if err != unix.ENOSYS && err != unix.EPERM {
		return err
	}
	if os.Getuid() == os.Geteuid() && os.Getgid() == os.Getegid() {
		return unix.Faccessat(unix.AT_FDCWD, path, mode, 0) // EPERM again where it was the answer
	}
	return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS)
}
