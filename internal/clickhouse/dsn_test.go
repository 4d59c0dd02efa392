package clickhouse

import (
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

func TestWithCredentialsRewritesEveryDSNForm(t *testing.T) {
	cases := []struct {
		name, admin, want string
		protocol          clickhouse.Protocol
	}{
		{
			name:     "clickhouse scheme with path and query",
			admin:    "clickhouse://admin:s3cret@ch.example.com:9440/default?secure=true&dial_timeout=5s",
			want:     "clickhouse://rill_u:pw@ch.example.com:9440/rill_db?secure=true&dial_timeout=5s",
			protocol: clickhouse.Native,
		},
		{
			name:     "tcp scheme with credentials in the query",
			admin:    "tcp://ch:9000?username=admin&password=s3cret&database=default&compress=lz4",
			want:     "tcp://rill_u:pw@ch:9000/rill_db?compress=lz4",
			protocol: clickhouse.Native,
		},
		{
			name:     "http scheme, user without password, trailing slash",
			admin:    "http://admin@ch:8123/",
			want:     "http://rill_u:pw@ch:8123/rill_db",
			protocol: clickhouse.HTTP,
		},
		{
			name:     "https scheme keeps secure and http_path",
			admin:    "https://admin:s3cret@ch.cloud:8443/other?secure=true&http_path=%2Fproxy",
			want:     "https://rill_u:pw@ch.cloud:8443/rill_db?secure=true&http_path=%2Fproxy",
			protocol: clickhouse.HTTP,
		},
		{
			name:     "several hosts",
			admin:    "clickhouse://admin:s3cret@ch1:9000,ch2:9000/default?connection_open_strategy=round_robin",
			want:     "clickhouse://rill_u:pw@ch1:9000,ch2:9000/rill_db?connection_open_strategy=round_robin",
			protocol: clickhouse.Native,
		},
		{
			name:     "fragment dropped, escaped query key removed",
			admin:    "clickhouse://admin:s3cret@ch:9000?pass%77ord=s3cret&max_execution_time=60#frag",
			want:     "clickhouse://rill_u:pw@ch:9000/rill_db?max_execution_time=60",
			protocol: clickhouse.Native,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := withCredentials(c.admin, "rill_u", "pw", "rill_db")
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if strings.Contains(got, "s3cret") || strings.Contains(got, "admin") {
				t.Fatalf("%s keeps the admin's credentials", got)
			}
			opts, err := clickhouse.ParseDSN(got)
			if err != nil {
				t.Fatalf("clickhouse-go cannot parse %s: %v", got, err)
			}
			if opts.Auth.Username != "rill_u" || opts.Auth.Password != "pw" || opts.Auth.Database != "rill_db" || opts.Protocol != c.protocol {
				t.Fatalf("clickhouse-go reads %+v, protocol %v", opts.Auth, opts.Protocol)
			}
		})
	}
}

func TestWithCredentialsEscapesUserAndPassword(t *testing.T) {
	user, password := "user:with@odd/chars", "p@ss:w/rd?#&=% ü"
	got, err := withCredentials("clickhouse://admin:x@ch:9000/default?secure=false", user, password, "rill_db")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := clickhouse.ParseDSN(got)
	if err != nil {
		t.Fatalf("clickhouse-go cannot parse %s: %v", got, err)
	}
	if opts.Auth.Username != user || opts.Auth.Password != password || opts.Auth.Database != "rill_db" {
		t.Fatalf("round trip through %s gave %+v", got, opts.Auth)
	}
	if len(opts.Addr) != 1 || opts.Addr[0] != "ch:9000" {
		t.Fatalf("host changed: %v", opts.Addr)
	}
}

func TestParseDSNErrorsNeverQuoteTheDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://admin:topsecretpw@host:5432/db",
		"clickhouse://admin:topsecretpw@:9000/db",
		"https://admin:topsecretpw@host:8443/db", // https without secure=true
		"clickhouse://admin:topsecretpw@host:9000/db?dial_timeout=forever",
		"admin:topsecretpw@host",
		"clickhouse://admin:top%ZZsecretpw@host",
		"::::topsecretpw",
	} {
		_, err := parseDSN(dsn)
		if err == nil {
			t.Errorf("parseDSN accepted %s", dsn)
			continue
		}
		if strings.Contains(err.Error(), "topsecretpw") || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("error for %s reveals the password: %v", dsn, err)
		}
	}
}

func TestRedactRemovesDSNAndPasswordForms(t *testing.T) {
	dsn := "clickhouse://admin:p%40ss%2Fword@host:9000?password=q%26pw&http_proxy=http%3A%2F%2Fpu%3AProxy%2BS3cret%40proxy%3A3128"
	msg := "failed: " + dsn + " / p@ss/word / p%40ss%2Fword / q&pw / proxy Proxy+S3cret"
	got := redact(msg, secretsOfDSN(dsn)...)
	for _, leak := range []string{"p@ss/word", "p%40ss%2Fword", "q&pw", "Proxy+S3cret", dsn} {
		if strings.Contains(got, leak) {
			t.Fatalf("redacted message %q still contains %q", got, leak)
		}
	}
}

// A secret that is part of another (an admin password inside a tenant's) is removed after the longer
// one, whatever order they come in: before, the shorter one cut the longer and left its rest shown.
func TestRedactRemovesTheLongerOfTwoOverlappingSecrets(t *testing.T) {
	for _, secrets := range [][]string{{"secret", "secret123"}, {"secret123", "secret"}} {
		if got := redact("password secret123 failed, secret too", secrets...); got != "password [redacted] failed, [redacted] too" {
			t.Errorf("redact with %q: %q", secrets, got)
		}
	}
}
