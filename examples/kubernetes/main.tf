# Rill runtimes on Kubernetes: a Deployment, Service, PVC and two Ingresses per runtime, applied with
# server-side apply. The default templates are embedded in the provider; point template_paths at your
# own files to change them (a broken template fails `terraform plan` with its file and line).
# rbac.yaml next to this file is the least the provider's credentials need in the namespace.

terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

variable "kubeconfig_path" {
  type    = string
  default = "~/.kube/config"
}

# The URL runtimes are reached at; '*' becomes each runtime's provision ID. The provider checks
# readiness with an HTTP GET of <host>/v1/ping from where Terraform runs, so this name must resolve
# there (on kind: "http://*.localtest.me:8080", see the Kubernetes on kind guide).
variable "runtime_host" {
  type    = string
  default = "https://*.runtimes.example.com"
}

provider "rill" {
  rill_version = "v0.50.0" # image tag for runtimes that set no version
  provisioner_set_json = jsonencode({
    k8s = {
      type = "kubernetes"
      spec = {
        host            = var.runtime_host
        namespace       = "rill" # must exist
        image           = "rilldata/rill"
        data_dir        = "/data"
        timeout_seconds = 600
        kubeconfig_path = var.kubeconfig_path
        qps             = 50
        burst           = 100
        ping_path       = "/v1/ping" # "" switches the HTTP readiness probe off
        # template_paths = { deployment = "${path.module}/templates/deployment.yaml" }
      }
    }
  })
}

resource "rill_runtime" "analytics" {
  slots = 2 # 2 CPU, 8Gi memory, 80Gi volume
  annotations = {
    organization_name = "acme"
    project_name      = "analytics"
  }
  timeouts {
    create = "10m"
  }
}

resource "rill_runtime" "archive" {
  slots      = 1
  version    = "v0.49.2"
  hibernated = true # scaled to zero; volume and Service kept
}

output "analytics_host" {
  value = rill_runtime.analytics.host
}
