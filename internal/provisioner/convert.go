package provisioner

import (
	"github.com/go-viper/mapstructure/v2"
)

// asMap converts a struct with `mapstructure` tags to a plain map, as Rill's AsMap methods do: every
// field lands under its tag, so a field added to RuntimeArgs or a config cannot be left out of the map
// the provisioners receive (TestAsMapRoundTrip fails when a field has no tag).
func asMap(v any) map[string]any {
	res := make(map[string]any)
	if err := mapstructure.Decode(v, &res); err != nil {
		panic(err) // a struct of plain fields always decodes into a map
	}
	return res
}
