package resources_test

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
)

// The provisioner's dsn moved (another host and port) and then an update ran statements (the
// password was changed outside Terraform, so the apply sets a new one): the apply hands out DSNs for
// the server's new address, as its plan said it might. The plan kept the state's dsn_without_password
// (UseStateForUnknown) while the apply built it from the spec as it is now, and Terraform failed the
// apply ("Provider produced inconsistent result after apply"; found by a walkthrough on the stand-in).
func TestAccClickHouse_anUpdateAfterTheServerMovedHandsOutItsNewAddress(t *testing.T) {
	acctest.RequireAcc(t)
	const adminPassword = "M0ved-Adm1n-Pa55"
	set, standIn := acctest.FakeClickHouseSet(t, adminPassword, false)
	w := cliWorkspace(t, set, clickhouseBlock+"output \"dsn_without_password\" {\n  value = rill_clickhouse.db.dsn_without_password\n}\n")
	if out, err := w.Run("apply", "-auto-approve", "-no-color"); err != nil {
		t.Fatalf("apply: %v\n%s", err, acctest.Tail(out))
	}
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve", "-no-color") })

	moved := strings.Replace(set, "ch.fake:9000", "ch-new.fake:9440", 1)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db")), moved)+clickhouseBlock+
		"output \"dsn_without_password\" {\n  value = rill_clickhouse.db.dsn_without_password\n}\n")
	fake, err := readFakeServer(standIn)
	if err != nil {
		t.Fatal(err)
	}
	for user := range fake.Users {
		if strings.HasPrefix(user, "rill_") {
			fake.Users[user] = []string{"Changed-By-Hand-0"}
		}
	}
	writeFakeServer(t, standIn, fake)

	if out, err := w.Run("apply", "-auto-approve", "-no-color"); err != nil || !strings.Contains(out, "@ch-new.fake:9440/") {
		t.Fatalf("the apply after the move: %v\n%s", err, acctest.Tail(out))
	}
	if out, err := w.Run("plan", "-detailed-exitcode", "-no-color"); err != nil {
		t.Fatalf("the plan after it is not empty: %v\n%s", err, acctest.Tail(out))
	}
}

// The provisioner's dsn names another address (host and port) while the password stays. While the
// resource's own address answers, its DSNs stay there: the spec may name another server (a new one
// for new resources), so the plan is empty. Once that address no longer answers (the server moved),
// the refresh logs in at the spec's address with the same user and password and hands out DSNs for
// it, with no statement and no apply to the resource: a generated password can be set again only by
// an update, which nothing else triggers; before, the state kept the old address and every refresh
// failed.
func TestAccClickHouse_aRefreshAfterTheServerMovedHandsOutItsNewAddress(t *testing.T) {
	acctest.RequireAcc(t)
	const adminPassword = "M0ved-Adm1n-Pa55"
	set, standIn := acctest.FakeClickHouseSet(t, adminPassword, false)
	outputs := "output \"dsn_without_password\" {\n  value = rill_clickhouse.db.dsn_without_password\n}\n"
	w := cliWorkspace(t, set, clickhouseBlock+outputs)
	if out, err := w.Run("apply", "-auto-approve", "-no-color"); err != nil {
		t.Fatalf("apply: %v\n%s", err, acctest.Tail(out))
	}
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve", "-no-color") })

	moved := strings.Replace(set, "ch.fake:9000", "ch-new.fake:9440", 1)
	w.Write("main.tf", acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db")), moved)+clickhouseBlock+outputs)
	if out, err := w.Run("plan", "-detailed-exitcode", "-no-color"); err != nil {
		t.Fatalf("the plan while the resource's own address answers is not empty: %v\n%s", err, acctest.Tail(out))
	}

	before, err := readFakeServer(standIn)
	if err != nil {
		t.Fatal(err)
	}
	before.Down = []string{"ch.fake:9000"}
	writeFakeServer(t, standIn, before)
	out, err := w.Run("apply", "-auto-approve", "-no-color")
	if err != nil || !strings.Contains(out, "@ch-new.fake:9440/") || !strings.Contains(out, "0 added, 0 changed, 0 destroyed") {
		t.Fatalf("the apply after the move: %v\n%s", err, acctest.Tail(out))
	}
	after, err := readFakeServer(standIn)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.Users, before.Users) {
		t.Errorf("the move changed a password: %v, then %v", before.Users, after.Users)
	}
	if out, err := w.Run("plan", "-detailed-exitcode", "-no-color"); err != nil {
		t.Fatalf("the plan after it is not empty: %v\n%s", err, acctest.Tail(out))
	}
}
