package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// restore puts the process's GC settings back, and stops the tuning, after a test.
func restore(t *testing.T) {
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		tuning.Store(false)
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

func TestApplyKeepsWhatTheUserSet(t *testing.T) {
	restore(t)
	// The Go runtime applied these at start-up; Apply must not override them.
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)

	Apply()
	runtime.GC()

	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GC percent = %d, want the user's 150", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("memory limit = %d, want the user's 1 GiB", got)
	}
}

// waitForLimit collects until the memory limit satisfies ok (the tuning runs after a collection, in
// the finalizer goroutine), for at most 200 collections.
func waitForLimit(t *testing.T, what string, ok func(int64) bool) {
	t.Helper()
	for range 200 {
		runtime.GC()
		if ok(debug.SetMemoryLimit(-1)) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("memory limit %d after 200 collections: want %s", debug.SetMemoryLimit(-1), what)
}

var held [][]byte

func TestApplyLimitFollowsTheLiveHeap(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)

	Apply()

	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Errorf("GC percent = %d, want %d", got, GCPercent)
	}
	debug.SetGCPercent(GCPercent)
	waitForLimit(t, "the floor while little is live", func(l int64) bool { return l == MemoryLimit })

	// 64 MiB live: the limit must leave as much again free (never collecting more often than GOGC=100).
	const live = 64 << 20
	for range live >> 20 {
		held = append(held, make([]byte, 1<<20))
	}
	waitForLimit(t, "at least twice the 64 MiB live", func(l int64) bool { return l >= 2*live })

	held = nil
	waitForLimit(t, "back at the floor once the heap is freed", func(l int64) bool { return l == MemoryLimit })
}

func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, MemoryLimit},
		{6 << 20, MemoryLimit}, // a refresh of 200 or 1,000 runtimes
		{8 << 20, MemoryLimit},
		{15 << 20, 46 << 20},
		{40 << 20, 96 << 20},
	} {
		if got := limitFor(c.live); got != c.want {
			t.Errorf("limitFor(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}
