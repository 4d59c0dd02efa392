package kubernetes

import (
	"reflect"
	"testing"
)

func TestInputsDrift(t *testing.T) {
	want := map[string]string{"data_dir": "/data", "host": "abc.example.com", "image": "rilldata/rill"}
	for _, tc := range []struct {
		name, recorded string
		drift          []string
	}{
		{"no annotation (an earlier version, or Rill's admin service)", "", nil},
		{"annotation that does not parse", "not json", nil},
		{"equal", `{"data_dir":"/data","host":"abc.example.com","image":"rilldata/rill"}`, nil},
		{"a field the record lacks", `{"host":"abc.example.com","image":"rilldata/rill"}`, nil},
		{"data_dir differs", `{"data_dir":"/mnt/data","host":"abc.example.com","image":"rilldata/rill"}`,
			[]string{"spec.data_dir: the runtime was applied with /mnt/data, the spec now says /data"}},
		{"two differ, sorted by field", `{"data_dir":"/d","host":"abc.example.com","image":"my/rill"}`,
			[]string{
				"spec.data_dir: the runtime was applied with /d, the spec now says /data",
				"spec.image: the runtime was applied with my/rill, the spec now says rilldata/rill",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inputsDrift(tc.recorded, want); !reflect.DeepEqual(got, tc.drift) {
				t.Fatalf("inputsDrift(%q) = %q, want %q", tc.recorded, got, tc.drift)
			}
		})
	}
}
