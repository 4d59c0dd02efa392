package functions

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Run returns the contract's DSNWithPassword, and its errors name the argument at fault (the
// diagnostic Terraform shows says "Invalid value for "<name>" parameter") without quoting either.
func TestDSNWithPasswordNamesTheArgumentAtFault(t *testing.T) {
	for _, c := range []struct {
		dsn, password, want string
		argument            int64 // -1: no error
	}{
		{"clickhouse://rill_u@h:9000/rill_db", "s3cret/pw", "clickhouse://rill_u:s3cret%2Fpw@h:9000/rill_db", -1},
		{"https://h:8443/rill_db", "s3cret/pw", "dsn names no user", 0},
		{"not a dsn", "s3cret/pw", "dsn is not a URL", 0},
		{"clickhouse://rill_u@h:9000/rill_db", "", "password is empty", 1},
	} {
		resp := &function.RunResponse{Result: function.NewResultData(types.StringUnknown())}
		NewDSNWithPassword().Run(context.Background(), function.RunRequest{
			Arguments: function.NewArgumentsData([]attr.Value{types.StringValue(c.dsn), types.StringValue(c.password)}),
		}, resp)
		switch {
		case c.argument < 0:
			if resp.Error != nil || !resp.Result.Value().Equal(types.StringValue(c.want)) {
				t.Errorf("%q: %v (%v), want %q", c.dsn, resp.Result.Value(), resp.Error, c.want)
			}
		case resp.Error == nil || resp.Error.FunctionArgument == nil || *resp.Error.FunctionArgument != c.argument:
			t.Errorf("%q, %q: %v, want an error about argument %d", c.dsn, c.password, resp.Error, c.argument)
		case !strings.Contains(resp.Error.Text, c.want) || strings.Contains(resp.Error.Text, "s3cret") || strings.Contains(resp.Error.Text, c.dsn):
			t.Errorf("%q, %q: %q, want %q without the arguments", c.dsn, c.password, resp.Error.Text, c.want)
		}
	}
}
