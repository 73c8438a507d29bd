package replica

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// deletesRecordRows matches SQL that deletes prompt, observation or summary rows, whose
// short_ids rows a trigger deletes with them.
var deletesRecordRows = regexp.MustCompile(`(?is)\bDELETE\s+FROM\s+(observations|prompts|summaries)\b`)

// Every function of the package that deletes record rows calls deletesRecords, so the
// in-memory short-ID index is read again after it commits (TestShortIndexFollowsEveryWrite
// covers the behaviour of today's call sites; this keeps a new one from forgetting).
func TestEveryRecordDeleteMarksTheShortIndex(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	// Package-level variables and constants holding such SQL (forgetStmts): a function
	// that uses one deletes as if it held the SQL itself.
	deletingNames := map[string]bool{}
	for _, f := range parsed {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil && deletesRecordRows.MatchString(s) {
								for _, id := range vs.Names {
									deletingNames[id.Name] = true
								}
							}
						}
						return true
					})
				}
			}
		}
	}
	if !deletingNames["forgetStmts"] {
		t.Fatal("forgetStmts is not seen as deleting record rows: the check reads the wrong thing")
	}
	var deleters int
	for _, f := range parsed {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			deletes, marks := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if deletingNames[n.Name] {
						deletes = true
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING {
						if s, err := strconv.Unquote(n.Value); err == nil && deletesRecordRows.MatchString(s) {
							deletes = true
						}
					}
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "deletesRecords" {
						marks = true
					}
				}
				return true
			})
			if deletes {
				deleters++
				if !marks {
					t.Errorf("%s: %s deletes record rows without calling deletesRecords", fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
		}
	}
	if deleters == 0 {
		t.Fatal("found no function that deletes record rows: the check reads nothing")
	}
}
