// Command noassert lists the test functions that cannot fail: a Test whose body (subtests
// and closures included) calls no Error, Errorf, Fatal, Fatalf, Fail or FailNow, and passes
// its *testing.T to no helper that can (a function of another package taking it is taken
// to be one; one of the same package is read in turn). The project's rule is that every
// test asserts something that could fail; a listed test is a place to look, read by syntax
// alone (a method of a value that holds t, such as an e2ekit.Instance's MustRun, is not
// followed).
//
//	go run ./tools/noassert [dir]   # dir: the module root, "." by default
//
// It prints one "path:line TestName" line per test found and exits 1 when it found one.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// failing reports whether name is a method of testing.T (and testing.TB, rapid.T, …) that
// fails a test.
func failing(name string) bool {
	switch name {
	case "Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow":
		return true
	}
	return false
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	found, read, err := scan(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noassert:", err)
		os.Exit(2)
	}
	for _, f := range found {
		fmt.Println(f)
	}
	fmt.Fprintf(os.Stderr, "noassert: %d of %d tests cannot fail\n", len(found), read)
	if len(found) > 0 {
		os.Exit(1)
	}
}

// scan returns "path:line TestName" for every test below root that cannot fail, and how many
// tests it read.
func scan(root string) ([]string, int, error) {
	dirs := map[string][]string{} // dir → its _test.go files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	var out []string
	read := 0
	for _, files := range dirs {
		found, n, err := scanPackage(files)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, found...)
		read += n
	}
	sort.Strings(out)
	return out, read, nil
}

// pkg is one directory's test files: its functions by name, per package name (a dir holds
// package p and p_test).
type pkg struct {
	funcs   map[string]*ast.FuncDecl
	asserts map[string]bool // memo; false while a function is being read (recursion)
}

func scanPackage(files []string) ([]string, int, error) {
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	type test struct {
		p  *pkg
		fn *ast.FuncDecl
	}
	var tests []test
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		p := pkgs[f.Name.Name]
		if p == nil {
			p = &pkg{funcs: map[string]*ast.FuncDecl{}, asserts: map[string]bool{}}
			pkgs[f.Name.Name] = p
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			p.funcs[fn.Name.Name] = fn
			if strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" && takesT(fn) {
				tests = append(tests, test{p, fn})
			}
		}
	}
	var out []string
	for _, tc := range tests {
		if !tc.p.canFail(tc.fn) {
			pos := fset.Position(tc.fn.Pos())
			out = append(out, fmt.Sprintf("%s:%d %s", filepath.ToSlash(pos.Filename), pos.Line, tc.fn.Name.Name))
		}
	}
	return out, len(tests), nil
}

// takesT reports whether fn's first parameter is a *testing.T (a test, not a helper).
func takesT(fn *ast.FuncDecl) bool {
	if fn.Type.Params == nil || len(fn.Type.Params.List) != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// testingParams are the names fn gives its testing parameters (t, tb, b …): any parameter
// whose type names testing or is a T or TB.
func testingParams(ft *ast.FuncType, into map[string]bool) {
	if ft.Params == nil {
		return
	}
	for _, field := range ft.Params.List {
		if isTestingType(field.Type) {
			for _, n := range field.Names {
				into[n.Name] = true
			}
		}
	}
}

func isTestingType(e ast.Expr) bool {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	return sel.Sel.Name == "T" || sel.Sel.Name == "TB" || sel.Sel.Name == "B" || sel.Sel.Name == "F"
}

// canFail reports whether fn calls a failing method, or hands its testing value to a
// helper that can fail.
func (p *pkg) canFail(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if v, ok := p.asserts[name]; ok {
		return v
	}
	p.asserts[name] = false // a recursive call adds nothing
	params := map[string]bool{}
	testingParams(fn.Type, params)
	v := p.bodyCanFail(fn.Body, params)
	p.asserts[name] = v
	return v
}

func (p *pkg) bodyCanFail(body ast.Node, params map[string]bool) bool {
	can := false
	ast.Inspect(body, func(n ast.Node) bool {
		if can {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit: // a subtest or closure: its own testing parameters count too
			testingParams(n.Type, params)
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if failing(sel.Sel.Name) {
					can = true
					return false
				}
				if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "require" || x.Name == "assert") {
					can = true
					return false
				}
			}
			if !passesTesting(n, params) {
				return true
			}
			if id, ok := n.Fun.(*ast.Ident); ok {
				if helper := p.funcs[id.Name]; helper != nil {
					if p.canFail(helper) {
						can = true
						return false
					}
					return true
				}
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && params[x.Name] {
					return true // a method of t itself (Run, Helper, Cleanup …): its arguments are read on
				}
			}
			can = true // a helper of another package (or a method of another value) taking t
			return false
		}
		return true
	})
	return can
}

// passesTesting reports whether one of call's arguments is a testing parameter.
func passesTesting(call *ast.CallExpr, params map[string]bool) bool {
	for _, a := range call.Args {
		if id, ok := a.(*ast.Ident); ok && params[id.Name] {
			return true
		}
	}
	return false
}
