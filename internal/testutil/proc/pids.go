package proc

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The tests that kill or orphan processes (a killed terraform's provider, a stopped server's
// children) look at processes they did not start through Start: which children one has, and
// whether one has gone. Both read Linux's /proc, where those tests run; elsewhere Children finds
// none and GoneWithin asks the system whether the process still exists.

// Child is a process whose parent is the one Children was asked about.
type Child struct {
	PID int
	// Comm is the command name, cut by the kernel to 15 bytes.
	Comm string
}

// Children returns the processes whose parent is pid.
func Children(pid int) []Child {
	var out []Child
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, fields, ok := stat(child)
		// After the command name: state, ppid, ...
		if ok && len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, Child{PID: child, Comm: comm})
		}
	}
	return out
}

// GoneWithin reports whether process pid has exited, or is a zombie (gone but for its parent's
// wait), within d.
func GoneWithin(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if runtime.GOOS == "linux" {
			if _, fields, ok := stat(pid); !ok || len(fields) == 0 || fields[0] == "Z" {
				return true
			}
		} else if !exists(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stat reads /proc/<pid>/stat: "pid (comm) state ppid ...". The command name may hold spaces and
// parentheses, so it ends at the last ')'; fields are what follows it.
func stat(pid int) (comm string, fields []string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	return s[open+1 : end], strings.Fields(s[end+1:]), true
}
