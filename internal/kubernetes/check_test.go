package kubernetes

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

func TestAnnotationsDrift(t *testing.T) {
	// Applied with 1 slot and v1; the record of what is there says 2 slots (resized outside this
	// configuration: the state's slots plan the update).
	want := map[string]string{AnnotationSlots: "1", AnnotationVersion: "v1", AnnotationTemplateInputs: `{"host":"h"}`}
	observed := map[string]string{AnnotationSlots: "2", AnnotationVersion: "v1", AnnotationTemplateInputs: `{"host":"h"}`}
	for _, tc := range []struct {
		name  string
		live  map[string]string
		drift []string
	}{
		{"as the apply writes them", map[string]string{AnnotationSlots: "1", AnnotationVersion: "v1", AnnotationTemplateInputs: `{"host":"h"}`}, nil},
		{"saying what is there", map[string]string{AnnotationSlots: "2", AnnotationVersion: "v1", AnnotationTemplateInputs: `{"host":"h"}`}, nil},
		{"others' annotations", map[string]string{
			AnnotationSlots: "1", AnnotationVersion: "v1", AnnotationTemplateInputs: `{"host":"h"}`,
			"deployment.kubernetes.io/revision": "3", "kubectl.kubernetes.io/last-applied-configuration": "{}",
		}, nil},
		{"the template inputs are inputsDrift's", map[string]string{AnnotationSlots: "1", AnnotationVersion: "v1"}, nil},
		{"edited and removed, sorted by key", map[string]string{AnnotationSlots: "3", AnnotationTemplateInputs: `{"host":"h"}`}, []string{
			`Deployment ns/rt: annotation rill.provisioner/slots is "3", want "1"`,
			`Deployment ns/rt: annotation rill.provisioner/version is missing, want "v1"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := &unstructured.Unstructured{Object: map[string]any{}}
			live.SetNamespace("ns")
			live.SetName("rt")
			live.SetAnnotations(tc.live)
			if got := annotationsDrift(live, "Deployment", want, observed); !reflect.DeepEqual(got, tc.drift) {
				t.Fatalf("annotationsDrift = %q, want %q", got, tc.drift)
			}
		})
	}
}
