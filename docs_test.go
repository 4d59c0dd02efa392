package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rill-provisioner/terraform-provider-rill/internal/clickhouse"
	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
	"github.com/rill-provisioner/terraform-provider-rill/internal/kubernetes"
	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/resources"
	"github.com/rill-provisioner/terraform-provider-rill/internal/static"
)

const troubleshootingGuide = "docs-templates/guides/troubleshooting.md.tmpl"

// Every error and warning summary the provider can report has a heading in the troubleshooting
// guide, so a new diagnostic cannot ship without its explanation. Summaries are read from the
// source: each call of Add(Attribute)Error/Warning under internal/. A summary built from a local
// variable stands for every value assigned to it in the function; a struct field (kind.title) for
// every string the field is given in a composite literal under internal/ -- each variant needs its
// own heading. What is left (fmt.Sprintf verbs, other expressions) matches any text.
func TestTroubleshootingGuideCoversEveryDiagnostic(t *testing.T) {
	headings := troubleshootingHeadings(t)
	summaries := diagnosticSummaries(t)
	if len(summaries) < 10 {
		t.Fatalf("found only %d diagnostic summaries under internal/: the scan is broken", len(summaries))
	}
	for _, s := range summaries {
		if s.pattern == ".+" {
			t.Errorf("%s: the diagnostic summary is not built from string literals the scan can follow", s.pos)
			continue
		}
		re := regexp.MustCompile("^" + s.pattern + "$")
		found := false
		for _, h := range headings {
			if re.MatchString(h) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: diagnostic summary /%s/ has no \"### \" heading in %s: add one saying what it means and how to fix it",
				s.pos, s.pattern, troubleshootingGuide)
		}
	}
}

// The troubleshooting guide's headings that are no diagnostic's summary, and why each is there.
var troubleshootingHeadingsNotSummaries = map[string]string{
	"Undoing what it may have made failed too":             "words in the details of the Provisioning ... failed errors",
	"Unsupported state file format":                        "Terraform's own error after a kill",
	"A plan after a kill wants to create everything again": "Terraform reading a state a kill left empty",
}

// The other direction: every heading of the troubleshooting guide is the summary of a diagnostic the
// provider reports (or one of the few listed above), so a summary that is reworded or removed takes
// its heading along instead of leaving readers to look up an error that no longer exists.
func TestTroubleshootingGuideHeadsOnlyDiagnostics(t *testing.T) {
	summaries := diagnosticSummaries(t)
	seen := map[string]bool{}
	for _, h := range troubleshootingHeadings(t) {
		if _, ok := troubleshootingHeadingsNotSummaries[h]; ok {
			seen[h] = true
			continue
		}
		found := false
		for _, s := range summaries {
			if s.pattern != ".+" && regexp.MustCompile("^"+s.pattern+"$").MatchString(h) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: heading %q is the summary of no diagnostic under internal/: rename it to the summary the provider reports now, or remove it",
				troubleshootingGuide, h)
		}
	}
	for h := range troubleshootingHeadingsNotSummaries {
		if !seen[h] {
			t.Errorf("%s has no heading %q any more: drop it from troubleshootingHeadingsNotSummaries", troubleshootingGuide, h)
		}
	}
}

// The Kubernetes and ClickHouse errors the troubleshooting guide quotes in their words, each held to
// the format string in the package that writes them (internal/<pkg>), so that a quote cannot outlive
// its message: the guide once gave `cannot list deployments in namespace ...` as a refresh's error, the
// words of Check, which a refresh never calls (only rill_provisioners' check = true does, into
// check_error; a refresh refused by RBAC says `reading Deployment ...: ... is forbidden`), and `SHOW USERS failed` for an admin without access management, a probe
// that a current ClickHouse answers for any user.
func TestTroubleshootingQuotesTheProvisionersErrorsAsWritten(t *testing.T) {
	quotes := []struct{ pkg, guide, code string }{
		{"kubernetes", "`reading Deployment <namespace>/<name>: ... is forbidden: User ... cannot get resource", `"reading %s %s/%s: %w%s"`},
		{"kubernetes", "`deleting Deployment <namespace>/<name>: ... is forbidden: User ... cannot delete resource", `"deleting %s %s/%s: %w%s"`},
		{"kubernetes", "`listing the runtimes' Deployments in namespace ...: ...", `"listing the runtimes' Deployments in namespace %s: %w"`},
		{"kubernetes", "`applying PersistentVolumeClaim <namespace>/...: namespaces \"<namespace>\" not found`", `"applying %s %s/%s: %w%s"`},
		{"kubernetes", "`cannot reach the Kubernetes API server at ...`", `"cannot reach the Kubernetes API server at %s`},
		{"database", "the ledger's role (the DSN's user) lacks a privilege this needs`", `"the ledger's role (the DSN's user) lacks a privilege this needs. `},
		{"clickhouse", "`ClickHouse ... at host:port has no SQL-driven access control (CREATE USER needs ClickHouse 20.4 or newer)`",
			`%s has no SQL-driven access control (CREATE USER needs ClickHouse 20.4 or newer)"`},
		{"clickhouse", "`ClickHouse ... at host:port has no writable user directory`", `%s has no writable user directory (`},
		{"clickhouse", "`on ClickHouse ... at host:port, SHOW CREATE USER CURRENT_USER failed (", `"%w: on %s, SHOW CREATE USER CURRENT_USER failed (%s);`},
	}
	guide, err := os.ReadFile(troubleshootingGuide)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\s+`).ReplaceAllString(string(guide), " ") // a quote may break across lines
	code := map[string]string{}
	for _, q := range quotes {
		if _, ok := code[q.pkg]; ok {
			continue
		}
		var b strings.Builder
		files, err := filepath.Glob("internal/" + q.pkg + "/*.go")
		if err != nil || len(files) == 0 {
			t.Fatalf("internal/%s: %v, %d files", q.pkg, err, len(files))
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(src)
			}
		}
		code[q.pkg] = b.String()
	}
	for _, q := range quotes {
		if !strings.Contains(text, q.guide) {
			t.Errorf("%s no longer quotes %s: change or drop the entry", troubleshootingGuide, q.guide)
		}
		if !strings.Contains(code[q.pkg], q.code) {
			t.Errorf("internal/%s writes no %s any more, which %s quotes as %s: quote what it says now", q.pkg, q.code, troubleshootingGuide, q.guide)
		}
	}
}

// troubleshootingHeadings returns the "### " headings of the troubleshooting guide, unescaped.
func troubleshootingHeadings(t *testing.T) []string {
	t.Helper()
	guide, err := os.ReadFile(troubleshootingGuide)
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, line := range strings.Split(string(guide), "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			headings = append(headings, html.UnescapeString(strings.TrimSpace(h)))
		}
	}
	return headings
}

type diagnosticSummary struct {
	pos     string
	pattern string // a regular expression
}

// summaryArg is the index of the summary argument of each diagnostics method, and of the provider's
// helpers that forward their callers' summaries to one (their own call is skipped, their callers'
// calls are scanned).
var summaryArg = map[string]int{"AddError": 0, "AddWarning": 0, "AddAttributeError": 1, "AddAttributeWarning": 1,
	"addSecretAttributeError": 2}

func diagnosticSummaries(t *testing.T) []diagnosticSummary {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir("internal", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := summaryScan{fields: fieldStrings(files)}
	var out []diagnosticSummary
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			sc.fn = fn
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var name string
				switch f := call.Fun.(type) {
				case *ast.SelectorExpr:
					name = f.Sel.Name
				case *ast.Ident:
					name = f.Name
				}
				i, ok := summaryArg[name]
				if !ok || len(call.Args) <= i || sc.isParam(call.Args[i]) {
					return true
				}
				for _, p := range sc.patterns(call.Args[i], 0) {
					out = append(out, diagnosticSummary{pos: fset.Position(call.Pos()).String(), pattern: p})
				}
				return true
			})
		}
	}
	return out
}

// fieldStrings maps a struct field name to the string literals it is given in keyed composite
// literals (resourceKind{title: "Runtime"}).
func fieldStrings(files []*ast.File) map[string][]string {
	out := map[string][]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			key, ok := kv.Key.(*ast.Ident)
			lit, isLit := kv.Value.(*ast.BasicLit)
			if !ok || !isLit || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out[key.Name] = append(out[key.Name], s)
			}
			return true
		})
	}
	return out
}

// summaryScan turns the expression of a summary into the regular expressions of its variants.
type summaryScan struct {
	fields map[string][]string
	fn     *ast.FuncDecl // the function the expression is in
}

// isParam reports whether e is a parameter of the function, itself a helper of summaryArg: the
// summary its callers give, which the scan finds at their calls.
func (sc summaryScan) isParam(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if _, helper := summaryArg[sc.fn.Name.Name]; !ok || !helper {
		return false
	}
	for _, f := range sc.fn.Type.Params.List {
		for _, n := range f.Names {
			if n.Name == id.Name {
				return true
			}
		}
	}
	return false
}

func (sc summaryScan) patterns(e ast.Expr, depth int) []string {
	if depth > 4 {
		return []string{".+"}
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil {
			return []string{literalPattern(s, false)}
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			var out []string
			for _, x := range sc.patterns(e.X, depth+1) {
				for _, y := range sc.patterns(e.Y, depth+1) {
					out = append(out, x+y)
				}
			}
			return out
		}
	case *ast.SelectorExpr:
		var out []string
		for _, s := range sc.fields[e.Sel.Name] {
			out = append(out, regexp.QuoteMeta(s))
		}
		if len(out) > 0 {
			return out
		}
	case *ast.Ident:
		// Every value assigned to the variable in the function.
		var out []string
		ast.Inspect(sc.fn.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == e.Name {
					out = append(out, sc.patterns(as.Rhs[i], depth+1)...)
				}
			}
			return true
		})
		if len(out) > 0 {
			return out
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			if lit, ok := e.Args[0].(*ast.BasicLit); ok {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					return []string{literalPattern(s, true)}
				}
			}
		}
	}
	return []string{".+"}
}

var formatVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

func literalPattern(s string, format bool) string {
	if !format {
		return regexp.QuoteMeta(s)
	}
	var b strings.Builder
	last := 0
	for _, loc := range formatVerb.FindAllStringIndex(s, -1) {
		b.WriteString(regexp.QuoteMeta(s[last:loc[0]]))
		b.WriteString(".+")
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(s[last:]))
	return b.String()
}

// The docs cite tests as the proof of what they say (the Rill compatibility guide, the migration guide,
// RELIABILITY.md, the packages' READMEs, BENCHMARKS*.md): each test they name in backquotes exists, so
// a test that is renamed, merged or removed takes its citations along (the compatibility guide cited
// one for months after it was gone). Every Markdown file and docs template is read but docs/, which
// scripts/docs.sh renders from the templates. A name ending in `*` stands for every test with that
// prefix, and must match one.
func TestDocsCiteTestsThatExist(t *testing.T) {
	defined := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "tools") {
			return filepath.SkipDir // .tools, .git; tools/ holds separate modules
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				defined[fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cited := regexp.MustCompile("`(Test[A-Z][A-Za-z0-9_]*)(\\*?)`")
	for doc, text := range readDocs(t) {
		for _, m := range cited.FindAllStringSubmatch(text, -1) {
			name, prefix := m[1], m[2] == "*"
			found := defined[name]
			for d := range defined {
				if prefix && strings.HasPrefix(d, name) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s cites test %s%s, which does not exist: name the test that proves it now", doc, name, m[2])
			}
		}
	}
}

// readDocs reads every Markdown file and docs template, by path, but docs/, which scripts/docs.sh
// renders from the templates.
func readDocs(t *testing.T) map[string]string {
	t.Helper()
	docs := map[string]string{}
	if err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || p == "docs" || p == "tools") {
			return filepath.SkipDir // generated docs, .tools, .git, the tools' own modules
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".md.tmpl")) {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs[p] = string(b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return docs
}

// The figures the docs quote (a slot's size, the most slots, a name's length, how long the ledger
// waits) are the code's: each has one home in the code, and the prose that repeats it for the
// reader is held to that home here, so a change of the figure cannot leave a doc behind. Each
// pattern must still find a quote: a doc reworded around it wants the pattern reworded too.
func TestDocsQuoteTheCodesFigures(t *testing.T) {
	figures := []struct {
		home    string
		pattern string
		want    int64
	}{
		{"provisioner.CPUPerSlot", `(\d+) CPU, \d+ GB`, provisioner.CPUPerSlot},
		{"provisioner.CPUPerSlot", "`\\.CPU` \\((\\d+) per slot\\)", provisioner.CPUPerSlot},
		{"provisioner.MemoryGBPerSlot", `\d+ CPU, (\d+) GB`, provisioner.MemoryGBPerSlot},
		{"provisioner.MemoryGBPerSlot", "`\\.MemoryGB` \\((\\d+) per slot\\)", provisioner.MemoryGBPerSlot},
		{"provisioner.StorageBytesPerSlot", `(\d+) GiB (?:per slot|of storage|× slots)`, provisioner.StorageBytesPerSlot >> 30},
		{"provisioner.MaxSlots", `whole number from 1 to ([\d,]+)`, int64(provisioner.MaxSlots)},
		{"provisioner.MaxSlots", "`slots` above ([\\d,]+), `1\\.5`", int64(provisioner.MaxSlots)},
		{"static.MaxHostSlots", `between 0 \(a drained host\) and (\d+)`, static.MaxHostSlots},
		{"static.MaxHostSlots", `from 0 \(a drained host[^)]*\) to (\d+)`, static.MaxHostSlots},
		{"static.MaxHostSlots", "`slots` above ([\\d,]+) \\(`2\\^31-1`\\)", static.MaxHostSlots},
		{"static.MaxHostSlots", `at most (\d+) per host`, static.MaxHostSlots},
		{"provisioner.NameMaxLength", "`_`,? (?:and )?`-`[^.]{0,60}?at most (\\d+) characters", provisioner.NameMaxLength},
		{"provisioner.MaxSetBytes", `set (?:over|larger than) (\d+) MiB`, provisioner.MaxSetBytes >> 20},
		{"provisioner.MaxSetBytes", `at most (\d+) are accepted`, provisioner.MaxSetBytes},
		{"provisioner.MaxSetDepth", `(?:nested more than|Nesting deeper than) (\d+) levels`, provisioner.MaxSetDepth},
		{"database.LockWait", `waited (\d+) ?s for its write lock`, int64(database.LockWait / time.Second)},
		{"database.LockWait", `(\d+) ?s(?:econds)? without (?:progress|committing)`, int64(database.LockWait / time.Second)},
		{"database.LockWait", "(\\d+) s `(?:database\\.)?LockWait`", int64(database.LockWait / time.Second)},
		{"database.LockWait", "`(?:database\\.)?LockWait` \\((\\d+) s", int64(database.LockWait / time.Second)},
		{"database.PostgresIdleTimeout", `(\d+) s after its last statement`, int64(database.PostgresIdleTimeout() / time.Second)},
		{"database.PostgresIdleTimeout", "PostgresIdleTimeout` \\((\\d+) s, four times", int64(database.PostgresIdleTimeout() / time.Second)},
		{"database.PostgresDefaultConnectTimeout", "`connect_timeout`[^.;]{0,40}?default (\\d+) s", int64(database.PostgresDefaultConnectTimeout / time.Second)},
		{"resources.PlanCheckTimeout", `(?:does not answer|no answer) within (\d+) seconds`, int64(resources.PlanCheckTimeout / time.Second)},
		{"resources.PlanCheckTimeout", `read-only, under (\d+) s,`, int64(resources.PlanCheckTimeout / time.Second)},
		{"resources.PlanCheckTimeout", "`provisioner\\.CreateChecker`, under (\\d+) s of their own", int64(resources.PlanCheckTimeout / time.Second)},
		{"resources.PlanCheckTimeout", `the check's (\d+) s ends it`, int64(resources.PlanCheckTimeout / time.Second)},
		{"clickhouse.DefaultDialTimeout", "`dial_timeout`[^.;]{0,20}?(\\d+) s,? by default", int64(clickhouse.DefaultDialTimeout / time.Second)},
	}
	docs := readDocs(t)
	space := regexp.MustCompile(`\s+`)
	for path, text := range docs {
		docs[path] = space.ReplaceAllString(text, " ") // a quote may break across lines
	}
	for _, f := range figures {
		re := regexp.MustCompile(f.pattern)
		quoted := false
		for _, path := range slices.Sorted(maps.Keys(docs)) {
			for _, m := range re.FindAllStringSubmatch(docs[path], -1) {
				quoted = true
				if got, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64); err != nil || got != f.want {
					t.Errorf("%s quotes %q, but %s is %d", path, m[0], f.home, f.want)
				}
			}
		}
		if !quoted {
			t.Errorf("no doc quotes %s as %s any more: change or drop the pattern", f.home, f.pattern)
		}
	}
}

// A provisioner's spec is documented once, by its table in docs-templates/index.md.tmpl (CONTRIBUTING.md,
// "How to add a provisioner"), written by hand from the spec's struct: every JSON field of the struct
// (and of the objects a row lists as `{a, b}`) has its row, and the kubernetes table's defaults are
// the code's, so that a field added or a default changed cannot leave the table behind.
func TestDocsSpecTablesNameEveryFieldAndItsDefault(t *testing.T) {
	b, err := os.ReadFile("docs-templates/index.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	tables := specTables(string(b))
	for typ, spec := range map[string]reflect.Type{
		static.Type:     reflect.TypeFor[static.Spec](),
		kubernetes.Type: reflect.TypeFor[kubernetes.Spec](),
		clickhouse.Type: reflect.TypeFor[clickhouse.Spec](),
	} {
		rows := tables[typ]
		if len(rows) == 0 {
			t.Errorf("index.md.tmpl has no spec table under ### `%s`", typ)
			continue
		}
		for i := range spec.NumField() {
			f := spec.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			row, ok := rows[name]
			if !ok {
				t.Errorf("the %s spec table has no row for field %q", typ, name)
				continue
			}
			elem := f.Type
			for elem.Kind() == reflect.Slice || elem.Kind() == reflect.Pointer {
				elem = elem.Elem()
			}
			if elem.Kind() != reflect.Struct {
				continue
			}
			for j := range elem.NumField() {
				sub, _, _ := strings.Cut(elem.Field(j).Tag.Get("json"), ",")
				if sub != "" && sub != "-" && !regexp.MustCompile(`\{[^}]*\b`+sub+`\b[^}]*\}`).MatchString(row[len(row)-1]) {
					t.Errorf("the %s spec table's row for %q does not list %q in its {...}", typ, name, sub)
				}
			}
		}
	}
	for field, want := range map[string]string{
		"namespace":                   kubernetes.DefaultNamespace,
		"image":                       kubernetes.DefaultImage,
		"data_dir":                    kubernetes.DefaultDataDir,
		"timeout_seconds":             strconv.Itoa(kubernetes.DefaultTimeoutSeconds),
		"qps":                         strconv.Itoa(kubernetes.DefaultQPS),
		"burst":                       strconv.Itoa(kubernetes.DefaultBurst),
		"ping_path":                   kubernetes.DefaultPingPath,
		"unschedulable_grace_seconds": "0", // the field's zero value: no default is applied
	} {
		if row := tables[kubernetes.Type][field]; len(row) < 2 || row[0] != "`"+want+"`" {
			t.Errorf("the kubernetes spec table's row for %q is %q; the code's default is `%s`", field, row, want)
		}
	}
}

// specTables reads the spec table under each "### `<type>`" heading: by field, the row's cells after
// the first. A row of several fields ("`qps`, `burst`" with "`50`, `100`") counts for each, with
// its own value of every cell that lists as many; "`dsn` or `dsn_env`" counts for both.
func specTables(doc string) map[string]map[string][]string {
	tables := map[string]map[string][]string{}
	var rows map[string][]string
	for _, line := range strings.Split(doc, "\n") {
		if typ, ok := strings.CutPrefix(line, "### `"); ok {
			rows = map[string][]string{}
			tables[strings.TrimSuffix(typ, "`")] = rows
			continue
		}
		if rows == nil || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		fields := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cells[0], -1)
		for i, f := range fields {
			var rest []string
			for _, c := range cells[1:] {
				if parts := strings.Split(c, ", "); len(fields) > 1 && len(parts) == len(fields) {
					c = parts[i]
				}
				rest = append(rest, c)
			}
			rows[f[1]] = rest
		}
	}
	return tables
}
