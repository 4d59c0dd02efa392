terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

# A static pool of two hosts; runtimes without `provisioner_name` use the default. The JSON is the
# same as Rill's RILL_ADMIN_PROVISIONER_SET_JSON, and may carry comments.
provider "rill" {
  default_provisioner = "static-pool"
  # Several pipelines share one pool: keep the ledger in PostgreSQL. Leave it out for a local SQLite file.
  ledger_dsn = var.ledger_dsn

  provisioner_set_json = <<-JSON
    {
      "static-pool": {
        "type": "static",
        "spec": {
          "placement": "spread", // or "pack"
          "runtimes": [
            {"host": "http://runtime-1.internal:9091", "slots": 50, "data_dir": "/mnt/data", "audience_url": "http://runtime-1.internal:8081"},
            {"host": "http://runtime-2.internal:9091", "slots": 50, "data_dir": "/mnt/data", "audience_url": "http://runtime-2.internal:8081"}
          ]
        }
      }
    }
  JSON
}

variable "ledger_dsn" {
  type      = string
  sensitive = true
  default   = null
}
