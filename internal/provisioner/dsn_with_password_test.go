package provisioner

import (
	"errors"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// A password put back into a DSN without one is what the ClickHouse client reads as the user's
// password, escaped whatever it holds, in each DSN shape clickhouse-go accepts; the rest of the DSN
// (hosts, database, options) is kept as written, and a password already there is replaced.
func TestDSNWithPasswordIsWhatTheClickHouseClientReads(t *testing.T) {
	const password = `p@ss:w/rd?#&=% é+`
	for _, c := range []struct{ in, want, user, db string }{
		{"clickhouse://rill_u@h:9000/rill_db?secure=true",
			"clickhouse://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@h:9000/rill_db?secure=true", "rill_u", "rill_db"},
		{"clickhouse://rill_u@h1:9000,h2:9000/rill_db",
			"clickhouse://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@h1:9000,h2:9000/rill_db", "rill_u", "rill_db"},
		{"https://rill_u@h:8443/rill_db?secure=true&compress=lz4",
			"https://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@h:8443/rill_db?secure=true&compress=lz4", "rill_u", "rill_db"},
		{"http://rill_u:old-one@h:8123/rill_db",
			"http://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@h:8123/rill_db", "rill_u", "rill_db"},
		{"tcp://h:9000?username=rill_u&database=rill_db&dial_timeout=1s",
			"tcp://h:9000?username=rill_u&database=rill_db&dial_timeout=1s&password=p%40ss%3Aw%2Frd%3F%23%26%3D%25+%C3%A9%2B", "rill_u", "rill_db"},
		{"tcp://h:9000?username=rill_u&password=old-one&database=rill_db",
			"tcp://h:9000?username=rill_u&database=rill_db&password=p%40ss%3Aw%2Frd%3F%23%26%3D%25+%C3%A9%2B", "rill_u", "rill_db"},
		// A password parameter with an escaped key is one to the client (url.ParseQuery), and wins
		// over the user info: it goes; an escaped username parameter names the user.
		{"clickhouse://rill_u@h:9000/rill_db?pass%77ord=old-one",
			"clickhouse://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@h:9000/rill_db", "rill_u", "rill_db"},
		{"tcp://h:9000?user%6Eame=rill_u&%70assword=old-one&database=rill_db",
			"tcp://h:9000?user%6Eame=rill_u&database=rill_db&password=p%40ss%3Aw%2Frd%3F%23%26%3D%25+%C3%A9%2B", "rill_u", "rill_db"},
		// The username parameter wins over the user info: the password goes beside it, and the user
		// info loses its old one.
		{"clickhouse://other:old-one@h:9000/rill_db?username=rill_u",
			"clickhouse://other@h:9000/rill_db?username=rill_u&password=p%40ss%3Aw%2Frd%3F%23%26%3D%25+%C3%A9%2B", "rill_u", "rill_db"},
		{"clickhouse://:old-one@h:9000/rill_db?username=rill_u",
			"clickhouse://@h:9000/rill_db?username=rill_u&password=p%40ss%3Aw%2Frd%3F%23%26%3D%25+%C3%A9%2B", "rill_u", "rill_db"},
		{"clickhouse://rill_u@[::1]:9000,[::2]:9000/rill_db#frag",
			"clickhouse://rill_u:p%40ss%3Aw%2Frd%3F%23&=%25%20%C3%A9+@[::1]:9000,[::2]:9000/rill_db#frag", "rill_u", "rill_db"},
	} {
		got, err := DSNWithPassword(c.in, password)
		if err != nil || got != c.want {
			t.Errorf("%q with the password: %q (%v), want %q", c.in, got, err, c.want)
			continue
		}
		opts, err := clickhouse.ParseDSN(got)
		if err != nil {
			t.Errorf("%q: the ClickHouse client refuses the result: %v", c.in, err)
			continue
		}
		if opts.Auth.Username != c.user || opts.Auth.Password != password || opts.Auth.Database != c.db {
			t.Errorf("%q: the client reads user %q, password %q, database %q", c.in, opts.Auth.Username, opts.Auth.Password, opts.Auth.Database)
		}
		if back := withoutPassword(got); back != withoutPassword(c.in) {
			t.Errorf("%q: without its password again %q, want %q", c.in, back, withoutPassword(c.in))
		}
	}
}

// What cannot carry a password is refused, and the error quotes neither the DSN nor the password.
func TestDSNWithPasswordRefusesWhatNamesNoUser(t *testing.T) {
	for in, want := range map[string]string{
		"https://h:8443/rill_db":         "names no user",
		"clickhouse://:x@h:9000/rill_db": "names no user",
		// clickhouse-go reads an empty username parameter as the user "", whatever the user info says.
		"clickhouse://rill_u@h:9000/rill_db?username=": "empty username parameter",
		"h:9000/rill_db": "not a URL",
		"":               "not a URL",
	} {
		_, err := DSNWithPassword(in, "Pa55-w0rd")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
			continue
		}
		if strings.Contains(err.Error(), "Pa55") || (in != "" && strings.Contains(err.Error(), in)) {
			t.Errorf("%q: the error quotes its input: %v", in, err)
		}
	}
	if _, err := DSNWithPassword("clickhouse://rill_u@h:9000/rill_db", ""); !errors.Is(err, ErrEmptyDSNPassword) {
		t.Errorf("an empty password: %v, want ErrEmptyDSNPassword", err)
	}
}
