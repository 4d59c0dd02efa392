// Package templates embeds the default Kubernetes manifest templates of the kubernetes provisioner
// (internal/kubernetes). It lives here, at the top level, because go:embed cannot reach into parent
// folders; the .yaml files beside it are the defaults that a provisioner spec's template_paths
// override one by one.
//
// Templates are Go text/template files rendered once per runtime; see internal/kubernetes/render.go
// for the data they receive (.Image, .ImageTag, .ProvisionID, .Host, .Hostname, .CPU, .MemoryGB,
// .StorageBytes, .Slots, .Environment, .Replicas, .Names.*, .Annotations, .DataDir, .Namespace) and
// the functions they may call (Sprig's, and this provider's sanitizeLabel and toJSON; see internal/kubernetes/funcs.go).
// The provisioner sets metadata.name, metadata.namespace, its labels and annotations itself, and
// forces the Deployment's spec.replicas, so templates need not.
//
// Note for tfplugindocs: this folder holds manifests, not documentation templates; run it with
// --website-source-dir pointing elsewhere.
package templates

import "embed"

// FS holds the default templates: deployment.yaml, service.yaml, pvc.yaml, http_ingress.yaml and
// grpc_ingress.yaml.
//
//go:embed *.yaml
var FS embed.FS
