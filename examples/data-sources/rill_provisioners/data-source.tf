data "rill_provisioners" "all" {}

# Fail the pipeline early when the default static pool has fewer than 4 free slots.
check "pool_has_room" {
  assert {
    condition = one([
      for p in data.rill_provisioners.all.provisioners : p.free_slots if p.is_default
    ]) >= 4
    error_message = "The default pool has fewer than 4 free slots."
  }
}

output "pool_use" {
  value = {
    for p in data.rill_provisioners.all.provisioners : p.name => {
      for h in p.hosts : h.host => "${h.used_slots}/${h.slots}"
    }
  }
}
