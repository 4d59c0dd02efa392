package database

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readerNoFaccessat2Env makes the reader process run as on a kernel without faccessat2 (Linux
// before 5.8), or under a seccomp profile that predates it (older Docker and containerd deny it
// with EPERM): the syscall fails with ENOSYS.
const readerNoFaccessat2Env = "RILL_DATABASE_TEST_READER_NO_FACCESSAT2"

func init() {
	readerSetup = func() error {
		if os.Getenv(readerNoFaccessat2Env) == "" {
			return nil
		}
		return denyFaccessat2()
	}
}

// denyFaccessat2 installs a seccomp filter, on every thread of the process, under which faccessat2
// fails with ENOSYS and every other system call runs as usual.
func denyFaccessat2() error {
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_FACCESSAT2, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	if err := unix.Faccessat2(unix.AT_FDCWD, "/", unix.R_OK, unix.AT_EACCESS); !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("faccessat2 after the seccomp filter: %v, want ENOSYS", err)
	}
	return nil
}

// grantACL gives user uid the permissions perm (unix.R_OK, ...) on path through a POSIX ACL
// (setfacl -m u:<uid>:<perm> path), which leaves the mode's owner and other bits as they are.
func grantACL(t *testing.T, path string, uid uint32, perm uint16) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	mode := uint16(fi.Mode().Perm())
	const undefined = ^uint32(0)
	// The system.posix_acl_access format (linux/posix_acl_xattr.h): a version, then entries sorted
	// by tag: owner, named user, owning group, mask, other.
	acl := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, mode >> 6 & 7, undefined}, {0x02, perm, uid}, {0x04, mode >> 3 & 7, undefined}, {0x10, perm | mode>>3&7, undefined}, {0x20, mode & 7, undefined}} {
		acl = binary.LittleEndian.AppendUint16(acl, e.tag)
		acl = binary.LittleEndian.AppendUint16(acl, e.perm)
		acl = binary.LittleEndian.AppendUint32(acl, e.id)
	}
	if err := unix.Setxattr(path, "system.posix_acl_access", acl, 0); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("the file system of %s has no POSIX ACLs: %v", path, err)
		}
		t.Fatalf("set an ACL on %s: %v", path, err)
	}
}

// TestSQLiteReadOnlyACLReadableFileWithoutFaccessat2: a ledger file that nobody may read only
// through an ACL entry (setfacl -m u:nobody:r), read as nobody on a kernel without faccessat2. The
// readability check at open (checkReadable) asked unix.Faccessat with AT_EACCESS, which there
// checks the mode bits itself, blind to the ACL: the plan failed with "this user cannot read the
// ledger file" although it could.
func TestSQLiteReadOnlyACLReadableFileWithoutFaccessat2(t *testing.T) {
	path := readOnlyLedger(t)
	writeLedger(t, path, "a")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	grantACL(t, path, nobodyUID, unix.R_OK)
	wantReadAsNobody(t, path, "OK 1 a") // with faccessat2: the ACL is in force
	wantReadAsNobody(t, path, "OK 1 a", readerNoFaccessat2Env+"=1")
}

// TestSQLiteReadOnlyACLWritableDirWithoutFaccessat2 is TestSQLiteReadOnlyFileLeavesNoFiles with
// the directory writable by nobody through an ACL entry only, on a kernel without faccessat2:
// wouldLeaveFiles's check that nobody may write the directory read the mode bits alone, so the
// read took SQLite's locks moments after the apply and left -wal and -shm files owned by nobody.
func TestSQLiteReadOnlyACLWritableDirWithoutFaccessat2(t *testing.T) {
	path := readOnlyLedger(t)
	grantACL(t, filepath.Dir(path), nobodyUID, unix.R_OK|unix.W_OK|unix.X_OK)
	writeLedger(t, path, "a") // just now: not settled, so the first read cannot be lock-free
	wantReadAsNobody(t, path, "OK 1 a", readerNoFaccessat2Env+"=1")
}
