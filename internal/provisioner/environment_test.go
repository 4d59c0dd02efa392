package provisioner

import (
	"errors"
	"testing"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// An error an initializer marks as the environment's keeps its field and text through a set, one error
// of SplitErrors's (also one not in a FieldError), so that the provider can drop it from `terraform validate` alone; the spec's other
// errors are not marked.
func TestEnvironmentErrorsKeepTheirFieldAndTextThroughASet(t *testing.T) {
	Initializers["fake-env"] = func([]byte, database.DB, *zap.Logger) (Provisioner, error) {
		return nil, errors.Join(EnvironmentErrorf("dsn_env", "environment variable %q is not set", "X"),
			&FieldError{Path: "kubeconfig_path", Err: FromEnvironment(errors.New("cannot expand ~"))},
			Errorf("cluster", "must not be blank"), FromEnvironment(errors.New("no field")))
	}
	t.Cleanup(func() { delete(Initializers, "fake-env") })
	_, _, err := NewSetWithWarnings(`{"p": {"type": "fake-env"}}`, nil, nil)
	var got []string
	for _, e := range SplitErrors(err) {
		var se *SetError
		if !errors.As(e, &se) {
			t.Fatalf("%v is not a SetError", e)
		}
		got = append(got, e.Error())
		if fromEnv := se.Field != "spec.cluster"; errors.Is(e, ErrFromEnvironment) != fromEnv {
			t.Errorf("%v: marked as the environment's: %v, want %v", e, !fromEnv, fromEnv)
		}
	}
	want := []string{`provisioner "p": spec.dsn_env: environment variable "X" is not set`,
		`provisioner "p": spec.kubeconfig_path: cannot expand ~`, `provisioner "p": spec.cluster: must not be blank`,
		`provisioner "p": spec: no field`}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %q, want %q", got[i], want[i])
		}
	}
	if FromEnvironment(nil) != nil {
		t.Error("FromEnvironment(nil) is not nil")
	}
}
