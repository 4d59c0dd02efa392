package resources

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// slotsValidator accepts a whole number from 1 to provisioner.MaxSlots, and names the attribute for
// anything else (1.5, 0, 2^63), at plan time.
type slotsValidator struct{}

var _ validator.Number = slotsValidator{}

func (slotsValidator) Description(context.Context) string {
	return fmt.Sprintf("a whole number from 1 to %d", provisioner.MaxSlots)
}

func (v slotsValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v slotsValidator) ValidateNumber(ctx context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueBigFloat()
	if n.IsInt() && n.Cmp(big.NewFloat(1)) >= 0 && n.Cmp(big.NewFloat(float64(provisioner.MaxSlots))) <= 0 {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid slots",
		fmt.Sprintf("%s must be %s, got %s.", req.Path, v.Description(ctx), n.Text('f', -1)))
}

// slotsOf returns a validated slots value as an int (0 when null or unknown).
func slotsOf(n types.Number) int {
	if n.IsNull() || n.IsUnknown() {
		return 0
	}
	i, _ := n.ValueBigFloat().Int64()
	return int(i)
}
