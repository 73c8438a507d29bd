package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// leanBanned are what the lean memnode (cmd/memnode built with -tags memnode_lean, the
// binary users and agents run) must not link: each is milliseconds of package init and
// megabytes of binary on every `memnode search` (issue 30). The commands that need them
// are memnoded's; the lean binary execs it for them.
var leanBanned = []string{
	sqliteDriver, "github.com/libp2p/", "github.com/nlpodyssey/", "github.com/gin-gonic/",
	"github.com/hashicorp/memberlist", "google.golang.org/protobuf",
	"github.com/memnode/memnode/node", "github.com/memnode/memnode/replica", "github.com/memnode/memnode/sync",
	"github.com/memnode/memnode/team", "github.com/memnode/memnode/embed", "github.com/memnode/memnode/api",
	"github.com/memnode/memnode/search", "github.com/memnode/memnode/pipeline", "github.com/memnode/memnode/viewer",
}

// leanAllowed are packages below a banned one that the lean binary may link: api/apitype is
// the wire types' leaf (stdlib and memory only), not the gin server above it.
var leanAllowed = []string{"github.com/memnode/memnode/api/apitype"}

// banned reports which of leanBanned dep is (a package path or one below it).
func banned(dep string) (string, bool) {
	if slices.Contains(leanAllowed, dep) {
		return "", false
	}
	for _, b := range leanBanned {
		if dep == b || strings.HasPrefix(dep, strings.TrimSuffix(b, "/")+"/") {
			return b, true
		}
	}
	return "", false
}

// goDeps is `go list -deps` of ./cmd/memnode with tags, cgo off as make builds the lean one.
func goDeps(t *testing.T, tags string) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-tags", tags, "-deps", "./cmd/memnode")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %s -deps ./cmd/memnode: %v", tags, err)
	}
	return strings.Fields(string(out))
}

func TestLeanMemnodeLinksNoDaemonDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	deps := goDeps(t, "memnode_lean,nomsgpack")
	for _, d := range deps {
		if b, ok := banned(d); ok {
			t.Errorf("the lean memnode links %s (banned: %s): move the command that needs it to memnoded (cmd/memnode/daemon_exec.go) or keep the package out of its imports", d, b)
		}
	}
	if !slices.Contains(deps, "github.com/memnode/memnode/client") {
		t.Fatalf("go list -deps of the lean memnode lists no client: is it looking at the right package? %v", deps)
	}
	// The check can fail: the same package without the tag is memnoded, which links them.
	full := goDeps(t, "sqlite_fts5,nomsgpack")
	for _, want := range []string{"github.com/memnode/memnode/node", "github.com/gin-gonic/gin"} {
		if !slices.Contains(full, want) {
			t.Fatalf("memnoded (./cmd/memnode without memnode_lean) does not link %s: the build tag no longer separates the binaries", want)
		}
	}
}
