package resources_test

import (
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

func TestMain(m *testing.M) { acctest.Main(m) }
