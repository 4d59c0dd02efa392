package chservertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The variable names the binary by path or by name on PATH; the single clickhouse binary is told to
// be a server, clickhouse-server is not; a name that runs nothing is an error naming the variable.
func TestCommandFindsTheBinaryAndHowToRunItAsAServer(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"clickhouse", "clickhouse-server"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	for _, c := range []struct {
		env  string
		want []string
	}{
		{"", nil},
		{"clickhouse", []string{filepath.Join(bin, "clickhouse"), "server"}},
		{"clickhouse-server", []string{filepath.Join(bin, "clickhouse-server")}},
		{filepath.Join(bin, "clickhouse-server"), []string{filepath.Join(bin, "clickhouse-server")}},
	} {
		t.Setenv(EnvServer, c.env)
		got, err := Command()
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s=%q: %q, %v; want %q", EnvServer, c.env, got, err, c.want)
		}
	}
	t.Setenv(EnvServer, "no-such-clickhouse")
	if got, err := Command(); err == nil || !strings.Contains(err.Error(), EnvServer) {
		t.Errorf("a binary that does not exist: %q, %v; want an error naming %s", got, err, EnvServer)
	}
}

// A started server answers queries on its AdminDSN (whether the user may manage users is for the
// tests that use it to find out: ClickHouse before 20.4 cannot, by SQL).
func TestStartServesTheAdminDSN(t *testing.T) {
	cmd, err := Command()
	if err != nil {
		t.Fatal(err)
	}
	if cmd == nil {
		t.Skipf("set %s to a clickhouse-server (or clickhouse) binary to run this test", EnvServer)
	}
	s := Start(t, cmd)
	opts, err := clickhouse.ParseDSN(s.AdminDSN)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var one uint8
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("querying %s: %v, %v", s.AdminDSN, one, err)
	}
	if v, err := conn.ServerVersion(); err == nil {
		t.Logf("ClickHouse %s", v.Version)
	}
}

// A server that exits while starting (a port taken between the pick and the bind, a bad binary) is
// reported as such, with its output, so that Start tries fresh ports.
func TestStartReportsAServerThatExitsWhileStarting(t *testing.T) {
	_, err := start(t, []string{"/bin/sh", "-c", "echo 'Address already in use' >&2; exit 1"})
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("got %v; want errExited with the server's output", err)
	}
}
