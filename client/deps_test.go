package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/testbin"
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
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Built once for every test process (internal/testbin: cached, under a lock), with cgo off.
	dir, err := testbin.Build(testbin.Set{Dir: root, Bins: []testbin.Spec{{Name: "memnode-hook", Pkg: "./cmd/memnode-hook", Env: []string{"CGO_ENABLED=0"}}}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "memnode-hook")
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("no hook binary: %v", err)
	}

	// Every process an IDE starts pays every package init: none of memnode's may build big
	// tables or compile regexps there (privacy compiles its patterns on first use). The
	// runtime's init trace counts each package's allocations.
	cmd := exec.Command(out, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memnode-hook version: %v\n%s", err, stderr.String())
	}
	const maxAllocs = 200
	seen := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init github.com/memnode/memnode/privacy @1.5 ms, 0.30 ms clock, 78128 bytes, 502 allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		seen++
		if !strings.HasPrefix(f[1], "github.com/memnode/memnode/") {
			continue
		}
		if n, err := strconv.Atoi(f[9]); err != nil || n > maxAllocs {
			t.Errorf("init of %s allocates %s times (at most %d): compile or build it on first use", f[1], f[9], maxAllocs)
		}
	}
	if seen == 0 {
		t.Fatalf("no init trace lines in stderr: %q", stderr.String())
	}
}

// The lean hook binary links only the hook's own code and what it needs to reach the node:
// no daemon package (node, pipeline, replica, search, embed, ai, sync, team, viewer,
// mcpserver…), no third-party module, and none of the standard library's server-side or
// template machinery. A package outside these lists is a new cost on every tool call an IDE
// makes: keep it out of hooks, client and the platform adapters' hook side, or add it here
// with the reason.
func TestHookBinaryDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	const mod = "github.com/memnode/memnode/"
	allowed := []string{"cmd/memnode-hook", "hooks", "client", "memory", "api/apitype", "configs", "privacy",
		"platform", "contextfile", "install", "internal/clienv", "internal/datadir", "internal/localnet",
		"internal/atomicfile", "internal/logfile",
		"capture", // the pause/opt-in switches: stdlib and atomicfile, one small file read per hook
	}
	bannedStd := []string{"database/sql", "text/template", "html/template", "net/http/httptest", "net/http/pprof",
		"net/rpc", "expvar", "testing", "go/parser", "plugin"}
	deps := strings.Fields(goTool(t, []string{"CGO_ENABLED=0"}, "list", "-tags", "sqlite_fts5,nomsgpack", "-deps",
		"-f", "{{if .Standard}}std:{{end}}{{.ImportPath}}", "./cmd/memnode-hook"))
	for _, d := range deps {
		if std, ok := strings.CutPrefix(d, "std:"); ok {
			if slices.Contains(bannedStd, std) {
				t.Errorf("memnode-hook links %s", std)
			}
			continue
		}
		rel, ok := strings.CutPrefix(d, mod)
		if !ok {
			t.Errorf("memnode-hook links the third-party package %s", d)
			continue
		}
		if !slices.ContainsFunc(allowed, func(a string) bool { return rel == a || strings.HasPrefix(rel, "platform/") }) {
			t.Errorf("memnode-hook links %s (allowed: %v and platform/...)", d, allowed)
		}
	}
	if !slices.Contains(deps, mod+"hooks") || !slices.Contains(deps, "std:net/http") {
		t.Errorf("go list -deps did not list hooks and net/http; is the check looking at the right package? %v", deps)
	}
}
