package k8stest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// WriteKubeconfig writes a kubeconfig for server that authenticates with a bearer token and skips TLS
// verification, at path ("" for a file in a temporary directory), and returns its path: for tests that
// point the provisioner at a server of their own (an httptest server, a closed port) rather than the
// control plane.
func WriteKubeconfig(t testing.TB, path, server, token string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "kubeconfig")
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: %s
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, token)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
