# A ClickHouse database and its user are imported by "<provisioner name>/<resource id>".
# ClickHouse keeps only a hash of the user's password, so the import cannot read it back: the next
# plan shows an in-place update (with a warning) that sets a new password, and the dsn changes.
terraform import rill_clickhouse.analytics shared-clickhouse/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11
