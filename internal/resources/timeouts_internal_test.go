package resources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// The timeouts block of both resources documents the defaults the operations use (the generated
// docs read these descriptions), in the short form a user writes.
func TestTimeoutsDocumentTheirDefaults(t *testing.T) {
	want := map[string]string{"create": "default `20m`", "read": "default `5m`", "update": "default `20m`", "delete": "default `10m`"}
	for name, r := range map[string]resource.Resource{"rill_runtime": NewRuntimeResource(), "rill_clickhouse": NewClickHouseResource()} {
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		b, ok := resp.Schema.Blocks["timeouts"].(schema.SingleNestedBlock)
		if !ok {
			t.Fatalf("%s: timeouts is a %T", name, resp.Schema.Blocks["timeouts"])
		}
		if !strings.Contains(b.MarkdownDescription, "create `20m`, read `5m`, update `20m`, delete `10m`") {
			t.Errorf("%s: timeouts block description %q lacks the defaults", name, b.MarkdownDescription)
		}
		for attr, w := range want {
			a, ok := b.Attributes[attr].(schema.StringAttribute)
			if !ok || !strings.Contains(a.MarkdownDescription, w) {
				t.Errorf("%s: timeouts.%s description %q lacks %q", name, attr, a.MarkdownDescription, w)
			}
		}
	}
	for d, w := range map[time.Duration]string{20 * time.Minute: "20m", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 45 * time.Second: "45s"} {
		if got := shortDuration(d); got != w {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, w)
		}
	}
}
