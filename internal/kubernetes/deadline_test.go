package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/k8stest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/silentserver"
)

// checkWithDeadline runs p.Check under a one-second deadline and returns its error; a Check that has
// not returned a minute later fails the test: it did not honour its deadline.
func checkWithDeadline(t *testing.T, p *Provisioner) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Check(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Check has not returned a minute after its 1s deadline")
		return nil
	}
}

// waitedForTheServer matches the error of a call to server that its 1 s deadline ended. The wait is
// measured (waits.Elapsed, to 0.1 s): on a loaded machine the call returns a little after its
// deadline and says 1.1s.
func waitedForTheServer(server string) *regexp.Regexp {
	return regexp.MustCompile(`waited 1(\.\d)?s for the Kubernetes API server at ` + regexp.QuoteMeta(server) +
		regexp.QuoteMeta(" (or the kubeconfig's credential plugin) to answer GET /version, until the operation's deadline"))
}

// An API server that accepts the connection and never answers (a hung server, a port forward to
// nothing; silentserver stands in for it) holds a call until the operation's deadline, and the error
// says what the call waited for.
func TestCallToAServerThatNeverAnswersEndsAtTheDeadline(t *testing.T) {
	srv := silentserver.Start(t)
	server := "https://" + srv.Addr
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", server, "test-token")+`"}`)
	err := checkWithDeadline(t, p)
	if want := waitedForTheServer(server); err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("got %v, want an error matching %q", err, want)
	}
	if srv.Accepted() == 0 {
		t.Fatal("the call never reached the server")
	}
}

// A kubeconfig's exec credential plugin that hangs (a login waiting for a browser) runs before the
// request, without its context (client-go's exec.Command): the call still ends at the operation's
// deadline, saying what it waited for. The plugin is a real process that runs until the test ends.
func TestCallWhoseCredentialPluginHangsEndsAtTheDeadline(t *testing.T) {
	dir := t.TempDir()
	alive := filepath.Join(dir, "plugin-may-run")
	if err := os.WriteFile(alive, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(alive) }) // the plugin exits within 0.1 s
	server := "https://" + silentserver.Start(t).Addr
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
      command: sh
      args: ["-c", "while [ -e \"$1\" ]; do sleep 0.1; done", "hung-plugin", %q]
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, alive)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+kubeconfig+`"}`)
	err := checkWithDeadline(t, p)
	if want := waitedForTheServer(server); err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("got %v, want an error matching %q", err, want)
	}
}

// A read waiting for the LIST another read of this command started (the refresh's shared snapshot)
// stops at its own deadline, with an error that says what it waited for and how long, while the LIST
// goes on for the reads that started it.
func TestReadWaitingForASharedListSaysWhatItWaitedFor(t *testing.T) {
	srv := silentserver.Start(t)
	server := "https://" + srv.Addr
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", server, "test-token")+`"}`)
	c, err := p.clients.get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	key := batchKey{namespace: "rill", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}
	p.reads.snapshot(context.Background(), c, key) // the LIST, to a server that never answers
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = p.reads.get(ctx, c, key, "rt-1")
	want := "for the LIST of deployments in namespace rill that this command's reads share, until the operation's deadline"
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "waited ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v; want %q", err, want)
	}
}

// A Deprovision whose timeout_seconds ends it while a request is outstanding (here the cluster
// identity's read, from a server that never answers) says that timeout_seconds ended it: the
// request's own error says "until the operation's deadline", which sent the user to timeouts.delete
// (10 minutes, not reached) instead.
func TestDeprovisionEndedByTimeoutSecondsSaysSo(t *testing.T) {
	server := "https://" + silentserver.Start(t).Addr
	p := mustProvisioner(t, `{"host": "http://*.x", "timeout_seconds": 1, "kubeconfig_path": "`+k8stest.WriteKubeconfig(t, "", server, "test-token")+`"}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	err := p.Deprovision(ctx, runtimeResource())
	if err == nil || !strings.Contains(err.Error(), "timeout_seconds=1 ended the wait") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want an error saying that timeout_seconds=1 ended the wait", err)
	}
}

// A call whose operation's deadline had passed before it began (`timeouts { read = "1ns" }`, or an
// AwaitReady after a Provision that took the create's time) says what it did not wait for: it was a
// bare "context deadline exceeded", under the Terraform layer's "the error above says what it was
// waiting for", before the clients were built and after.
func TestACallBegunAfterItsDeadlineSaysWhatItDidNotWaitFor(t *testing.T) {
	server := "https://" + silentserver.Start(t).Addr
	kubeconfig := k8stest.WriteKubeconfig(t, "", server, "test-token")
	p := mustProvisioner(t, `{"host": "http://*.x", "kubeconfig_path": "`+kubeconfig+`"}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	opts := &provisioner.ResourceOptions{Args: (&provisioner.RuntimeArgs{Slots: 1}).AsMap()}
	for _, where := range []string{"of kubeconfig_path " + kubeconfig, "at " + server} {
		_, errCheck := p.CheckResource(ctx, runtimeResource(), opts)
		errWait := p.AwaitReady(ctx, runtimeResource())
		for op, err := range map[string]error{"CheckResource": errCheck, "AwaitReady": errWait} {
			want := "did not wait for the Kubernetes API server " + where + ": the operation's deadline had passed before the wait began"
			if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: got %v, want an error saying %q", op, err, want)
			}
		}
		if _, err := p.clients.get(context.Background()); err != nil { // built: the error names the server
			t.Fatal(err)
		}
	}
}
