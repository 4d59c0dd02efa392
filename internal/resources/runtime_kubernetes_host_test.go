package resources_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// The kubernetes provisioner's host pattern changed in the provider's set, and the runtime grew with
// `terraform apply -refresh=false`: the apply reports the runtime's URL under the new pattern
// (Provision renders its Ingresses for it), and so does the plan, which says host and audience
// change. Before, the plan kept the state's host and audience (UseStateForUnknown) and Terraform
// failed the apply ("Provider produced inconsistent result after apply") and tainted the runtime,
// so that the next apply replaced it, volume and data with it. A pattern changed alone is an
// in-place update, with a refresh (the refresh reports the new URL, and the Ingresses' drift) or
// without; the plan after each apply is empty.
func TestAccRuntimeKubernetes_anUpdateAfterTheHostPatternChangedPlansTheNewHost(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	w := acctest.NewWorkspace(t)
	config := func(pattern string, slots int) string {
		set := strings.Replace(e.SetJSON(), `"host": "http://*.rill.test"`, `"host": `+strconv.Quote(pattern), 1)
		return acctest.CLIHeader(strconv.Quote(e.Ledger), set) + acctest.RuntimeBlock("orders", slots)
	}
	w.Write("main.tf", config("http://*.rill.test", 1))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve") })
	id := w.RuntimesInState()["rill_runtime.orders"]
	pid := strings.ReplaceAll(id, "-", "")
	served := func(pattern string) {
		t.Helper()
		want := strings.Replace(strings.TrimPrefix(pattern, "http://"), "*", pid, 1)
		for _, name := range []string{"http-runtime-" + pid, "grpc-runtime-" + pid} {
			u, err := e.Dyn.Resource(acctest.Ingresses).Namespace(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
			if len(rules) != 1 || fmt.Sprint(rules[0].(map[string]any)["host"]) != want {
				t.Errorf("Ingress %s serves %v, want host %s", name, rules, want)
			}
		}
	}
	applied := func(pattern string, slots int) {
		t.Helper()
		url := strings.Replace(pattern, "*", pid, 1)
		got := w.RuntimeAttributeInState("host")["rill_runtime.orders"]
		if audience := w.RuntimeAttributeInState("audience")["rill_runtime.orders"]; got != url || audience != url {
			t.Errorf("host %v, audience %v in state, want %s", got, audience, url)
		}
		if got := w.RuntimesInState()["rill_runtime.orders"]; got != id {
			t.Fatalf("the runtime was replaced: %s, was %s", got, id)
		}
		if got := w.RuntimeAttributeInState("cpu")["rill_runtime.orders"]; got != float64(slots) {
			t.Errorf("cpu %v in state, want %d", got, slots)
		}
		served(pattern)
		if plan, err := w.Run("plan", "-detailed-exitcode"); err != nil {
			t.Errorf("the plan after the apply is not empty: %v\n%s", err, acctest.Tail(plan))
		}
	}
	planned := func(plan, from, to string) {
		t.Helper()
		for _, attr := range []string{"host", "audience"} {
			change := fmt.Sprintf(`%s = "%s" -> "%s"`, attr, strings.Replace(from, "*", pid, 1), strings.Replace(to, "*", pid, 1))
			if !strings.Contains(strings.Join(strings.Fields(plan), " "), change) {
				t.Errorf("the plan does not say %s:\n%s", change, acctest.Tail(plan))
			}
		}
		if !strings.Contains(plan, "1 to change, 0 to destroy") {
			t.Errorf("the plan is no in-place update:\n%s", acctest.Tail(plan))
		}
	}

	// The pattern changes and the runtime grows, without a refresh.
	w.Write("main.tf", config("http://*.moved.rill.test", 2))
	planned(w.Must("plan", "-refresh=false"), "http://*.rill.test", "http://*.moved.rill.test")
	w.Must("apply", "-auto-approve", "-refresh=false")
	applied("http://*.moved.rill.test", 2)

	// The pattern changes alone, without a refresh: the plan still shows it.
	w.Write("main.tf", config("http://*.again.rill.test", 2))
	planned(w.Must("plan", "-refresh=false"), "http://*.moved.rill.test", "http://*.again.rill.test")
	w.Must("apply", "-auto-approve", "-refresh=false")
	applied("http://*.again.rill.test", 2)

	// The pattern changes alone, with a refresh: it reports the new URL and the Ingresses' drift.
	w.Write("main.tf", config("http://*.rill.test", 2))
	if plan := w.Must("plan"); !strings.Contains(plan, "1 to change, 0 to destroy") || !strings.Contains(plan, "spec.host") {
		t.Errorf("the refreshing plan after the pattern changed is no update that repairs the drift:\n%s", acctest.Tail(plan))
	}
	w.Must("apply", "-auto-approve")
	applied("http://*.rill.test", 2)
}

// The host pattern changes and the runtime grows in a run whose provider configuration is not known
// at plan (ledger_dsn from another resource's attribute, changed in the same run; a plan with
// -refresh=false, as the refresh of an unconfigured provider fails): the plan cannot ask the
// provisioner, and leaves host and audience to the apply, whose plan (the provider configured) says
// the URL under the new pattern, which the update's Ingresses serve. Before, the plan kept the
// state's, and Terraform failed the apply ("Provider produced inconsistent final plan") after the
// terraform_data it depends on was applied.
func TestAccRuntimeKubernetes_aNewHostPatternWhileTheProviderIsUnconfiguredIsLeftToTheApply(t *testing.T) {
	e := acctest.NewKubeEnv(t)
	w := acctest.NewWorkspace(t)
	config := func(round int, pattern string, slots int) string {
		set := strings.Replace(e.SetJSON(), `"host": "http://*.rill.test"`, `"host": `+strconv.Quote(pattern), 1)
		// The ledger's DSN goes through terraform_data, whose output is unknown at plan whenever its
		// input changes: the provider is configured only in the apply.
		return acctest.CLIHeader(`replace(terraform_data.ledger.output, "/#.*$/", "")`, set) + fmt.Sprintf(`
resource "terraform_data" "ledger" {
  input = "%s#%d"
}
`, e.Ledger, round) + acctest.RuntimeBlock("orders", slots)
	}
	w.Write("main.tf", config(1, "http://*.rill.test", 1))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve") })
	id := w.RuntimesInState()["rill_runtime.orders"]
	pid := strings.ReplaceAll(id, "-", "")

	w.Write("main.tf", config(2, "http://*.moved.rill.test", 2))
	plan := strings.Join(strings.Fields(w.Must("plan", "-refresh=false")), " ")
	for _, attr := range []string{"host", "audience"} {
		if change := fmt.Sprintf(`%s = "http://%s.rill.test" -> (known after apply)`, attr, pid); !strings.Contains(plan, change) {
			t.Errorf("the plan does not say %s:\n%s", change, plan)
		}
	}
	w.Must("apply", "-auto-approve", "-refresh=false")
	want := "http://" + pid + ".moved.rill.test"
	if host, audience := w.RuntimeAttributeInState("host")["rill_runtime.orders"], w.RuntimeAttributeInState("audience")["rill_runtime.orders"]; host != want || audience != want {
		t.Errorf("host %v, audience %v in state, want %s", host, audience, want)
	}
	if got := w.RuntimesInState()["rill_runtime.orders"]; got != id {
		t.Fatalf("the runtime was replaced: %s, was %s", got, id)
	}
	u, err := e.Dyn.Resource(acctest.Ingresses).Namespace(e.NS).Get(e.Ctx, "http-runtime-"+pid, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules"); len(rules) != 1 || fmt.Sprint(rules[0].(map[string]any)["host"]) != pid+".moved.rill.test" {
		t.Errorf("the Ingress serves %v, want host %s.moved.rill.test", rules, pid)
	}
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		t.Errorf("the plan after the apply is not empty: %v\n%s", err, acctest.Tail(out))
	}
}
