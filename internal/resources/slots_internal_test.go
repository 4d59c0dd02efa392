package resources

import (
	"context"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestSlotsValidatorNamesTheAttribute(t *testing.T) {
	for in, ok := range map[string]bool{"1": true, "214748364": true, "0": false, "-3": false, "1.5": false, "214748365": false, "2147483648": false, "9223372036854775808": false, "1e300": false} {
		f, _, err := big.ParseFloat(in, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		resp := &validator.NumberResponse{}
		slotsValidator{}.ValidateNumber(context.Background(), validator.NumberRequest{Path: path.Root("slots"), ConfigValue: types.NumberValue(f)}, resp)
		if ok == resp.Diagnostics.HasError() {
			t.Errorf("slots = %s: accepted %v, want %v (%v)", in, !resp.Diagnostics.HasError(), ok, resp.Diagnostics)
		}
		if !ok && !strings.Contains(resp.Diagnostics[0].Detail(), "slots must be a whole number from 1 to 214748364, got ") {
			t.Errorf("slots = %s: %s", in, resp.Diagnostics[0].Detail())
		}
	}
}

func TestAddSaturatingNeverWraps(t *testing.T) {
	if got := addSaturating(math.MaxInt64, math.MaxInt64); got != math.MaxInt64 {
		t.Fatalf("got %d", got)
	}
	if got := addSaturating(2, 3); got != 5 {
		t.Fatalf("got %d", got)
	}
}
