package resources_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/ci"
	"github.com/rill-provisioner/terraform-provider-rill/internal/testutil/pgtest"
)

// rillClickHouseSchema is what the guide's ClickHouse section reads and writes of Rill's admin
// database: provisioner_resources as Rill's migration 0054.sql creates it (no later migration alters
// it up to Rill's commit e2f71cb), and the columns of orgs, projects and deployments it joins.
const rillClickHouseSchema = `
CREATE TABLE orgs (id UUID PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE projects (id UUID PRIMARY KEY, org_id UUID NOT NULL REFERENCES orgs (id), name TEXT NOT NULL);
CREATE TABLE deployments (id UUID PRIMARY KEY, project_id UUID NOT NULL REFERENCES projects (id));
CREATE TABLE provisioner_resources (
    id UUID DEFAULT gen_random_uuid() PRIMARY KEY,
    deployment_id UUID NOT NULL REFERENCES deployments (id) ON DELETE RESTRICT,
    "type" TEXT NOT NULL,
    name TEXT NOT NULL,
    status INTEGER NOT NULL,
    status_message TEXT NOT NULL DEFAULT '',
    provisioner TEXT NOT NULL,
    args_json JSONB NOT NULL,
    state_json JSONB NOT NULL,
    config_json JSONB NOT NULL,
    created_on TIMESTAMPTZ DEFAULT now() NOT NULL,
    updated_on TIMESTAMPTZ DEFAULT now() NOT NULL
);
INSERT INTO orgs VALUES ('11111111-1111-4111-8111-111111111111', 'acme');
INSERT INTO projects VALUES ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 'web');
INSERT INTO deployments VALUES ('33333333-3333-4333-8333-333333333333', '22222222-2222-4222-8222-222222222222');
INSERT INTO provisioner_resources (id, deployment_id, "type", name, status, provisioner, args_json, state_json, config_json)
VALUES ('0b7e6c5a-3f1d-4c2b-9a8e-7d6c5b4a3f2e', '33333333-3333-4333-8333-333333333333', 'clickhouse', '', 2, 'clickhouse',
        '{}', '{}', '{"dsn": "clickhouse://rill_0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e:1Rr%210123456789abcdef@ch.example:9440/rill_acme_web_0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e?secure=true"}');
`

// guideBlocks returns the fenced blocks of section 4 of the migration guide (indented ones
// unindented), by their language.
func guideBlocks(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/guides/migrating-from-rill-admin.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	start := strings.Index(guide, "\n## 4.")
	if start < 0 {
		t.Fatal("the guide has no section 4")
	}
	section := guide[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	blocks := map[string][]string{}
	fence := regexp.MustCompile("(?ms)^( *)```(\\w+)\\n(.*?)^ *```$")
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		indent, lang, body := m[1], m[2], m[3]
		var lines []string
		for _, l := range strings.Split(body, "\n") {
			lines = append(lines, strings.TrimPrefix(l, indent))
		}
		blocks[lang] = append(blocks[lang], strings.Join(lines, "\n"))
	}
	return blocks
}

func blockWith(t *testing.T, blocks []string, needle string) string {
	t.Helper()
	for _, b := range blocks {
		if strings.Contains(b, needle) {
			return b
		}
	}
	t.Fatalf("the guide's section 4 has no block with %q", needle)
	return ""
}

// The commands of the guide's ClickHouse section, as written, against Rill's table in a real
// PostgreSQL through the real psql: the listing finds the resource, the DSN read gives the password
// of Rill's DSN (URL-decoded) and leaves no file behind, and the hand-over writes the new DSN that
// `terraform output` gives (a stub here) into Rill's record of the resource, without the DSN on any
// command line. The hand-over was a psql variable to set with `-v` next to an UPDATE that psql does
// not substitute variables in when it comes with -c, as the read beside it does.
func TestGuideHandsTheNewClickHouseDSNToRill(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		ci.Skip(t, "psql is not installed: %v", err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		ci.Skip(t, "bash is not installed: %v", err)
	}
	dsn := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, rillClickHouseSchema); err != nil {
		t.Fatal(err)
	}
	blocks := guideBlocks(t)

	var id, org, project, prov string
	if err := conn.QueryRow(ctx, blockWith(t, blocks["sql"], "FROM provisioner_resources r")).Scan(&id, &org, &project, &prov); err != nil {
		t.Fatalf("the listing: %v", err)
	}
	if id != "0b7e6c5a-3f1d-4c2b-9a8e-7d6c5b4a3f2e" || org != "acme" || project != "web" || prov != "clickhouse" {
		t.Fatalf("the listing gave %s %s %s %s", id, org, project, prov)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	const newDSN = "clickhouse://rill_0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e:N3w%27p%40ss@ch.example:9440/rill_acme_web_0b7e6c5a3f1d4c2b9a8e7d6c5b4a3f2e?secure=true"
	stub := "#!/bin/sh\n[ \"$*\" = 'output -raw acme_web_dsn' ] || { echo \"unexpected: terraform $*\" >&2; exit 1; }\nprintf '%s' '" + newDSN + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(psql, filepath.Join(bin, "psql")); err != nil {
		t.Fatal(err)
	}
	run := func(script string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bash, "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "RILL_ADMIN_DATABASE_URL="+dsn, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v:\n%s\n%s", err, script, out)
		}
		return string(out)
	}

	read := blockWith(t, blocks["shell"], "config_json->>'dsn'")
	if got := run(read + "\nprintf 'password=%s' \"$TF_VAR_rill_clickhouse_password\""); !strings.HasSuffix(got, "password=1Rr!0123456789abcdef") {
		t.Fatalf("the DSN read gave %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the DSN read left files behind: %v", entries)
	}

	run(blockWith(t, blocks["shell"], "new_dsn"))
	var stored string
	if err := conn.QueryRow(ctx, "SELECT config_json->>'dsn' FROM provisioner_resources WHERE id = '0b7e6c5a-3f1d-4c2b-9a8e-7d6c5b4a3f2e'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != newDSN {
		t.Fatalf("after the hand-over Rill's record holds %q, want %q", stored, newDSN)
	}
}
