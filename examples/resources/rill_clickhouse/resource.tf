# The provider's set needs a clickhouse-static provisioner, e.g.
#   "shared-clickhouse": {"type": "clickhouse-static", "spec": {"dsn_env": "RILL_CLICKHOUSE_ADMIN_DSN"}}
terraform {
  required_version = ">= 1.11" # password_wo (write-only) and ephemeral variables

  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

# Generated password: the provider chooses it and keeps it in `dsn`, so it is in the state.
resource "rill_clickhouse" "analytics" {
  provisioner_name = "shared-clickhouse"
  annotations = {
    organization_name = "acme"
    project_name      = "analytics"
  }
}

# Hand the DSN to the runtime's project (it is sensitive: Terraform keeps it out of plan output).
output "analytics_clickhouse_dsn" {
  value     = rill_clickhouse.analytics.dsn
  sensitive = true
}

# Write-only password (Terraform 1.11+, OpenTofu 1.11+): you choose it, e.g. from a secrets manager
# through an ephemeral variable or resource; it is never stored in state or plan. `dsn` stays null:
# clients combine `dsn_without_password` with the password they already have (the function
# `provider::rill::dsn_with_password` does it, in an ephemeral value). Bump the version to
# rotate: the apply adds the new password, checks it logs in, then removes the old one.
variable "reporting_clickhouse_password" {
  type      = string
  ephemeral = true
}

resource "rill_clickhouse" "reporting" {
  provisioner_name    = "shared-clickhouse"
  password_wo         = var.reporting_clickhouse_password
  password_wo_version = 1
  annotations = {
    organization_name = "acme"
    project_name      = "reporting"
  }
}

output "reporting_clickhouse_dsn_without_password" {
  value = rill_clickhouse.reporting.dsn_without_password
}
