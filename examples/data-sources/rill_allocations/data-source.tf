terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

# Every allocation of the static pool "static-pool", with what an import needs.
data "rill_allocations" "pool" {
  provisioner_name = "static-pool"
}

# Unnamed allocations (a named runtime is adopted by the next apply, never orphaned).
output "unnamed_allocations" {
  value = [for a in data.rill_allocations.pool.allocations : a.import_id if a.name == ""]
}
