terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

resource "rill_runtime" "analytics" {
  # A name makes the runtime's ID follow from its provisioner and name: an apply that is killed
  # half-way leaves nothing behind, the next one adopts what it finds.
  name        = "analytics"
  slots       = 2
  environment = "prod"
  annotations = {
    organization_name = "acme"
    project_name      = "analytics"
  }

  timeouts {
    create = "15m"
  }
}

# Pin a provisioner other than the default (changing it re-creates the runtime).
resource "rill_runtime" "staging" {
  provisioner_name = "static-pool"
  slots            = 1
  version          = "v0.50.0"
  hibernated       = true # a static pool keeps the slots and records it; Kubernetes scales to zero
}
