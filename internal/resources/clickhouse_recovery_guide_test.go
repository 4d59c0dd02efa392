package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rill-provisioner/terraform-provider-rill/internal/acctest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/chdbtest"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/proc"
)

// guideBlock returns the code block of the given language in the guide (a docs-templates file) that
// contains marker.
func guideBlock(t *testing.T, guide, lang, marker string) string {
	t.Helper()
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(m[1], marker) {
			return m[1]
		}
	}
	t.Fatalf("%s has no %s block with %q", guide, lang, marker)
	return ""
}

// fakeServer is the stand-in's state file (internal/clickhouse/fakeserver_tagged.go), read and
// written whole.
type fakeServer struct {
	Users     map[string][]string `json:"users"`
	Databases map[string]bool     `json:"databases"`
	Comments  map[string]string   `json:"comments,omitempty"`
	Faults    map[string]string   `json:"faults,omitempty"`
	Down      []string            `json:"down,omitempty"`
}

func readFakeServer(path string) (*fakeServer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &fakeServer{}
	return s, json.Unmarshal(b, s)
}

func writeFakeServer(t *testing.T, path string, s *fakeServer) {
	t.Helper()
	b, err := json.Marshal(s)
	if err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// rillNames returns the names of m that start with rill_, sorted.
func rillNames[V any](m map[string]V) []string {
	var out []string
	for n := range m {
		if strings.HasPrefix(n, "rill_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// clickhouseInState is a rill_clickhouse in a state: its ID, database and user.
type clickhouseInState struct{ id, database, user string }

// clickhousesInState returns the rill_clickhouse resources of a state (`terraform state pull`), by address.
func clickhousesInState(t *testing.T, state string) map[string]clickhouseInState {
	t.Helper()
	var s struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				IndexKey   any `json:"index_key"`
				Attributes struct{ ID, Database, User string }
			}
		}
	}
	if err := json.Unmarshal([]byte(state), &s); err != nil {
		t.Fatalf("state: %v\n%s", err, state)
	}
	out := map[string]clickhouseInState{}
	for _, r := range s.Resources {
		if r.Type != "rill_clickhouse" {
			continue
		}
		for _, i := range r.Instances {
			addr := "rill_clickhouse." + r.Name
			switch k := i.IndexKey.(type) {
			case float64:
				addr += fmt.Sprintf("[%d]", int(k))
			case string:
				addr += fmt.Sprintf("[%q]", k)
			}
			out[addr] = clickhouseInState{i.Attributes.ID, i.Attributes.Database, i.Attributes.User}
		}
	}
	return out
}

// recoveryClickHouseConfig is this workspace's configuration: count rill_clickhouse of organization
// acme, project web (the annotations the guide's examples use) on the stand-in's provisioner "ch".
func recoveryClickHouseConfig(count int) string {
	return fmt.Sprintf(`
resource "rill_clickhouse" "db" {
  count            = %d
  provisioner_name = "ch"
  annotations      = { organization_name = "acme", project_name = "web" }
}
`, count)
}

// The guide "Recovering orphaned runtimes and ClickHouse databases", its ClickHouse section, step by
// step. An apply that creates two rill_clickhouse is killed once both creates sent their first
// statement and hang at a later one (CREATE USER, ALTER USER or GRANT, at random). Terraform killed
// alone leaves nothing (the provider undoes the creates); the provider killed (kill -9, and at random
// terraform with it) leaves two databases (with or without their users) that no state knows. The same server holds Rill admin's database of the same organization and project (a comment
// with Rill's keys) and another configuration's resource of the same annotations (its state saved
// beside). The guide's query lists candidates; its recover-clickhouse.tf refuses to run without saved
// states, then imports exactly the two orphans; one is kept (state mv to the address that lacks it),
// the other dropped by a targeted destroy; the plain apply converges, and the server then holds
// exactly the databases and users the two states hold, and Rill admin's.
//
// The stand-in understands only the statements the provisioner sends, so the guide's query runs on
// chDB (a real ClickHouse engine, internal/testutil/chdbtest) loaded with the stand-in's databases,
// their comments and its users as the kill left them; the query's and the recovery file's text are
// the guide's, unedited (the test's annotations are the guide's example).
func TestAccClickHouse_recoveringWhatAKilledCreateLeftGuide(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireCLIVersion(t, 1, 7, "the guide's import blocks with for_each")
	if runtime.GOOS != "linux" {
		t.Skip("finds the provider process through /proc")
	}
	query := guideBlock(t, guidePath, "sql", "FROM system.databases")
	recoverTF := guideBlock(t, guidePath, "terraform", `resource "rill_clickhouse" "orphan"`)
	set, server := acctest.FakeClickHouseSet(t, "Fake-Adm1n-Pa55", false)

	// Rill admin's database of the same organization and project, and its user.
	rillID := strings.ReplaceAll(uuid.NewString(), "-", "_")
	rillDB, rillUser := "rill_acme_web_"+rillID, "rill_"+rillID
	writeFakeServer(t, server, &fakeServer{
		Users:     map[string][]string{rillUser: {"rill-admin-made"}},
		Databases: map[string]bool{"default": true, rillDB: true},
		Comments: map[string]string{rillDB: fmt.Sprintf(`{"organization_id":%q,"organization_name":"acme","project_id":%q,"project_name":"web"}`,
			uuid.NewString(), uuid.NewString())},
	})

	// Another configuration on the same server, with the same annotations.
	other := acctest.NewWorkspace(t)
	other.Write("main.tf", acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(other.Dir, "ledger.db")), set)+recoveryClickHouseConfig(1))
	other.Must("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = other.Run("destroy", "-auto-approve") })

	// Without TF_LOG: the test reads `terraform state pull`'s output.
	w := acctest.NewWorkspace(t)
	header := acctest.CLIHeader(strconv.Quote("sqlite://"+filepath.Join(w.Dir, "ledger.db")), set)
	w.Write("main.tf", header+recoveryClickHouseConfig(1))
	w.Must("apply", "-auto-approve")
	t.Cleanup(func() {
		for _, f := range []string{"recover-clickhouse.tf", "clickhouse-orphans.json"} {
			w.Write(f, "")
		}
		if out, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy: %v\n%s", err, acctest.Tail(out))
		}
	})

	// The killed create.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	hangAt := []string{"CREATE USER", "ALTER USER", "GRANT"}[rng.IntN(3)]
	withTerraform := rng.IntN(2) == 0
	t.Logf("seed %d: the creates hang at %s; the provider is killed (SIGKILL), terraform too: %v", seed, hangAt, withTerraform)
	s, err := readFakeServer(server)
	if err != nil {
		t.Fatal(err)
	}
	before := s
	s.Faults = map[string]string{hangAt: "hang"}
	writeFakeServer(t, server, s)
	w.Write("main.tf", header+recoveryClickHouseConfig(3))

	// Terraform killed alone leaves nothing, as the guide says: the provider sees its requests
	// cancelled and undoes the creates before it exits.
	killCreates(t, w, server, false, true, len(rillNames(before.Databases))+2)
	recoverUnreadableState(t, w)
	if s, err = readFakeServer(server); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rillNames(s.Databases), rillNames(before.Databases)) || !slices.Equal(rillNames(s.Users), rillNames(before.Users)) {
		t.Fatalf("terraform killed alone: the provider did not undo its creates: databases %v, users %v; before %v, %v",
			rillNames(s.Databases), rillNames(s.Users), rillNames(before.Databases), rillNames(before.Users))
	}

	killCreates(t, w, server, true, withTerraform, len(rillNames(before.Databases))+2)
	recoverUnreadableState(t, w)
	if s, err = readFakeServer(server); err != nil {
		t.Fatal(err)
	}
	s.Faults = nil // the server is fine again
	writeFakeServer(t, server, s)
	thisState := w.Must("state", "pull")
	if got := clickhousesInState(t, thisState); len(got) != 1 {
		t.Fatalf("after the kill the state holds %v, want rill_clickhouse.db[0] alone", got)
	}
	t.Logf("the kill left databases %v and users %v", rillNames(s.Databases), rillNames(s.Users))

	// Step 1: the states, and the guide's query on a real ClickHouse that holds what the stand-in holds.
	w.Write("find-clickhouse-orphans.sql", query)
	var users []chdbtest.User
	for _, u := range rillNames(s.Users) {
		users = append(users, chdbtest.User{Name: u, Password: s.Users[u][0]})
	}
	ch := chdbtest.Start(t, users...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, db := range rillNames(s.Databases) {
		comment := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s.Comments[db])
		if _, err := ch.Query(ctx, "CREATE DATABASE `"+db+"` COMMENT '"+comment+"'"); err != nil {
			t.Fatal(err)
		}
	}
	found, err := ch.Query(ctx, query)
	if err != nil {
		t.Fatalf("the guide's query: %v", err)
	}
	w.Write("clickhouse-orphans.json", found)
	var listed struct {
		Data []struct {
			Database, ID, User string
			UserExists         int `json:"user_exists"`
		}
	}
	if err := json.Unmarshal([]byte(found), &listed); err != nil {
		t.Fatalf("the guide's query's output: %v\n%s", err, found)
	}
	var listedDBs []string
	for _, d := range listed.Data {
		listedDBs = append(listedDBs, d.Database)
		if id := strings.ReplaceAll(d.ID, "-", "_"); d.User != "rill_"+id || !strings.HasSuffix(d.Database, "_"+id) ||
			(d.UserExists == 1) != slices.Contains(rillNames(s.Users), d.User) {
			t.Errorf("the guide's query lists %+v", d)
		}
	}
	// This configuration's 3 databases and the other configuration's (same annotations), not Rill admin's.
	if want := slices.DeleteFunc(rillNames(s.Databases), func(n string) bool { return n == rillDB }); !slices.Equal(listedDBs, want) {
		t.Fatalf("the guide's query lists %v, want %v", listedDBs, want)
	}

	// Without saved states the recovery refuses: it would take every listed database for an orphan.
	w.Write("recover-clickhouse.tf", recoverTF)
	if out, err := w.Run("plan", "-target=rill_clickhouse.orphan"); err == nil || !acctest.WordsRegexp("Save the state of every configuration that uses the ClickHouse server").MatchString(out) {
		t.Fatalf("with no saved states the recovery should refuse (%v):\n%s", err, acctest.Tail(out))
	}
	if err := os.MkdirAll(filepath.Join(w.Dir, "states"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Another configuration's state alone is not enough: without this one's, the recovery would take
	// this configuration's own databases for orphans, and step 3 would drop them.
	w.Write(filepath.Join("states", "other.json"), other.Must("state", "pull"))
	if out, err := w.Run("plan", "-target=rill_clickhouse.orphan"); err == nil || !acctest.WordsRegexp("this one's as states/this.json").MatchString(out) {
		t.Fatalf("without this configuration's saved state the recovery should refuse (%v):\n%s", err, acctest.Tail(out))
	}
	w.Write(filepath.Join("states", "this.json"), thisState)

	// Step 2: review, then import.
	if plan := w.Must("plan", "-target=rill_clickhouse.orphan"); !strings.Contains(plan, "2 to import") {
		t.Fatalf("the guide's review plan should list the 2 orphans for import:\n%s", acctest.Tail(plan))
	}
	w.Must("apply", "-target=rill_clickhouse.orphan", "-auto-approve")
	var orphans []string
	for addr, r := range clickhousesInState(t, w.Must("state", "pull")) {
		if strings.HasPrefix(addr, "rill_clickhouse.orphan[") {
			orphans = append(orphans, addr)
			if r.user != "rill_"+strings.ReplaceAll(r.id, "-", "_") || r.database != "rill_acme_web_"+strings.ReplaceAll(r.id, "-", "_") {
				t.Errorf("imported %s: %+v", addr, r)
			}
		}
	}
	sort.Strings(orphans)
	if len(orphans) != 2 {
		t.Fatalf("the guide's import took %v, want the 2 orphans", orphans)
	}
	if out, err := w.Run("plan", "-target=rill_clickhouse.orphan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the imported orphans plan a change (%v):\n%s", err, acctest.Tail(out))
	}

	// Step 3: keep one at the address that lacks it, drop the other, and the plain apply converges.
	w.Must("state", "mv", orphans[0], "rill_clickhouse.db[1]")
	w.Must("destroy", "-target=rill_clickhouse.orphan", "-auto-approve")
	for _, f := range []string{"recover-clickhouse.tf", "find-clickhouse-orphans.sql", "clickhouse-orphans.json"} {
		w.Write(f, "")
	}
	if err := os.RemoveAll(filepath.Join(w.Dir, "states")); err != nil {
		t.Fatal(err)
	}
	w.Must("apply", "-auto-approve")
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil {
		t.Fatalf("the plan after recovery is not empty (%v):\n%s", err, acctest.Tail(out))
	}

	// The server holds exactly what the two states hold, and Rill admin's database and user.
	wantDBs, wantUsers := []string{rillDB}, []string{rillUser}
	for _, state := range []string{w.Must("state", "pull"), other.Must("state", "pull")} {
		for _, r := range clickhousesInState(t, state) {
			wantDBs, wantUsers = append(wantDBs, r.database), append(wantUsers, r.user)
		}
	}
	sort.Strings(wantDBs)
	sort.Strings(wantUsers)
	if s, err = readFakeServer(server); err != nil {
		t.Fatal(err)
	}
	if got := rillNames(s.Databases); !slices.Equal(got, wantDBs) {
		t.Errorf("the server's databases %v, the states' and Rill admin's %v", got, wantDBs)
	}
	if got := rillNames(s.Users); !slices.Equal(got, wantUsers) {
		t.Errorf("the server's users %v, the states' and Rill admin's %v", got, wantUsers)
	}
	if len(wantDBs) != 5 {
		t.Errorf("want 3 resources here, 1 in the other configuration and Rill admin's; got databases %v", wantDBs)
	}
}

// killCreates runs `terraform apply` in w and kills (SIGKILL) the provider, terraform, or both at the
// same instant (as a CI runner's timeout kills a job's processes), once the stand-in holds dbs
// databases named rill_* and has not changed for 300 ms: the creates sent their first statement and
// hang at the fault the test injected. The apply must not end first.
func killCreates(t *testing.T, w *acctest.Workspace, server string, provider, terraform bool, dbs int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, out, exited := startTerraform(ctx, t, w, "apply")
	var providers []int
	var last []byte
	for still := 0; still < 6 || len(providers) == 0; {
		select {
		case err := <-exited:
			t.Fatalf("the apply ended before the kill (%v):\n%s", err, acctest.Tail(out.String()))
		case <-ctx.Done():
			t.Fatalf("the creates did not reach the fault:\n%s", acctest.Tail(out.String()))
		case <-time.After(50 * time.Millisecond):
		}
		providers = childrenNamed(cmd.Process.Pid, "terraform-provider-rill")
		b, _ := os.ReadFile(server)
		s := &fakeServer{}
		if json.Unmarshal(b, s) != nil || len(rillNames(s.Databases)) < dbs || !bytes.Equal(b, last) {
			still = 0
		} else {
			still++
		}
		last = b
	}
	if provider && terraform {
		// Stopped first, terraform cannot act on the provider's death before its own: it would end the
		// apply and rewrite terraform.tfstate, and a SIGKILL landing between that write's truncate and
		// its end leaves a state of 0 bytes with no backup (Terraform makes none when the state it
		// writes is the one it read), a race of Terraform's own this test is not about.
		_ = cmd.Process.Signal(syscall.SIGSTOP)
	}
	if provider {
		for _, pid := range providers {
			proc.KillPID(pid)
		}
	}
	if terraform {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("the apply succeeded after the kill:\n%s", acctest.Tail(out.String()))
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("terraform did not exit after the kill:\n%s", acctest.Tail(out.String()))
	}
	for _, pid := range providers {
		if !proc.GoneWithin(pid, 10*time.Second) {
			t.Errorf("provider process %d still runs 10 s after the kill", pid)
		}
	}
}
