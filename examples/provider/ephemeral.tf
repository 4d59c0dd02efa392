# Terraform 1.10+ (OpenTofu 1.11+): the ledger DSN and the set arrive through ephemeral variables, so
# they are never written to a saved plan file (a plan file keeps the values of ordinary variables).
# Set them in the environment, e.g. TF_VAR_ledger_dsn and TF_VAR_provisioner_set_json, for plan and
# again for apply: a saved plan does not carry ephemeral values.
terraform {
  required_version = ">= 1.10" # ephemeral variables

  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

variable "ledger_dsn" {
  type      = string
  ephemeral = true
}

variable "provisioner_set_json" {
  type      = string
  ephemeral = true
}

provider "rill" {
  ledger_dsn           = var.ledger_dsn
  provisioner_set_json = var.provisioner_set_json
}
