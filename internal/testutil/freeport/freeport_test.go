package freeport

import (
	"fmt"
	"net"
	"testing"
)

// Ports are distinct, in the range, and bindable; a port in use is never handed out.
func TestGetHandsOutDistinctFreePortsBelowTheEphemeralRange(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		p := For(t)
		if p < Low || p >= High || seen[p] {
			t.Fatalf("port %d: out of [%d, %d) or handed out twice", p, Low, High)
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d cannot be bound: %v", p, err)
		}
		_ = l.Close()
	}
	if free(busy.Addr().(*net.TCPAddr).Port) {
		t.Fatal("a port something listens on counts as free")
	}
}
