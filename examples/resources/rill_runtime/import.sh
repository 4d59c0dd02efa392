# A runtime is imported by "<provisioner name>/<resource id>". The import checks that the runtime
# belongs to that provisioner, and restores its name, version, hibernated, environment and annotations
# from the ledger, so `terraform plan -generate-config-out=generated.tf` with an import block writes a
# configuration that plans no change. rill_allocations lists the IDs.
terraform import rill_runtime.analytics static-pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11
