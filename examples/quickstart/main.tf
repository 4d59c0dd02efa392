# Quickstart: three Rill runtimes on a static pool of two hosts, with the default SQLite ledger.
# Run it with `make quickstart` from the repository root (it builds the provider and wires it in).

terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

provider "rill" {
  # The same JSON Rill's admin service reads from RILL_ADMIN_PROVISIONER_SET_JSON; comments are fine.
  provisioner_set_json = <<-JSON
    {
      "static-pool": {
        "type": "static",
        "spec": {
          "runtimes": [
            // Two pre-provisioned runtime hosts with 4 slots each.
            {"host": "http://localhost:9091", "slots": 4, "data_dir": "/mnt/data", "audience_url": "http://localhost:8081"},
            {"host": "http://localhost:9092", "slots": 4, "data_dir": "/mnt/data", "audience_url": "http://localhost:8082"}
          ]
        }
      }
    }
  JSON
  default_provisioner  = "static-pool"
}

resource "rill_runtime" "analytics" {
  slots       = 2
  environment = "prod"
  annotations = {
    organization_name = "acme"
    project_name      = "analytics"
  }
}

resource "rill_runtime" "marketing" {
  slots = 1
  annotations = {
    organization_name = "acme"
    project_name      = "marketing"
  }
}

resource "rill_runtime" "sandbox" {
  slots       = 1
  environment = "dev"
}

data "rill_provisioners" "pool" {
  depends_on = [rill_runtime.analytics, rill_runtime.marketing, rill_runtime.sandbox]
}

output "runtimes" {
  value = {
    for name, rt in {
      analytics = rill_runtime.analytics
      marketing = rill_runtime.marketing
      sandbox   = rill_runtime.sandbox
    } : name => { host = rt.host, slots = rt.slots, cpu = rt.cpu, memory_gb = rt.memory_gb }
  }
}

output "pool_use" {
  value = [for h in data.rill_provisioners.pool.provisioners[0].hosts : "${h.host}: ${h.used_slots}/${h.slots} slots"]
}
