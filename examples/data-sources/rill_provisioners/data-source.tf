terraform {
  required_providers {
    rill = {
      source = "rill-provisioner/rill"
    }
  }
}

# Read during plan, before any change of this run is applied: the pool as it is now.
data "rill_provisioners" "all" {}

locals {
  # free_slots is null for provisioners without a fixed capacity (kubernetes, clickhouse-static).
  default_free_slots = one([
    for p in data.rill_provisioners.all.provisioners : p.free_slots if p.is_default
  ])
}

# Stop the pipeline: a failed precondition is an error, so `terraform plan` exits non-zero and
# nothing is applied. It is checked on every plan, also one that adds nothing, so it guards headroom:
# it fails as soon as the pool has fewer than 4 free slots, whoever took them.
resource "rill_runtime" "analytics" {
  slots = 2

  lifecycle {
    precondition {
      condition     = coalesce(local.default_free_slots, 0) >= 4
      error_message = "The default pool has fewer than 4 free slots: add a host to it (or free slots) before applying."
    }
  }
}

# The pool as this run leaves it: read after the runtime above is applied when the run changes it,
# else during the plan (so a plan with nothing to change reads it then, and has no changes).
data "rill_provisioners" "after" {
  depends_on = [rill_runtime.analytics]
}

# Report only: a check block never stops a run; a failed assertion is a warning. (It reads the data
# source above. A data source of its own inside the check block would be read again during every
# apply, so `terraform plan -detailed-exitcode` would never exit 0: a pipeline that reads the exit
# code would see changes on every run.)
check "pool_not_full" {
  assert {
    condition = alltrue([
      for p in data.rill_provisioners.after.provisioners : coalesce(p.free_slots, 1) > 0
    ])
    error_message = "A static pool is full: the next runtime placed on it will fail."
  }
}

output "pool_use" {
  value = {
    for p in data.rill_provisioners.after.provisioners : p.name => {
      for h in p.hosts : h.host => "${h.used_slots}/${h.slots}"
    }
  }
}

# Health: each provisioner is asked whether it works (its ledger, cluster or ClickHouse server
# answers), as Rill's admin service asks periodically. A failure is in check_error, not an error of
# the read, so this check block reports it as a warning and the run goes on.
data "rill_provisioners" "health" {
  check = true

  timeouts {
    read = "30s" # a server that never answers costs the plan this much, not the default 5m
  }
}

check "provisioners_work" {
  assert {
    condition = alltrue([for p in data.rill_provisioners.health.provisioners : p.check_error == null])
    error_message = join("; ", [
      for p in data.rill_provisioners.health.provisioners : "${p.name}: ${p.check_error}" if p.check_error != null
    ])
  }
}
