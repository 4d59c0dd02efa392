# A database whose password you choose (write-only: never stored in state or plan), and the whole
# DSN its clients need, built from `dsn_without_password` and that password.
terraform {
  required_version = ">= 1.11" # password_wo (write-only) and ephemeral variables

  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

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

# From an ephemeral password the DSN is ephemeral too: pass it on to a write-only argument, such as
# a secret store's (`secret_string_wo` of `aws_secretsmanager_secret_version`, with
# `secret_string_wo_version` bumped with `password_wo_version`), and it is stored nowhere.
locals {
  reporting_clickhouse_dsn = provider::rill::dsn_with_password(
    rill_clickhouse.reporting.dsn_without_password,
    var.reporting_clickhouse_password,
  )
}
