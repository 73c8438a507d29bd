// Package gosrc is test support: it walks the module's own non-test Go files, parsed, so a
// test can hold a policy to one place ("no other file names a housekeeping tool", "no
// other file formats a record's time").
package gosrc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Walk calls fn with every non-test Go file below root (the module root, as a test in a
// package n levels down reaches it: "../.."), by its slash path relative to root, except
// testdata, hidden and node_modules folders and the paths skip reports (a file or a
// folder). It fails tb when it read fewer than 100 files: a walk from the wrong folder
// would pass every check.
func Walk(tb testing.TB, root string, skip func(rel string) bool, fn func(rel string, f *ast.File)) {
	tb.Helper()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || skip(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || skip(rel) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		fn(rel, f)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if files < 100 {
		tb.Fatalf("read only %d Go files under %s; is the walk at the module root?", files, root)
	}
}

// Strings calls fn with the value of every string literal in f.
func Strings(f *ast.File, fn func(lit *ast.BasicLit, s string)) {
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				fn(lit, s)
			}
		}
		return true
	})
}
