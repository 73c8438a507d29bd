package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// goPackage is the part of `go list -json` this test reads.
type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string // every package it links, transitively (test files aside)
	Module     *struct{ Path string }
}

// listPackages runs go list over the whole module with the build tags make uses. Three
// tests read the same list: it is run once per test binary (a few CPU-seconds each time).
func listPackages(t *testing.T, root string) (module string, pkgs []goPackage) {
	t.Helper()
	l := goList(root)
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.module, l.pkgs
}

type listing struct {
	module string
	pkgs   []goPackage
	err    error
}

// goList is listPackages' memo: one go list per root directory.
var goList = func() func(root string) listing {
	var mu sync.Mutex
	done := map[string]listing{}
	return func(root string) listing {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := done[root]; ok {
			return l
		}
		l := runGoList(root)
		done[root] = l
		return l
	}
}()

func runGoList(root string) listing {
	cmd := exec.Command("go", "list", "-tags", "sqlite_fts5,nomsgpack", "-json", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return listing{err: fmt.Errorf("go list: %w", err)}
	}
	var l listing
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return listing{err: fmt.Errorf("decode go list output: %w", err)}
		}
		if p.Module != nil {
			l.module = p.Module.Path
		}
		l.pkgs = append(l.pkgs, p)
	}
	if l.module == "" || len(l.pkgs) == 0 {
		return listing{err: errors.New("go list found no packages of the module")}
	}
	return l
}

var (
	rowRE  = regexp.MustCompile("^\\| `([^`]+)` \\|.*\\| ([^|]*) \\|\\s*$")
	backRE = regexp.MustCompile("`([^`]+)`")
)

// tableRows reads the package table of docs/ARCHITECTURE.md: package → its "depends on" set.
func tableRows(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Packages"
		case in:
			m := rowRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			deps := []string{}
			for _, d := range backRE.FindAllStringSubmatch(m[2], -1) {
				deps = append(deps, d[1])
			}
			sort.Strings(deps)
			rows[m[1]] = deps
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestArchitectureTableMatchesTheCode(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs := listPackages(t, root)
	rows := tableRows(t, filepath.Join(root, "docs", "ARCHITECTURE.md"))

	rel := func(importPath string) string { return strings.TrimPrefix(importPath, module+"/") }
	var want strings.Builder
	seen := map[string]bool{}
	for _, p := range pkgs {
		name := rel(p.ImportPath)
		seen[name] = true
		deps := []string{}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") {
				deps = append(deps, rel(imp))
			}
		}
		sort.Strings(deps)
		got, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("docs/ARCHITECTURE.md has no row for package `%s`", name)
		case strings.Join(got, " ") != strings.Join(deps, " "):
			t.Errorf("`%s` depends on %v, the table says %v", name, deps, got)
		}
		col := "—"
		if len(deps) > 0 {
			col = "`" + strings.Join(deps, "`, `") + "`"
		}
		want.WriteString("| `" + name + "` | … | " + col + " |\n")
	}
	for name := range rows {
		if !seen[name] {
			t.Errorf("docs/ARCHITECTURE.md has a row for `%s`, which is not a package of the module", name)
		}
	}
	if t.Failed() {
		t.Logf("the dependency column the code has, one row per package:\n%s", want.String())
	}
}
