package logging

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"go.uber.org/zap"
)

// Each masking rule is pushed a secret on purpose, through the provider's own tflog lines and through a
// provisioner's zap logger (the bridge), and the written JSON log is read back: the secret must be gone
// and what surrounds it must stay, so that a rule that masks too much fails as well as one that masks
// nothing. Removing any rule from WithMasking, a key from SecretFieldKeys or a pattern from
// secretValuePatterns fails one of these tests.

const secret = "Sup3r-S3cret-Pa55"

// captured returns a context whose provider root logger writes JSON to the returned buffer, with
// WithMasking applied, as the provider's Configure does.
func captured() (context.Context, *bytes.Buffer) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	return WithMasking(ctx), &buf
}

// loggers are the two ways a line reaches TF_LOG: the Terraform layer's tflog and a provisioner's zap
// logger through the bridge (the "provisioner" subsystem).
var loggers = map[string]func(ctx context.Context, msg string, key string, value string){
	"tflog": func(ctx context.Context, msg, key, value string) {
		tflog.Info(ctx, msg, map[string]any{key: value})
	},
	"zap bridge": func(ctx context.Context, msg, key, value string) {
		NewBridge(ctx).Logger().Info(msg, zap.String(key, value))
	},
}

// secretKeys are the field keys the provider and provisioners log secrets under (spelled out here, not
// taken from SecretFieldKeys, so that a key dropped from that list fails the test).
var secretKeys = []string{"password", "dsn", "write_dsn", "token", "secret", "provisioner_set_json", "ledger_dsn"}

func TestSecretFieldKeysAreMaskedWhateverTheValue(t *testing.T) {
	for via, log := range loggers {
		for _, key := range secretKeys {
			t.Run(via+"/"+key, func(t *testing.T) {
				ctx, buf := captured()
				log(ctx, "configured", key, "plain-"+secret)
				out := buf.String()
				if strings.Contains(out, secret) {
					t.Fatalf("field %q leaked its value:\n%s", key, out)
				}
				if !strings.Contains(out, `"`+key+`":"***"`) || !strings.Contains(out, "configured") {
					t.Fatalf("field %q should be written as \"***\" on a line that is still logged:\n%s", key, out)
				}
			})
		}
	}
}

// Passwords inside values of any other field and inside messages: DSNs in URL form (ClickHouse,
// PostgreSQL, HTTP with basic auth) and key=value DSNs. tflog replaces a whole match with "***" (the
// user name in a URL goes with the password); the rest of the line stays.
func TestPasswordsInsideOtherValuesAndMessagesAreMasked(t *testing.T) {
	cases := map[string]struct{ text, kept string }{
		"clickhouse URL":     {"clickhouse://admin:" + secret + "@ch.test:9000/default", "clickhouse***ch.test:9000/default"},
		"postgres URL":       {"dial postgres://rill:" + secret + "@db.test:5432/ledger?sslmode=disable failed", "dial postgres***db.test:5432/ledger?sslmode=disable failed"},
		"http basic auth":    {"POST http://default:" + secret + "@ch-writer.test:8123/?query=1", "POST http***ch-writer.test:8123/?query=1"},
		"key=value DSN":      {"host=db.test user=rill password=" + secret + " dbname=ledger", "host=db.test user=rill *** dbname=ledger"},
		"query parameter":    {"https://ch.test:8443/?user=admin&password=" + secret + "&secure=true", `https://ch.test:8443/?user=admin\u0026***\u0026secure=true`},
		"upper-case keyword": {"PASSWORD=" + secret + " next", "*** next"},
		"ClickHouse user statement": {"Syntax error: failed at position 8: USER `u` IDENTIFIED WITH sha256_password BY 'it\\'s-" + secret + "' DEFAULT DATABASE `d`",
			"failed at position 8: USER `u` *** DEFAULT DATABASE `d`"},
		"ClickHouse ALTER USER": {"ALTER USER u IDENTIFIED BY '" + secret + "\\\\x' SETTINGS", "ALTER USER u *** SETTINGS"},
		"ClickHouse methods": {"CREATE USER u IDENTIFIED WITH plaintext_password BY 'first', bcrypt_password BY '" + secret + "' HOST ANY",
			"CREATE USER u *** HOST ANY"},
	}
	for via, log := range loggers {
		for name, c := range cases {
			t.Run(via+"/field/"+name, func(t *testing.T) {
				ctx, buf := captured()
				log(ctx, "connecting", "target", c.text)
				checkMasked(t, buf.String(), c.kept)
			})
			t.Run(via+"/message/"+name, func(t *testing.T) {
				ctx, buf := captured()
				log(ctx, "connecting to "+c.text, "attempt", "1")
				checkMasked(t, buf.String(), c.kept)
			})
		}
	}
}

func checkMasked(t *testing.T, out, kept string) {
	t.Helper()
	if strings.Contains(out, secret) {
		t.Fatalf("the password leaked:\n%s", out)
	}
	if !strings.Contains(out, kept) {
		t.Fatalf("the masked line should keep everything but the password (%q):\n%s", kept, out)
	}
}

// Fields set on a zap logger with With, and the logger's name, reach the line; levels map one to one.
func TestBridgeKeepsFieldsNamesAndLevels(t *testing.T) {
	ctx, buf := captured()
	log := NewBridge(ctx).Logger().Named("ledger").With(zap.String("resource_id", "rt-1"), zap.String("dsn", "sqlite://x"))
	log.Debug("debug line")
	log.Warn("warn line")
	log.Error("error line", zap.Int("slots", 2))
	entries, err := tflogtest.MultilineJSONDecode(buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ msg, level string }{{"debug line", "debug"}, {"warn line", "warn"}, {"error line", "error"}}
	if len(entries) != len(want) {
		t.Fatalf("got %d entries, want %d: %v", len(entries), len(want), entries)
	}
	for i, w := range want {
		e := entries[i]
		if e["@message"] != w.msg || e["@level"] != w.level || e["@module"] != "provider."+Subsystem ||
			e["resource_id"] != "rt-1" || e["logger"] != "ledger" || e["dsn"] != "***" {
			t.Errorf("entry %d: %v, want message %q at %s in module provider.%s with resource_id, logger and a masked dsn", i, e, w.msg, w.level, Subsystem)
		}
	}
	if entries[2]["slots"] != float64(2) {
		t.Errorf("the error line lost its own field: %v", entries[2])
	}
}

// A bridge follows the newest request's context: lines go to the logger of the request in progress.
func TestBridgeWritesToTheLatestContext(t *testing.T) {
	first, firstBuf := captured()
	second, secondBuf := captured()
	b := NewBridge(first)
	log := b.Logger()
	b.SetContext(second)
	log.Info("after the switch")
	if firstBuf.Len() != 0 || !strings.Contains(secondBuf.String(), "after the switch") {
		t.Fatalf("first logger got %q, second %q", firstBuf.String(), secondBuf.String())
	}
}

// MaskString is the masking of diagnostics, which tflog does not see.
func TestMaskStringMasksPasswordsAndKeepsTheRest(t *testing.T) {
	cases := map[string]string{
		"spec.dsn: cannot parse clickhouse://admin:" + secret + "@ch.test:9000/db":                "spec.dsn: cannot parse clickhouse://admin:***@ch.test:9000/db",
		"user=rill password=" + secret + " host=db.test":                                          "user=rill password=*** host=db.test",
		"postgres://u:" + secret + "@a.test/x and postgres://v:" + secret + "@b.test/y":           "postgres://u:***@a.test/x and postgres://v:***@b.test/y",
		"no secret in clickhouse://ch.test:9000/db":                                               "no secret in clickhouse://ch.test:9000/db",
		"got \"https://user:Sup3r@" + secret + "@*.rill.example.com\"":                            "got \"https://user:***@*.rill.example.com\"",
		"https://u:a/b@" + secret + "@h.test/x":                                                   "https://u:***@h.test/x",
		`{"dsn":"clickhouse://u:` + secret + `@h:9000","email":"x@y.test"}`:                       `{"dsn":"clickhouse://u:***@h:9000","email":"x@y.test"}`,
		"USER u IDENTIFIED WITH sha256_password BY 'it\\'s-" + secret + "' DEFAULT DATABASE d":    "USER u IDENTIFIED WITH sha256_password BY '***' DEFAULT DATABASE d",
		"IDENTIFIED WITH plaintext_password BY 'a', bcrypt_password BY '" + secret + "' HOST ANY": "IDENTIFIED WITH plaintext_password BY '***' HOST ANY",
		"cut short: IDENTIFIED BY '" + secret:                                                     "cut short: IDENTIFIED BY '***",
		// A quote in the password: the first URL pattern stops at it, the second masks the rest.
		"dial postgres://u:it's-" + secret + "@db.test:5432/x": "dial postgres://u:***@db.test:5432/x",
	}
	for in, want := range cases {
		if got := MaskString(in); got != want {
			t.Errorf("MaskString(%q) = %q, want %q", in, got, want)
		}
	}
}
