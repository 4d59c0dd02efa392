// Package functions holds the provider's functions (Terraform 1.8 or newer, OpenTofu 1.7 or newer),
// called as provider::rill::<name>(...). They need no provider configuration.
package functions

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
)

// List is the provider's functions, for provider.ProviderWithFunctions.
func List() []func() function.Function {
	return []func() function.Function{NewDSNWithPassword}
}

// DSNWithPassword is provider::rill::dsn_with_password(dsn, password): a rill_clickhouse's
// dsn_without_password with the password its configuration chose (password_wo) put back, for
// clients that take a whole DSN. The work is the contract's provisioner.DSNWithPassword.
type DSNWithPassword struct{}

// NewDSNWithPassword returns the function.
func NewDSNWithPassword() function.Function { return DSNWithPassword{} }

// Metadata implements function.Function.
func (DSNWithPassword) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "dsn_with_password"
}

// Definition implements function.Function.
func (DSNWithPassword) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "A ClickHouse DSN with a password put in",
		MarkdownDescription: "Returns `dsn` with `password` as its user's password: the DSN a client needs, from a " +
			"`rill_clickhouse`'s `dsn_without_password` and the password its configuration gives in `password_wo` (which " +
			"the provider never stores). The password goes, escaped, where the ClickHouse client reads the user from: beside " +
			"a `username` query parameter (which wins over the user info), else into the user info " +
			"(`clickhouse://user:password@host:9000/database`); every password already in `dsn` is removed, and the rest " +
			"(hosts, database, options) is kept as written. Terraform carries the " +
			"arguments' marks to the result: from a sensitive password it is sensitive, from an ephemeral one ephemeral " +
			"(usable in write-only arguments and ephemeral resources). Needs Terraform 1.8 or newer, or OpenTofu 1.7 or newer.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "dsn",
				MarkdownDescription: "A ClickHouse DSN that names its user, such as `rill_clickhouse`'s `dsn_without_password` or `write_dsn_without_password`.",
			},
			function.StringParameter{
				Name: "password",
				MarkdownDescription: "The user's password (not empty). Give it as a sensitive or ephemeral value: when a call " +
					"fails, Terraform's error shows the values of the call's arguments that are neither.",
			},
		},
		Return: function.StringReturn{},
	}
}

// Run implements function.Function. An error names the argument at fault and quotes neither.
func (DSNWithPassword) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var dsn, password string
	if resp.Error = req.Arguments.Get(ctx, &dsn, &password); resp.Error != nil {
		return
	}
	out, err := provisioner.DSNWithPassword(dsn, password)
	if err != nil {
		argument := int64(0)
		if errors.Is(err, provisioner.ErrEmptyDSNPassword) {
			argument = 1
		}
		resp.Error = function.NewArgumentFuncError(argument, err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, out)
}
