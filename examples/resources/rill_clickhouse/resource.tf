# The provider's set needs a clickhouse-static provisioner, e.g.
#   "shared-clickhouse": {"type": "clickhouse-static", "spec": {"dsn_env": "RILL_CLICKHOUSE_ADMIN_DSN"}}
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
