package provisioner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewRuntimeArgsAcceptsEveryNumberShape(t *testing.T) {
	for name, v := range map[string]any{
		"int": 3, "int64 (Terraform)": int64(3), "float64 (encoding/json)": float64(3), "json.Number": json.Number("3"),
	} {
		t.Run(name, func(t *testing.T) {
			args, err := NewRuntimeArgs(map[string]any{"slots": v, "version": "v1"})
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if args.Slots != 3 || args.Version != "v1" {
				t.Fatalf("decoded %+v", args)
			}
		})
	}
}

func TestNewRuntimeArgsErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name  string
		args  map[string]any
		field string
		want  string
	}{
		{"zero slots", map[string]any{"slots": 0}, "slots", "at least 1"},
		{"negative slots", map[string]any{"slots": int64(-2)}, "slots", "at least 1"},
		{"missing slots", map[string]any{"version": "x"}, "slots", "at least 1"},
		{"fractional slots", map[string]any{"slots": 1.5}, "slots", "whole number"},
		{"string slots", map[string]any{"slots": "2"}, "slots", "whole number"},
		{"bool slots", map[string]any{"slots": true}, "slots", "whole number"},
		{"numeric version", map[string]any{"slots": 1, "version": 2}, "version", "string"},
		{"unknown key", map[string]any{"slots": 1, "slotz": 2}, "slotz", "unknown field"},
		{"slots beyond MaxSlots", map[string]any{"slots": int64(2147483648)}, "slots", "must be at most 214748364, got 2147483648"},
		{"override_disk_gb beyond MaxOverrideDiskGB", map[string]any{"slots": 1, "override_disk_gb": int64(10000000000)}, "override_disk_gb", "must be at most 8589934591"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRuntimeArgs(tc.args)
			if err == nil {
				t.Fatal("expected an error")
			}
			fe, ok := err.(*FieldError)
			if !ok {
				t.Fatalf("expected a *FieldError, got %T: %v", err, err)
			}
			if fe.Path != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q: want field %q and text %q", err, tc.field, tc.want)
			}
		})
	}
}

func TestRuntimeArgsRoundTrip(t *testing.T) {
	for _, in := range []*RuntimeArgs{
		{Slots: 4, Version: "v0.50.0"},
		{Slots: 2, Version: "latest", Hibernated: true, Environment: "dev", OverrideDiskGB: 100},
	} {
		out, err := NewRuntimeArgs(in.AsMap())
		if err != nil || *out != *in {
			t.Fatalf("round trip of %+v gave %+v, %v", in, out, err)
		}
		// Args that went through JSON (numbers as float64) decode to the same args.
		b, _ := json.Marshal(in.AsMap())
		var viaJSON map[string]any
		_ = json.Unmarshal(b, &viaJSON)
		if out, err := NewRuntimeArgs(viaJSON); err != nil || *out != *in {
			t.Fatalf("JSON round trip of %+v gave %+v, %v", in, out, err)
		}
	}
}

// Rill's admin service sends {"slots", "version", "environment"} and "override_disk_gb" only when set;
// such maps decode.
func TestRuntimeArgsDecodeRillsArgs(t *testing.T) {
	args, err := NewRuntimeArgs(map[string]any{"slots": 2, "version": "v0.60.0", "environment": "dev", "override_disk_gb": int64(250)})
	if err != nil {
		t.Fatal(err)
	}
	want := RuntimeArgs{Slots: 2, Version: "v0.60.0", Environment: "dev", OverrideDiskGB: 250}
	if *args != want {
		t.Fatalf("decoded %+v, want %+v", *args, want)
	}
	if args, err := NewRuntimeArgs(map[string]any{"slots": 1, "version": "", "environment": ""}); err != nil || args.OverrideDiskGB != 0 {
		t.Fatalf("args without override_disk_gb (as Rill sends them when unset) gave %+v, %v", args, err)
	}
	if _, err := NewRuntimeArgs(map[string]any{"slots": 1, "override_disk_gb": -1}); err == nil || !strings.Contains(err.Error(), "override_disk_gb") {
		t.Fatalf("a negative override_disk_gb gave %v, want an error naming the field", err)
	}
}

func TestRuntimeArgsEnvironmentAndStorage(t *testing.T) {
	if got := (&RuntimeArgs{Slots: 1}).EnvironmentOrDefault(); got != "prod" {
		t.Fatalf("default environment %q, want prod", got)
	}
	if got := (&RuntimeArgs{Slots: 1, Environment: "dev"}).EnvironmentOrDefault(); got != "dev" {
		t.Fatalf("environment %q, want dev", got)
	}
	if got := (&RuntimeArgs{Slots: 3}).StorageBytes(); got != 3*40<<30 {
		t.Fatalf("storage for 3 slots %d", got)
	}
	if got := (&RuntimeArgs{Slots: 3, OverrideDiskGB: 7}).StorageBytes(); got != 7<<30 {
		t.Fatalf("storage with a 7 GB override %d", got)
	}
}

func TestResolveVersion(t *testing.T) {
	for _, tc := range []struct{ version, rill, want string }{
		{"", "", "latest"},
		{"", "v0.60.0", "v0.60.0"},
		{"latest", "v0.60.0", "v0.60.0"},
		{"latest", "", "latest"},
		{"v0.59.1", "v0.60.0", "v0.59.1"},
	} {
		if got := ResolveVersion(tc.version, tc.rill); got != tc.want {
			t.Errorf("ResolveVersion(%q, %q) = %q, want %q", tc.version, tc.rill, got, tc.want)
		}
	}
}

func TestRuntimeConfigRoundTripAndSizes(t *testing.T) {
	cpu, mem, storage := NewRuntimeSizes(3)
	if cpu != 3 || mem != 12 || storage != 3*40*1024*1024*1024 {
		t.Fatalf("sizes for 3 slots: %d cpu, %d GB, %d bytes", cpu, mem, storage)
	}
	in := &RuntimeConfig{Host: "http://h", Audience: "http://a", CPU: cpu, MemoryGB: mem, StorageBytes: storage}
	m := in.AsMap()
	// A config that went through JSON comes back with float64 numbers; it must still decode.
	b, _ := json.Marshal(m)
	var viaJSON map[string]any
	_ = json.Unmarshal(b, &viaJSON)
	out, err := NewRuntimeConfig(viaJSON)
	if err != nil || *out != *in {
		t.Fatalf("round trip gave %+v, %v", out, err)
	}
}

func TestResourceTypeValid(t *testing.T) {
	if !ResourceTypeRuntime.Valid() || !ResourceTypeClickHouse.Valid() || ResourceType("vm").Valid() {
		t.Fatal("Valid disagrees with the declared types")
	}
}

func TestClickhouseConfigAndArgsLeaveOutEmptyOptionalFields(t *testing.T) {
	if m := (&ClickhouseConfig{DSN: "x"}).AsMap(); len(m) != 1 || m["dsn"] != "x" {
		t.Fatalf("empty optional fields are not left out: %v", m)
	}
	if m := (&ClickhouseConfig{}).AsMap(); len(m) != 1 || m["dsn"] != "" {
		t.Fatalf("dsn is not always there: %v", m)
	}
	if m := (&ClickhouseArgs{}).AsMap(); len(m) != 0 {
		t.Fatalf("an empty password is not left out: %v", m)
	}
}

func TestClickhouseConfigDSNWithoutPassword(t *testing.T) {
	for in, want := range map[string]string{
		"clickhouse://rill_x:S3cr%40t@h:9000/db?secure=true":                                         "clickhouse://rill_x@h:9000/db?secure=true",
		"clickhouse://rill_x:pw@h1:9000,h2:9000/db":                                                  "clickhouse://rill_x@h1:9000,h2:9000/db",
		"tcp://h:9000?username=u&password=pw&database=db&dial_timeout=1s":                            "tcp://h:9000?username=u&database=db&dial_timeout=1s",
		"http://u:p:with:colons@h:8123":                                                              "http://u@h:8123",
		"https://h:8443/db":                                                                          "https://h:8443/db",
		"http://u:pw@h:8123/db?http_proxy=http%3A%2F%2Fpu%3AProxyS3cret%40proxy%3A3128&compress=lz4": "http://u@h:8123/db?http_proxy=http%3A%2F%2Fpu%40proxy%3A3128&compress=lz4",
		"http://u:pw@h:8123/db?http_proxy=http%3A%2F%2Fproxy%3A3128":                                 "http://u@h:8123/db?http_proxy=http%3A%2F%2Fproxy%3A3128",
		// An escaped key is the client's password parameter all the same (url.ParseQuery).
		"clickhouse://rill_x@h:9000/db?pass%77ord=S3cr%40t&secure=true": "clickhouse://rill_x@h:9000/db?secure=true",
		"":          "",
		"not a dsn": "",
	} {
		if got := (&ClickhouseConfig{DSN: in, WriteDSN: in}); got.DSNWithoutPassword() != want || got.WriteDSNWithoutPassword() != want {
			t.Errorf("%q without password: %q, want %q", in, got.DSNWithoutPassword(), want)
		}
	}
}

func TestClickhouseArgsRejectUnknownFields(t *testing.T) {
	var fe *FieldError
	if _, err := NewClickhouseArgs(map[string]any{"passwd": "pw"}); !errors.As(err, &fe) || fe.Path != "passwd" {
		t.Fatalf("unknown field: %v", err)
	}
}
