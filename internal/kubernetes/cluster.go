package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// identityNamespace is the namespace whose UID identifies a cluster: every cluster has it, from its
// creation to its end, and a new cluster has a new one.
const identityNamespace = "kube-system"

// clusterID returns the identity of the cluster the clients reach: the UID of its kube-system
// namespace, read once per provisioner. Credentials that may not read that namespace, or a server
// without it, yield "" (the identity is then neither recorded nor checked, and a warning is logged
// once); any other failure is an error, as the cluster could not be reached.
func (p *Provisioner) clusterID(ctx context.Context, c *clients) (string, error) {
	start := time.Now()
	select {
	case p.clusterLock <- struct{}{}:
	case <-ctx.Done():
		return "", waits.Ended(ctx, start, fmt.Sprintf("another operation of this run to read the identity of the cluster at %s (namespace %s)", c.config.Host, identityNamespace))
	}
	defer func() { <-p.clusterLock }()
	if p.clusterUID != nil {
		return *p.clusterUID, nil
	}
	ns, err := c.core.Resource(namespacesResource).Get(ctx, identityNamespace, metav1.GetOptions{})
	var uid string
	switch {
	case err == nil:
		uid = string(ns.GetUID())
	case apierrors.IsUnauthorized(err):
		// The first request of a run: credentials the server rejects fail here, whatever the run was
		// about to do. A bare "Unauthorized" does not say which credentials, nor the usual cause.
		return "", fmt.Errorf("the Kubernetes API server at %s did not accept the credentials of %s (a token that expired or "+
			"was revoked, such as one from `kubectl create token` past its --duration, needs renewing): %w",
			c.config.Host, credentialsOf(p.spec.KubeconfigPath, p.spec.KubeconfigContext), err)
	case apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		// Credentials without that right, or an API server without kube-system (not a full cluster).
		p.logger.Warn("cannot read the cluster's identity (the UID of namespace kube-system), so runtimes are not checked against "+
			"the cluster they were provisioned in; grant get on namespaces/kube-system to enable the check (see examples/kubernetes/rbac.yaml)", zap.Error(err))
	default:
		var status apierrors.APIStatus
		if !errors.As(err, &status) && ctx.Err() == nil {
			// No answer at all (refused, DNS, TLS): the first request of a run, so say it plainly, in the
			// words of Check and of the troubleshooting guide.
			return "", unreachable(c, "reading the identity of the cluster, namespace "+identityNamespace, err)
		}
		return "", fmt.Errorf("reading the identity of the cluster at %s (namespace %s): %w", c.config.Host, identityNamespace, err)
	}
	p.clusterUID = &uid
	return uid, nil
}

// checkCluster compares the cluster a runtime was provisioned in, as recorded in its state, with the
// one the clients reach, and returns the current identity. A runtime recorded before clusters had
// identities (no cluster_id) is taken to be in the current cluster, which it then records.
func (p *Provisioner) checkCluster(ctx context.Context, c *clients, id string, st runtimeState) (string, error) {
	cur, err := p.clusterID(ctx, c)
	if err != nil {
		return "", err
	}
	if st.ClusterID != "" && cur != "" && cur != st.ClusterID {
		return "", &ClusterMismatchError{ResourceID: id, Namespace: st.Namespace, Recorded: st.ClusterID, RecordedServer: st.Cluster,
			Current: cur, CurrentServer: c.config.Host, Kubeconfig: p.spec.KubeconfigPath, Context: p.spec.KubeconfigContext}
	}
	if cur == "" {
		cur = st.ClusterID // not readable now: keep what was recorded
	}
	return cur, nil
}

// ClusterMismatchError says that a runtime was provisioned in another cluster than the one the
// provisioner's kubeconfig reaches now. It wraps provisioner.ErrIdentityMismatch, never
// ErrResourceNotFound: the runtime may well run where it was made.
type ClusterMismatchError struct {
	ResourceID               string
	Namespace                string
	Recorded, RecordedServer string
	Current, CurrentServer   string
	Kubeconfig, Context      string
}

func (e *ClusterMismatchError) Error() string {
	was := "cluster " + e.Recorded
	if e.RecordedServer != "" {
		was += " at " + e.RecordedServer
	}
	via := credentialsOf(e.Kubeconfig, e.Context)
	return fmt.Sprintf("%v: runtime %s was provisioned in %s, namespace %s (cluster identities are the UID of namespace %s), "+
		"but %s now reaches cluster %s at %s. Not treating the runtime as deleted: point kubeconfig_path and kubeconfig_context "+
		"at the cluster the runtime was provisioned in. If that cluster is gone for good, remove the runtime from state with "+
		"`terraform state rm`", provisioner.ErrIdentityMismatch, e.ResourceID, was, e.Namespace, identityNamespace, via, e.Current, e.CurrentServer)
}

// credentialsOf names where the provisioner's credentials come from, as the spec sets them.
func credentialsOf(kubeconfig, context string) string {
	if kubeconfig == "" {
		return "the in-cluster service account"
	}
	if context != "" {
		return "kubeconfig_path " + kubeconfig + " (context " + context + ")"
	}
	return "kubeconfig_path " + kubeconfig
}

// Unwrap returns provisioner.ErrIdentityMismatch.
func (e *ClusterMismatchError) Unwrap() error { return provisioner.ErrIdentityMismatch }
