package clickhouse

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/churl"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// DSNs look like the ones clickhouse-go accepts:
//
//	clickhouse://user:password@host:9000/database?secure=true
//	tcp://host:9000?username=user&password=secret&database=db
//	http://user:password@host:8123/database
//	https://user:password@host:8443/database?secure=true
//
// Several hosts may be given as host1:9000,host2:9000. Errors about a DSN never quote it: DSNs carry
// passwords.

var dsnSchemes = []string{"clickhouse", "tcp", "http", "https"}

// credentialParams are the query parameters clickhouse-go reads as credentials or database; they win
// over the URL's user info and path, so a resource DSN must not inherit the admin's.
var credentialParams = map[string]bool{"username": true, "password": true, "database": true}

// parseDSN checks that dsn is a ClickHouse DSN clickhouse-go can use and returns its options.
// The error does not contain the DSN.
func parseDSN(dsn string) (*clickhouse.Options, error) {
	u, err := churl.Parse(dsn)
	if err != nil {
		return nil, errors.New("is not a valid URL (expected clickhouse://user:password@host:9000/database)")
	}
	if u.Scheme == "" || !strings.Contains(dsn, "://") {
		// A path or a word (dsn_env naming the wrong variable) said `got "://"`, and a host:port or
		// user:password@host named the host or the user as the scheme.
		return nil, fmt.Errorf("has no scheme: it must start with one of %s:// (expected clickhouse://user:password@host:9000/database)", strings.Join(dsnSchemes, "://, "))
	}
	if !isKnownScheme(u.Scheme) {
		return nil, fmt.Errorf("must start with one of %s://, got %q", strings.Join(dsnSchemes, "://, "), u.Scheme+"://")
	}
	for _, h := range strings.Split(u.Host, ",") {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		if h == "" {
			return nil, errors.New("has no host (expected clickhouse://user:password@host:9000/database)")
		}
	}
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("is not accepted by the ClickHouse client: %s", redact(err.Error(), secretsOfDSN(dsn)...))
	}
	return opts, nil
}

func isKnownScheme(s string) bool {
	for _, k := range dsnSchemes {
		if s == k {
			return true
		}
	}
	return false
}

// dsnHosts is the set of host names dsn names, in lower case and sorted, without their ports (another
// port of a host is the same server); nil when dsn cannot be parsed. Host names carry no secret.
func dsnHosts(dsn string) []string {
	u, err := churl.Parse(dsn)
	if err != nil {
		return nil
	}
	var hosts []string
	for _, h := range strings.Split(u.Host, ",") {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		hosts = append(hosts, strings.ToLower(h))
	}
	sort.Strings(hosts)
	return hosts
}

// withCredentials returns dsn with its user, password and database replaced: the user info is set to
// user:password (URL-escaped), the path to /database, and the username, password and database query
// parameters are removed. Every other query parameter is kept as written, in order.
func withCredentials(dsn, user, password, database string) (string, error) {
	u, err := churl.Parse(dsn)
	if err != nil {
		return "", errors.New("DSN is not a valid URL")
	}
	u.User = url.UserPassword(user, password)
	u.Path = "/" + database
	u.RawPath = ""
	u.Fragment = ""
	u.RawFragment = ""
	u.RawQuery = dropQueryParams(u.RawQuery, credentialParams)
	u.ForceQuery = false
	return u.String(), nil
}

// dropQueryParams removes the parameters named in drop from a raw query, keeping the others verbatim.
func dropQueryParams(rawQuery string, drop map[string]bool) string {
	if rawQuery == "" {
		return ""
	}
	var kept []string
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if drop[key] {
			continue
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&")
}

// secretsOfDSN returns the strings of a DSN that must never be shown: the DSN itself and its password
// (raw and as it may appear escaped).
func secretsOfDSN(dsn string) []string {
	secrets := []string{dsn}
	u, err := churl.Parse(dsn)
	if err != nil {
		return secrets
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	if p := u.Query().Get("password"); p != "" {
		secrets = append(secrets, p, url.QueryEscape(p))
	}
	if proxy, err := url.Parse(u.Query().Get(provisioner.DSNProxyParam)); err == nil && proxy.User != nil {
		if p, ok := proxy.User.Password(); ok && p != "" {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	return secrets
}

// redact replaces every occurrence of the secrets in s, each also as a ClickHouse string literal
// carries it (escapeString: a server's error may quote a statement back, the password in it), and
// longest first: a secret that is part of another (an admin password inside a tenant's) would
// otherwise cut the longer one and leave its rest in the message.
func redact(s string, secrets ...string) string {
	forms := make([]string, 0, 2*len(secrets))
	for _, sec := range secrets {
		if sec != "" {
			forms = append(forms, sec, escapeString(sec))
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, sec := range forms {
		s = strings.ReplaceAll(s, sec, "[redacted]")
	}
	return s
}
