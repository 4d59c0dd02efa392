// Package freeport picks a loopback TCP port that nothing listens on (at the moment of asking): for
// a throwaway server to bind, or for a test that needs a connection to be refused.
package freeport

import (
	"net"
	"testing"
)

// Get returns a port of 127.0.0.1 that was free a moment ago.
func Get() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
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
