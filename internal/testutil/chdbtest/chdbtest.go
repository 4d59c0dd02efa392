// Package chdbtest starts a throwaway ClickHouse server for a test: chDB's ClickHouse engine
// (scripts/chdb.sh installs it from npm), serving HTTP on a free loopback port, with the users the
// test declares in users.xml.
//
// It is a real ClickHouse (26.7), but users live in users.xml only: it cannot run CREATE USER, and
// its native-protocol listener aborts the process after a refused login, so the DSN it hands out is
// an HTTP one. See internal/clickhouse/README.md for what it can and cannot prove.
//
// When chDB cannot be installed (no npm or C compiler), Start skips the test, or fails it when the
// CI environment variable is "true".
package chdbtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/freeport"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// AdminUser and AdminPassword are the server's admin user, which has access_management. ("default"
// stays without a password: local mode runs its own query as default.)
const (
	AdminUser     = "admin"
	AdminPassword = "chdbtest-Adm1n-pw"
)

// User is a user declared in users.xml.
type User struct {
	Name     string
	Password string
	// DefaultDatabase is the user's default database (users.xml's default_database), as Rill's admin
	// service sets with CREATE USER ... DEFAULT DATABASE; "" for none.
	DefaultDatabase string
}

// Server is a running chDB server.
type Server struct {
	// AdminDSN is an HTTP DSN of the admin user (with its password) and the default database.
	AdminDSN string
	httpPort int
}

// Start starts a server with the given extra users (plain-text passwords); it stops at cleanup.
func Start(t testing.TB, users ...User) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: -short (starting chDB may first install it, a 178 MB download)")
	}
	bin, err := install()
	if err != nil {
		ci.Skip(t, "chDB is not available: %v", err)
	}
	dir := t.TempDir()
	httpPort := freeport.For(t)
	config := fmt.Sprintf(`<clickhouse>
  <listen_host>127.0.0.1</listen_host>
  <http_port>%d</http_port>
  <path>%s/data/</path>
  <user_directories><users_xml><path>%s/users.xml</path></users_xml></user_directories>
</clickhouse>
`, httpPort, dir, dir)
	var b strings.Builder
	b.WriteString("<clickhouse><profiles><default/></profiles><quotas><default/></quotas><users>\n")
	all := append([]User{{Name: "default"}, {Name: AdminUser, Password: AdminPassword}}, users...)
	for _, u := range all {
		access := ""
		if u.Name == AdminUser {
			access = "<access_management>1</access_management>"
		}
		if u.DefaultDatabase != "" {
			access += "<default_database>" + u.DefaultDatabase + "</default_database>"
		}
		fmt.Fprintf(&b, "<%s><password>%s</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota>%s</%s>\n",
			u.Name, u.Password, access, u.Name)
	}
	b.WriteString("</users></clickhouse>\n")
	for name, content := range map[string]string{"config.xml": config, "users.xml": b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Local mode serves while a query runs: this one runs until the process is stopped.
	server, err := proc.Start(proc.Options{
		Name: "chDB",
		Path: bin,
		Args: []string{"--config-file=" + filepath.Join(dir, "config.xml"), "--query",
			"SYSTEM START LISTEN HTTP; SELECT sleepEachRow(1) FROM numbers(1000000000) SETTINGS max_block_size = 1, max_execution_time = 0 FORMAT Null"},
		Log:   filepath.Join(dir, "server.log"),
		Group: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	s := &Server{
		AdminDSN: fmt.Sprintf("http://%s:%s@127.0.0.1:%d/default", AdminUser, AdminPassword, httpPort),
		httpPort: httpPort,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.WaitReady(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		_, err := s.Query(ctx, "SELECT 1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Query runs one statement as the admin user over HTTP and returns its output (TabSeparated).
func (s *Server) Query(ctx context.Context, sql string) (string, error) {
	u := fmt.Sprintf("http://127.0.0.1:%d/?user=%s&password=%s", s.httpPort, AdminUser, url.QueryEscape(AdminPassword))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(sql))
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// install runs scripts/chdb.sh (which installs chDB once into .tools/) and returns the binary.
func install() (string, error) {
	root, err := proc.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "chdb.sh"))
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/chdb.sh: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
