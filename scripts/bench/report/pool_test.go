package main

import (
	"fmt"
	"testing"
)

// The pool holds every runtime, 100 slots per host, never fewer than 4 hosts.
func TestHosts(t *testing.T) {
	for count, want := range map[int]int{1: 4, 200: 4, 400: 4, 401: 5, 1000: 10, 1001: 11, 5000: 50} {
		if got := hosts(count); got != want {
			t.Errorf("hosts(%d) = %d, want %d", count, got, want)
		}
		if out, _ := (&poolHosts{count}).render(); out != fmt.Sprintf("%d 100\n", want) {
			t.Errorf("report pool -count %d printed %q", count, out)
		}
	}
}
