// Package silentserver is a TCP server that accepts connections and never answers: the worst kind
// of unreachable database (a hung server, a firewall that swallows packets after the handshake, a
// port forward to nothing). Tests point a client at it to prove that its waits are bounded.
package silentserver

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a listening silent server.
type Server struct {
	// Addr is "127.0.0.1:<port>".
	Addr     string
	accepted atomic.Int64
}

// Accepted returns how many connections the server has accepted so far.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// Start listens on a free loopback port until the test ends. Accepted connections are held open,
// unread and unanswered, and closed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("silentserver: %v", err)
	}
	s := &Server{Addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}
