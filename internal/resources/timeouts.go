package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	dstimeouts "github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The `timeouts` blocks of the resources and the data sources: their defaults, descriptions and the
// rule that a timeout is positive, in one place.

// Default operation timeouts, overridable per resource in a `timeouts` block.
const (
	defaultCreateTimeout = 20 * time.Minute
	defaultReadTimeout   = 5 * time.Minute
	defaultUpdateTimeout = 20 * time.Minute
	defaultDeleteTimeout = 10 * time.Minute
)

// defaultTimeouts are the defaults above by the block's attribute names.
var defaultTimeouts = map[string]time.Duration{
	"create": defaultCreateTimeout, "read": defaultReadTimeout, "update": defaultUpdateTimeout, "delete": defaultDeleteTimeout,
}

// operationTimeout is the timeout of one operation of a resource: how long it may take, and how its
// `timeouts` block sets it, for the error of an operation that it ended (see call.end).
type operationTimeout struct {
	op    string // the block's attribute: "create", "read", "update" or "delete"
	d     time.Duration
	value string // as the block sets it; "" when it does not and the default applies
	diags diag.Diagnostics
}

// resourceTimeout is the timeout of operation op ("create", "read", "update" or "delete") that t, a
// resource's `timeouts` block (from the plan, or for read and delete the state), sets.
func resourceTimeout(ctx context.Context, t timeouts.Value, op string) operationTimeout {
	o := operationTimeout{op: op}
	def, ok := defaultTimeouts[op]
	if !ok {
		panic("resourceTimeout: no operation " + op)
	}
	// The library has a method per operation; the default comes from the one table.
	switch op {
	case "create":
		o.d, o.diags = t.Create(ctx, def)
	case "read":
		o.d, o.diags = t.Read(ctx, def)
	case "update":
		o.d, o.diags = t.Update(ctx, def)
	case "delete":
		o.d, o.diags = t.Delete(ctx, def)
	}
	if !t.IsNull() && !t.IsUnknown() {
		if v, ok := t.Attributes()[op].(types.String); ok && !v.IsNull() && !v.IsUnknown() {
			o.value = v.ValueString()
		}
	}
	return o
}

// setting names the attribute and its value as the user wrote it, or its default.
func (o operationTimeout) setting() string {
	if o.value == "" {
		return fmt.Sprintf("`timeouts.%s` (not set: its default `%s`)", o.op, shortDuration(defaultTimeouts[o.op]))
	}
	return fmt.Sprintf("`timeouts.%s = %q`", o.op, o.value)
}

// deadlinePassed is the paragraph that an error ended by the operation's timeout gets: which setting
// that is, and how to raise it. Terraform hands a refresh and a destroy the value in the state (see
// fromState): raising `timeouts.read` in the configuration does not reach the refresh of the next
// plan or apply, which fails the same way, until an apply without a refresh stores it.
func (o operationTimeout) deadlinePassed() string {
	s := fmt.Sprintf("The %s ran out of time: it stopped at its deadline, %s; the error above says what it was waiting for. "+
		"If that is only slow, raise the value in the resource's `timeouts` block", timeoutVerb[o.op], o.setting())
	switch o.op {
	case "read":
		s += ". Terraform hands a refresh the value in the state, not the configuration's, so the refresh of the next plan or apply " +
			"fails the same way: after raising it, run `terraform apply -refresh=false` once to store the new value; later refreshes use it."
	case "delete":
		s += ". Terraform hands a destroy the value in the state, not the configuration's: after raising it, run `terraform apply` " +
			"(`-refresh=false` if the refresh fails too) to store the new value, then destroy."
	default:
		s += "."
	}
	return s
}

// timeoutsBlock is the `timeouts` block of rill_runtime and rill_clickhouse, its attributes described
// with the defaults above (the documentation's one source for them).
func timeoutsBlock(ctx context.Context) schema.Block {
	block := timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true})
	b, ok := block.(schema.SingleNestedBlock)
	if !ok {
		return block // a dependency upgrade changed its shape; TestTimeoutsDocumentTheirDefaults fails
	}
	for name, d := range defaultTimeouts {
		a, ok := b.Attributes[name].(schema.StringAttribute)
		if !ok {
			continue // as above
		}
		a.MarkdownDescription = timeoutDescription(timeoutVerb[name], d) + fromState[name]
		a.Validators = timeoutValidators
		b.Attributes[name] = a
	}
	b.MarkdownDescription = fmt.Sprintf("Operation timeouts; defaults: create `%s`, read `%s`, update `%s`, delete `%s`.",
		shortDuration(defaultCreateTimeout), shortDuration(defaultReadTimeout), shortDuration(defaultUpdateTimeout), shortDuration(defaultDeleteTimeout))
	return b
}

// fromState says, for the operations whose timeout Terraform passes from the state rather than the
// configuration (it sends a refresh and a destroy no configuration), when a changed value takes effect:
// a user who added `delete = "20s"` and ran `terraform destroy` waited the default 10 minutes.
var fromState = map[string]string{
	"read": " Terraform hands a refresh the value of the last apply (from the state): a new value takes effect after an apply that stores it. " +
		"When the refresh is what runs out of time, a plain apply refreshes first with the old value and fails the same way: " +
		"run `terraform apply -refresh=false` once to store the new value.",
	"delete": " Terraform hands a destroy the value of the last apply (from the state): a new value takes effect after an apply, not in a `terraform destroy` run right after the edit.",
}

var timeoutVerb = map[string]string{"create": "create", "read": "refresh (read)", "update": "update", "delete": "destroy (delete)"}

// timeoutDescription describes a timeouts attribute, the operation it bounds ("refresh (read)") and its
// default, for the resources' and the data sources' blocks alike.
func timeoutDescription(operation string, d time.Duration) string {
	return fmt.Sprintf("How long the %s may take, as a positive Go duration (`30s`, `1h30m`); default `%s`.", operation, shortDuration(d))
}

// shortDuration writes whole hours and minutes without the zero parts time.Duration.String adds
// (20m, not 20m0s).
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// timeoutValidators replace the timeouts package's own validator of every timeouts attribute: its
// message for a value that is no duration (`"abc" must be a string containing a sequence of decimal
// numbers ... such as "300ms", "-1.5h" or "2h45m"`) offered a negative example, which
// positiveDurationValidator then refused. One message, naming the attribute, covers both.
var timeoutValidators = []validator.String{positiveDurationValidator{}}

// positiveDurationValidator refuses, at plan time, a timeout that is no Go duration, or one of zero or
// less: the operation's context would end before it began, and every apply would fail with a deadline
// that says nothing of the setting.
type positiveDurationValidator struct{}

var _ validator.String = positiveDurationValidator{}

func (positiveDurationValidator) Description(context.Context) string {
	return `a positive Go duration, such as "30s" or "10m"`
}

func (v positiveDurationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v positiveDurationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid timeout",
			fmt.Sprintf("%s must be %s, got %q.", req.Path, v.Description(ctx), req.ConfigValue.ValueString()))
	}
}

// dataSourceTimeoutsBlock is the `timeouts` block of the data sources: a read timeout only, whose
// default is the resources' (defaultReadTimeout). A data source reads the ledger or the cluster as a
// refresh does, and an unreachable or locked one must not hold a plan up for longer.
func dataSourceTimeoutsBlock(ctx context.Context) dsschema.Block {
	block := dstimeouts.BlockWithOpts(ctx, dstimeouts.Opts{})
	b, ok := block.(dsschema.SingleNestedBlock)
	if !ok {
		return block // a dependency upgrade changed its shape; TestDataSourceTimeoutsDocumentTheirDefault fails
	}
	if a, ok := b.Attributes["read"].(dsschema.StringAttribute); ok {
		a.MarkdownDescription = timeoutDescription("read", defaultReadTimeout)
		a.Validators = timeoutValidators
		b.Attributes["read"] = a
	}
	b.MarkdownDescription = fmt.Sprintf("Operation timeouts; default: read `%s`.", shortDuration(defaultReadTimeout))
	return b
}
