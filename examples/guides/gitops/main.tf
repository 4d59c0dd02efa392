# One repository's runtimes, applied by a pipeline. Several repositories (or pipelines) share the
# static pool through one PostgreSQL ledger; each keeps its own remote state.
terraform {
  required_version = ">= 1.5.0"

  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }

  # Remote state in PostgreSQL (the connection string comes from PG_CONN_STR). Any backend with
  # locking works; the state schema is per repository, never shared.
  backend "pg" {
    schema_name = "rill_runtimes_analytics"
  }
}

# Both secrets come from the pipeline's environment, never from the repository:
#   RILL_ADMIN_PROVISIONER_SET_JSON  the provisioner set (the same JSON Rill's admin service reads)
#   RILL_LEDGER_DSN                  postgres://... of the ledger every pipeline on this pool shares
provider "rill" {
  default_provisioner = "static-pool"
}

# The team that owns this repository. Runtime names are identities in the pool, shared by every
# repository and workspace that draws from it, so they carry the team and the workspace.
variable "team" {
  type    = string
  default = "analytics"
}

# One entry per project: a pull request that adds a line plans one more runtime.
variable "projects" {
  type = map(object({
    slots       = number
    environment = optional(string, "prod")
  }))
  default = {
    analytics = { slots = 2 }
    marketing = { slots = 1 }
    sandbox   = { slots = 1, environment = "dev" }
  }
}

resource "rill_runtime" "project" {
  for_each = var.projects

  # A name makes a run killed mid-apply (a runner's hard timeout) harmless: the next run finds the
  # runtime at the name's ID and adopts it. A killed run's unnamed runtimes are in no state, and no
  # plan shows them (docs: guides/recovering-orphaned-runtimes).
  name        = "${var.team}-${terraform.workspace}-${each.key}"
  slots       = each.value.slots
  environment = each.value.environment
  annotations = {
    organization_name = "acme"
    project_name      = each.key
  }
}

output "hosts" {
  value = { for name, rt in rill_runtime.project : name => rt.host }
}
