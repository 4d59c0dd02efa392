# A runtime is imported by "<provisioner name>/<resource id>".
terraform import rill_runtime.analytics static-pool/3f1c2a9e-0a4b-4d1e-9b7a-2f8f1c9d0e11
