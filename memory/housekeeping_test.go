package memory

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

// The agents' housekeeping tools are one list (housekeeping): the configs' defaults, the
// Claude Code adapter and the offline compressor each kept their own copy once, and the
// copies drifted. No other non-test Go file of the module may name one of them in a string.
func TestHousekeepingIsOneList(t *testing.T) {
	// Tool names as data, not as a policy: the scale benchmark's generator makes TodoWrite
	// calls because agents make them; inject says where a record's words came from (a
	// BashOutput record imported from elsewhere is still a command's output).
	allowed := map[string]bool{"memory/policy.go": true, "cmd/memnode-bench/scalegen.go": true, "inject/provenance.go": true}
	root := ".."
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed[rel] {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && Housekeeping(s) {
				t.Errorf("%s names the housekeeping tool %q: ask memory.Housekeeping instead of keeping a list", rel, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under %s; is the walk at the module root?", files, root)
	}
}
