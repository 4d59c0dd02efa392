// Package hosturl is the one home of what makes two runtime host URLs the same host: the static pool
// checks its spec for duplicates with it, places runtimes under it, and the ledger migration rewrites
// the hosts of existing allocations with it, so that "http://H1:9091", "http://h1:9091/." and
// "http://h1.:9091" are one host with one capacity.
package hosturl

import (
	"errors"
	"net"
	"net/url"
	"path"
	"strings"
)

// ErrNotHTTP is returned for anything but an http:// or https:// URL with a host.
var ErrNotHTTP = errors.New("must be an http:// or https:// URL with a host")

// Canonical returns the canonical form of a runtime's base URL: scheme and host in lower case, the
// host without a trailing dot, no port when it is the scheme's default (80, 443), the path with dot
// segments resolved and without a trailing slash. Query, fragment and user info are kept as given.
func Canonical(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", ErrNotHTTP
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" {
		return "", ErrNotHTTP
	}
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", ErrNotHTTP
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"): // IPv6 literal
		u.Host = "[" + host + "]"
	default:
		u.Host = host
	}
	if u.Path != "" {
		p := strings.TrimRight(path.Clean("/"+u.Path), "/")
		u.Path, u.RawPath = p, ""
	}
	return u.String(), nil
}
