//go:build !linux

package lifeline

// RemoveListeningSockets is a no-op outside Linux, which has no /proc/self/net/unix to find the
// sockets by (see sockets_linux.go).
func RemoveListeningSockets() {}
