// Package chservertest starts a throwaway ClickHouse server for a test from a server binary installed
// on the machine (clickhouse-server, or the single clickhouse binary): its own config.xml and
// users.xml in a temporary directory, loopback ports nothing listens on, and a passwordless "default"
// user with access_management, stopped when the test ends.
//
// It is opt-in: RILL_TEST_CLICKHOUSE_SERVER names the binary (a path, or a name looked up on PATH),
// so that installing a clickhouse-server package does not change what `go test ./...` tests (the
// Debian one is 18.16, older than what the provider supports: it proves the version refusal only).
// Without it, tests use chDB (internal/testutil/chdbtest) or a server of their own
// (RILL_TEST_CLICKHOUSE_DSN); see internal/clickhouse/README.md.
package chservertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// EnvServer names the server binary to start (a path, or a name on PATH); unset: no server.
const EnvServer = "RILL_TEST_CLICKHOUSE_SERVER"

// startAttempts bounds the starts on fresh ports when a server exits while starting (another process
// may take a free port between the pick and the bind).
const startAttempts = 3

// readyTimeout bounds one start, up to the server answering on both ports.
const readyTimeout = 30 * time.Second

// Server is a running ClickHouse server.
type Server struct {
	// AdminDSN is a native-protocol DSN of the passwordless "default" user, which has
	// access_management, and the default database.
	AdminDSN string
	// Dir holds the configuration, the data and the logs (server.log, server.err.log).
	Dir string
}

// Command returns the command line that runs the server binary named by RILL_TEST_CLICKHOUSE_SERVER
// as a server: the single clickhouse binary takes a "server" argument, clickhouse-server none. It
// returns nil when the variable is unset, and an error when it names nothing that can run.
func Command() ([]string, error) {
	name := os.Getenv(EnvServer)
	if name == "" {
		return nil, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvServer, name, err)
	}
	if filepath.Base(path) == "clickhouse" {
		return []string{path, "server"}, nil
	}
	return []string{path}, nil
}

// Start starts a server from cmd (as Command returns it); it stops at cleanup. A server that does not
// come up fails the test with the end of its logs.
func Start(t testing.TB, cmd []string) *Server {
	t.Helper()
	var errs []error
	for range startAttempts {
		s, err := start(t, cmd)
		if err == nil {
			return s
		}
		errs = append(errs, err)
		if !errors.Is(err, errExited) {
			break
		}
	}
	t.Fatalf("starting ClickHouse (%s): %v", strings.Join(cmd, " "), errors.Join(errs...))
	return nil
}

var errExited = errors.New("the server exited while starting")

func start(t testing.TB, cmd []string) (*Server, error) {
	dir := t.TempDir()
	tcp, httpPort := freeport.For(t), freeport.For(t)
	for _, sub := range []string{"data/tmp", "data/user_files", "data/format_schemas", "data/access"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	for name, content := range map[string]string{"config.xml": configXML(dir, tcp, httpPort), "users.xml": usersXML} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	server, err := proc.Start(proc.Options{
		Name: "clickhouse-server",
		Path: cmd[0],
		Args: append(cmd[1:len(cmd):len(cmd)], "--config-file="+filepath.Join(dir, "config.xml")),
		Log:  filepath.Join(dir, "stdout.log"),
		// Its data is thrown away with dir, so nothing is lost by a kill; clickhouse-server 18.16 takes
		// more than 10 s to act on SIGTERM.
		StopGrace: 2 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(server.Stop)
	t.Logf("started a throwaway ClickHouse (%s) on 127.0.0.1:%d in %s", cmd[0], tcp, dir)
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := server.WaitReady(ctx, 200*time.Millisecond, func(ctx context.Context) error { return ready(ctx, tcp, httpPort) }); err != nil {
		server.Stop()
		err = fmt.Errorf("%w; last lines of server.err.log:\n%s", err, proc.FileTail(filepath.Join(dir, "server.err.log"), 2000))
		select {
		case <-server.Exited():
			return nil, fmt.Errorf("%w: %w", errExited, err)
		default:
			return nil, err
		}
	}
	return &Server{AdminDSN: fmt.Sprintf("clickhouse://default:@127.0.0.1:%d/default?dial_timeout=5s", tcp), Dir: dir}, nil
}

// ready reports whether the server answers its HTTP ping ("Ok.") and accepts connections on the
// native port the DSN names.
func ready(ctx context.Context, tcp, httpPort int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(httpPort)+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "Ok." {
		return fmt.Errorf("HTTP ping: %s %q", resp.Status, body)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(tcp))
	if err != nil {
		return err
	}
	return conn.Close()
}

// configXML is the server's configuration: everything under dir, listening on loopback only, users
// from users.xml plus the ones created by SQL (kept in data/access).
func configXML(dir string, tcp, httpPort int) string {
	return fmt.Sprintf(`<?xml version="1.0"?>
<clickhouse>
    <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/server.err.log</errorlog></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>%[2]d</tcp_port>
    <http_port>%[3]d</http_port>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/data/tmp/</tmp_path>
    <user_files_path>%[1]s/data/user_files/</user_files_path>
    <format_schema_path>%[1]s/data/format_schemas/</format_schema_path>
    <users_config>%[1]s/users.xml</users_config>
    <access_control_path>%[1]s/data/access/</access_control_path>
    <user_directories>
        <users_xml><path>%[1]s/users.xml</path></users_xml>
        <local_directory><path>%[1]s/data/access/</path></local_directory>
    </user_directories>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>268435456</mark_cache_size>
</clickhouse>
`, dir, tcp, httpPort)
}

// usersXML declares the passwordless admin ("default", from loopback only).
const usersXML = `<?xml version="1.0"?>
<clickhouse>
    <profiles><default></default></profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
        </default>
    </users>
    <quotas><default></default></quotas>
</clickhouse>
`
