package lifeline

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RemoveListeningSockets removes the files of the Unix sockets this process listens on: go-plugin's
// (PLUGIN_UNIX_SOCKET_DIR or $TMPDIR, "plugin" and digits). go-plugin removes its socket file when
// its server stops; a provider that exits because its Terraform is gone never stops that server,
// and without this each killed terraform left a socket file in /tmp. Linux only (it reads /proc);
// elsewhere a no-op.
func RemoveListeningSockets() {
	ours := socketInodes()
	if len(ours) == 0 {
		return
	}
	f, err := os.Open("/proc/self/net/unix")
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	for _, path := range listeningSocketPaths(f, ours) {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(path)
		}
	}
}

// socketInodes returns the inodes of the sockets among this process's open files.
func socketInodes() map[string]bool {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes
}

// soAcceptCon is __SO_ACCEPTCON, the Flags bit of a listening socket in /proc/net/unix.
const soAcceptCon = 0x10000

// listeningSocketPaths reads /proc/net/unix ("Num RefCount Protocol Flags Type St Inode Path", hex
// numbers) and returns the paths of the listening sockets with an inode in ours; abstract sockets
// ("@name") have no file and are left out.
func listeningSocketPaths(f io.Reader, ours map[string]bool) []string {
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !ours[fields[6]] || strings.HasPrefix(fields[7], "@") {
			continue
		}
		flags, err := strconv.ParseUint(fields[3], 16, 64)
		if err == nil && flags&soAcceptCon != 0 {
			paths = append(paths, strings.Join(fields[7:], " "))
		}
	}
	return paths
}
