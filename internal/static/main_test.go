package static

import (
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) } // stops the shared PostgreSQL server after the tests
