// Package freeport picks loopback TCP ports that nothing listens on (at the moment of asking): for
// a throwaway server to bind, or for a test that needs a connection to be refused. Go tests call Get
// or For; scripts/controlplane.sh runs cmd/freeport.
//
// Ports come from below Linux's ephemeral range (32768 and up), so that the outgoing connections of
// a busy machine, which take ephemeral ports, do not take one between the pick and the bind. A
// server that still loses the race should retry with another port (pgtest and controlplane.sh do).
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
)

// The range ports are picked from.
const (
	Low  = 20000
	High = 32000 // exclusive
)

var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// Get returns a port of 127.0.0.1 that was free a moment ago and that this process has not handed
// out before.
func Get() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for i := 0; i < 500; i++ {
		p := Low + rand.IntN(High-Low)
		if handedOut.ports[p] || !free(p) {
			continue
		}
		handedOut.ports[p] = true
		return p, nil
	}
	return 0, errors.New("no free port on 127.0.0.1 in 500 tries")
}

// free reports whether port p of 127.0.0.1 can be bound.
func free(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// For is Get for a test: it fails the test when no port can be had.
func For(t testing.TB) int {
	t.Helper()
	port, err := Get()
	if err != nil {
		t.Fatalf("picking a free port: %v", err)
	}
	return port
}
