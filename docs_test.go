package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const troubleshootingGuide = "docs-templates/guides/troubleshooting.md.tmpl"

// Every error and warning summary the provider can report has a heading in the troubleshooting
// guide, so a new diagnostic cannot ship without its explanation. Summaries are read from the
// source: each call of Add(Attribute)Error/Warning under internal/, with the parts that are not
// string literals (fmt.Sprintf verbs, variables) matching any text.
func TestTroubleshootingGuideCoversEveryDiagnostic(t *testing.T) {
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

	summaries := diagnosticSummaries(t)
	if len(summaries) < 10 {
		t.Fatalf("found only %d diagnostic summaries under internal/: the scan is broken", len(summaries))
	}
	for _, s := range summaries {
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

type diagnosticSummary struct {
	pos     string
	pattern string // a regular expression
}

// summaryArg is the index of the summary argument of each diagnostics method.
var summaryArg = map[string]int{"AddError": 0, "AddWarning": 0, "AddAttributeError": 1, "AddAttributeWarning": 1}

func diagnosticSummaries(t *testing.T) []diagnosticSummary {
	t.Helper()
	var out []diagnosticSummary
	fset := token.NewFileSet()
	err := filepath.WalkDir("internal", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := summaryArg[sel.Sel.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			out = append(out, diagnosticSummary{pos: fset.Position(call.Pos()).String(), pattern: textPattern(call.Args[i])})
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var formatVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// textPattern turns an expression building a string into a regular expression: literals match
// themselves, format verbs and everything else match any text.
func textPattern(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil {
			return literalPattern(s, false)
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return textPattern(e.X) + textPattern(e.Y)
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			if lit, ok := e.Args[0].(*ast.BasicLit); ok {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					return literalPattern(s, true)
				}
			}
		}
	}
	return ".+"
}

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
