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

  # A ledger or cluster that does not answer (a server that stopped answering, a table another session
  # keeps locked) fails the plan after this long, instead of holding it up; default 5m. Applies that
  # write the ledger meanwhile do not hold up this read.
  timeouts {
    read = "1m"
  }
}

# Unnamed allocations (a named runtime is adopted by the next apply, never orphaned).
output "unnamed_allocations" {
  value = [for a in data.rill_allocations.pool.allocations : a.import_id if a.name == ""]
}
