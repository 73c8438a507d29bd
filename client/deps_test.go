package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goTool runs the go command in the module root and returns its stdout.
func goTool(t *testing.T, env []string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// The client side of the API — the CLI's client, the lean hook binary and the MCP server —
// must not link the daemon's heavy parts: the cgo SQLite driver, libp2p, or the embedding
// runtime. The domain and wire-type leaves import only the standard library (and memory).
func TestClientSideDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	deps := strings.Fields(goTool(t, nil, "list", "-tags", "sqlite_fts5,nomsgpack", "-deps", "./client", "./hooks", "./mcpserver"))
	for _, d := range deps {
		for _, banned := range []string{"github.com/mattn/go-sqlite3", "github.com/libp2p/", "github.com/nlpodyssey/spago", "github.com/gin-gonic/gin"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("client side links %s", d)
			}
		}
	}
	if !slices.Contains(deps, "github.com/memnode/memnode/api/apitype") {
		t.Errorf("go list -deps did not list api/apitype; is the check looking at the right packages? %v", deps)
	}

	leaves := map[string][]string{
		"./memory":      {"github.com/memnode/memnode/memory"},
		"./api/apitype": {"github.com/memnode/memnode/api/apitype", "github.com/memnode/memnode/memory"},
	}
	for pkg, allowed := range leaves {
		nonStd := strings.Fields(goTool(t, nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg))
		for _, d := range nonStd {
			if !slices.Contains(allowed, d) {
				t.Errorf("leaf %s imports %s (allowed: stdlib and %v)", pkg, d, allowed)
			}
		}
	}
}

// The lean hook binary builds without cgo.
func TestHookBinaryBuildsWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out := filepath.Join(t.TempDir(), "memnode-hook")
	goTool(t, []string{"CGO_ENABLED=0"}, "build", "-o", out, "./cmd/memnode-hook")
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("no hook binary: %v", err)
	}
}
