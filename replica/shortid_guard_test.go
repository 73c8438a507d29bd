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
	var deleters int
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			deletes, marks := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
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
