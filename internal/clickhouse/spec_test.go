package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/seterrors"
)

func TestRegisteredAsClickHouseStatic(t *testing.T) {
	if _, ok := provisioner.Initializers["clickhouse-static"]; !ok {
		t.Fatal("clickhouse-static is not registered")
	}
	p, err := New([]byte(`{"dsn":"clickhouse://admin:pw@127.0.0.1:9000"}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	if p.Type() != "clickhouse-static" || !p.Supports(provisioner.ResourceTypeClickHouse) || p.Supports(provisioner.ResourceTypeRuntime) {
		t.Fatalf("Type %q, Supports(clickhouse) %v, Supports(runtime) %v", p.Type(), p.Supports(provisioner.ResourceTypeClickHouse), p.Supports(provisioner.ResourceTypeRuntime))
	}
}

// Rill's precedence: with both, dsn_env (write_dsn_env) is used and dsn (write_dsn) ignored, with a
// warning that never shows the ignored DSN; a field Rill ignores is ignored with a warning.
func TestSpecDSNEnvWinsOverDSNAsInRill(t *testing.T) {
	t.Setenv("RILL_TEST_CH_SET", "clickhouse://admin:pw@from-env:9000")
	t.Setenv("RILL_TEST_CH_WRITE", "clickhouse://admin:pw@writer-env:9000")
	p, err := New([]byte(`{"dsn":"clickhouse://a:inlinesecret@inline:9000","dsn_env":"RILL_TEST_CH_SET",
		"write_dsn":"not even a dsn","write_dsn_env":"RILL_TEST_CH_WRITE","dns":"typo"}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	ch := p.(*Provisioner)
	if !strings.Contains(ch.dsn, "from-env") || !strings.Contains(ch.writeDSN, "writer-env") {
		t.Fatalf("dsn %q, write dsn %q: the *_env variables must win", ch.dsn, ch.writeDSN)
	}
	var got []string
	for _, w := range ch.SpecWarnings() {
		got = append(got, w.String())
	}
	want := []string{
		"dns: " + provisioner.IgnoredFieldMessage,
		"dsn: ignored: dsn_env is set too and takes precedence (as in Rill's admin service)",
		"write_dsn: ignored: write_dsn_env is set too and takes precedence (as in Rill's admin service)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(strings.Join(got, " "), "inlinesecret") {
		t.Fatal("a warning shows the ignored DSN")
	}
}

func TestSpecErrorsNameTheField(t *testing.T) {
	t.Setenv("RILL_TEST_CH_SET", "clickhouse://admin:pw@ch:9000")
	t.Setenv("RILL_TEST_CH_EMPTY", "  ")
	t.Setenv("RILL_TEST_CH_BAD", "postgres://admin:envsecretpw@db:5432")
	t.Setenv("RILL_TEST_CH_PATH", "/home/admin")
	cases := []struct {
		name, spec, field, want string
	}{
		{"neither dsn nor dsn_env", `{}`, "dsn", "is required"},
		{"dsn_env unset", `{"dsn_env":"RILL_TEST_CH_UNSET_XYZ"}`, "dsn_env", `"RILL_TEST_CH_UNSET_XYZ" is not set`},
		{"dsn_env empty", `{"dsn_env":"RILL_TEST_CH_EMPTY"}`, "dsn_env", "is empty"},
		{"dsn_env holds a bad DSN", `{"dsn_env":"RILL_TEST_CH_BAD"}`, "dsn_env", "must start with one of clickhouse://"},
		{"wrong scheme", `{"dsn":"mysql://admin:topsecretpw@h:3306"}`, "dsn", "must start with one of"},
		{"no scheme", `{"dsn":"/home/admin"}`, "dsn", "has no scheme: it must start with one of clickhouse://"},
		{"host and port without a scheme", `{"dsn":"admin:topsecretpw@h:9000"}`, "dsn", "has no scheme: it must start with one of clickhouse://"},
		{"dsn_env names a variable without a URL", `{"dsn_env":"RILL_TEST_CH_PATH"}`, "dsn_env", `"RILL_TEST_CH_PATH" has no scheme`},
		{"no host", `{"dsn":"clickhouse://admin:topsecretpw@/db"}`, "dsn", "has no host"},
		{"https without secure", `{"dsn":"https://admin:topsecretpw@h:8443"}`, "dsn", "not accepted by the ClickHouse client"},
		{"dsn not a string", `{"dsn":42}`, "dsn", "string"},
		{"bad write_dsn", `{"dsn":"clickhouse://a@h:9000","write_dsn":"ftp://w"}`, "write_dsn", "must start with one of"},
		{"write_dsn_env unset", `{"dsn":"clickhouse://a@h:9000","write_dsn_env":"RILL_TEST_CH_UNSET_XYZ"}`, "write_dsn_env", "is not set"},
		{"blank cluster", `{"dsn":"clickhouse://a@h:9000","cluster":"  "}`, "cluster", "only spaces"},
		{"cluster with a newline", `{"dsn":"clickhouse://a@h:9000","cluster":"c\n"}`, "cluster", "control characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New([]byte(tc.spec), nil, nil)
			var fe *provisioner.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a *FieldError, got %T: %v", err, err)
			}
			if fe.Path != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q: want field %q and text %q", err, tc.field, tc.want)
			}
			if strings.Contains(err.Error(), "topsecretpw") || strings.Contains(err.Error(), "envsecretpw") {
				t.Fatalf("error reveals a password: %v", err)
			}
			// Through a set, the path is prefixed with spec.
			_, err = provisioner.NewSet(`{"ch": {"type": "clickhouse-static", "spec": `+tc.spec+`}}`, nil, nil)
			var se *provisioner.SetError
			if !errors.As(err, &se) || se.Field != "spec."+tc.field || se.Provisioner != "ch" {
				t.Fatalf("NewSet error %v: want field spec.%s of provisioner ch", err, tc.field)
			}
		})
	}
}

// Every error of a spec is reported at once, each naming its field, through a set too.
func TestSpecReportsEveryError(t *testing.T) {
	for spec, want := range map[string]string{
		`{"dsn": "mysql://admin:topsecretpw@h:3306", "write_dsn_env": "RILL_TEST_CH_UNSET_XYZ", "cluster": "  "}`: "ch spec.dsn, ch spec.write_dsn_env, ch spec.cluster",
		`{"write_dsn": "ftp://w", "cluster": "c\n"}`:                                                              "ch spec.dsn, ch spec.write_dsn, ch spec.cluster",
		`{"dsn": 42, "write_dsn": true, "cluster": 1}`:                                                            "ch spec.dsn, ch spec.write_dsn, ch spec.cluster",
	} {
		_, err := provisioner.NewSet(`{"ch": {"type": "clickhouse-static", "spec": `+spec+`}}`, nil, nil)
		if got := strings.Join(seterrors.Fields(t, err), ", "); got != want {
			t.Errorf("%s: errors on %q, want %q (%v)", spec, got, want, err)
		}
		if strings.Contains(fmt.Sprint(err), "topsecretpw") {
			t.Errorf("an error reveals a password: %v", err)
		}
	}
}

func TestSpecAcceptsEveryForm(t *testing.T) {
	t.Setenv("RILL_TEST_CH_DSN", "clickhouse://admin:pw@ch:9000")
	t.Setenv("RILL_TEST_CH_WRITE", "http://admin:pw@writer:8123")
	for _, spec := range []string{
		`{"dsn":"clickhouse://admin:pw@ch:9000"}`,
		`{"dsn":"tcp://ch:9000?username=admin&password=pw"}`,
		`{"dsn":"http://admin:pw@ch:8123"}`,
		`{"dsn":"https://admin:pw@ch:8443?secure=true"}`,
		`{"dsn_env":"RILL_TEST_CH_DSN","write_dsn_env":"RILL_TEST_CH_WRITE","cluster":"default"}`,
		`{"dsn":"clickhouse://admin:pw@ch1:9000,ch2:9000","write_dsn":"clickhouse://admin:pw@w:9000","cluster":"odd ` + "`" + `name"}`,
	} {
		p, err := New([]byte(spec), nil, nil)
		if err != nil {
			t.Errorf("spec %s: %v", spec, err)
			continue
		}
		_ = p.Close()
	}
}

func TestInitializerDoesNotConnectAndConnectRetriesAfterFailure(t *testing.T) {
	fake, p := onFake(t)
	if fake.dialCount() != 0 {
		t.Fatal("the initializer connected")
	}
	fake.setDialErr(errors.New("dial tcp 127.0.0.1:9000: connect: connection refused"))
	if err := p.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Check with the server down: %v", err)
	}
	fake.setDialErr(nil)
	if err := p.Check(context.Background()); err != nil {
		t.Fatalf("Check after the server came back: %v", err)
	}
	if err := p.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := fake.dialCount(); n != 2 {
		t.Fatalf("dialed %d times; want one failed attempt and one kept connection", n)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(context.Background()); err == nil {
		t.Fatal("Check after Close succeeded")
	}
}

// A spec in error keeps its warnings (provisioner.WithWarnings): the field Rill ignores comes with
// the error, here the one it may explain (a typo of dsn).
func TestASpecInErrorKeepsItsWarnings(t *testing.T) {
	_, err := New([]byte(`{"dns": "clickhouse://a:b@h:9000"}`), nil, nil)
	var fe *provisioner.FieldError
	if errs := provisioner.SplitErrors(err); len(errs) != 1 || !errors.As(errs[0], &fe) || fe.Path != "dsn" {
		t.Fatalf("errors %v, want dsn's", errs)
	}
	var sw provisioner.SpecWarner
	if !errors.As(err, &sw) {
		t.Fatal("the error carries no warnings")
	}
	if w := sw.SpecWarnings(); len(w) != 1 || w[0].String() != "dns: "+provisioner.IgnoredFieldMessage {
		t.Fatalf("warnings %v, want dns's", w)
	}
}
