package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// Budgets of the package init work every memnode process pays before main: `memnode
// search`, `memnode mcp` and each CLI command run every init the binary links, the
// daemon's dependencies included (Go runs every linked package's init; no command can
// skip one). Allocations are the runtime's own count (GODEBUG=inittrace=1), which the
// machine's load does not move, unlike a time. Measured at 195 own and ~9,200 in all
// (issue 30); the budgets leave room for small changes, not for a new table, regexp or
// template built at init, nor for a new dependency whose init is heavy.
const (
	// ownInitAllocsMax bounds memnode's own packages together: tables, regexps and
	// templates are built on first use (sync.OnceValue), not at init.
	ownInitAllocsMax = 260
	// ownPkgInitAllocsMax bounds any one of them: a compiled regexp or a parsed template
	// alone is more.
	ownPkgInitAllocsMax = 40
	// linkedInitAllocsMax bounds every linked package of memnoded together, dependencies
	// included (libp2p, gin, spago: the daemon's).
	linkedInitAllocsMax = 10_000
	// leanLinkedInitAllocsMax bounds the same for the lean memnode users run (1,425 measured
	// with the MCP SDK and the key store's D-Bus client; the hook binary 414): a daemon
	// dependency that slips into it is thousands more.
	leanLinkedInitAllocsMax = 2_000
)

type pkgInit struct {
	pkg    string
	allocs int
	bytes  int
}

// initTrace runs bin with the runtime's init trace and returns one entry per package init.
func initTrace(t *testing.T, bin string, args ...string) []pkgInit {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "MEMNODE_DATA_DIR="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	var out []pkgInit
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init github.com/memnode/memnode/privacy @1.5 ms, 0.30 ms clock, 78128 bytes, 502 allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		allocs, err1 := strconv.Atoi(f[9])
		bytes, err2 := strconv.Atoi(f[7])
		if err1 != nil || err2 != nil {
			t.Fatalf("init trace line %q", line)
		}
		out = append(out, pkgInit{pkg: f[1], allocs: allocs, bytes: bytes})
	}
	if len(out) == 0 {
		t.Fatalf("no init trace lines in stderr: %q", stderr.String())
	}
	return out
}

func TestProcessStartInitBudget(t *testing.T) {
	t.Parallel()
	e2ekit.NeedBinaries(t)
	for _, b := range []struct {
		bin       string
		linkedMax int
	}{{e2ekit.MemnodeBin, leanLinkedInitAllocsMax}, {filepath.Join(filepath.Dir(e2ekit.MemnodeBin), "memnoded"), linkedInitAllocsMax}} {
		t.Run(filepath.Base(b.bin), func(t *testing.T) { checkInitBudget(t, b.bin, b.linkedMax) })
	}
}

func checkInitBudget(t *testing.T, bin string, linkedMax int) {
	inits := initTrace(t, bin, "version")
	own, all := 0, 0
	var ownPkgs []string
	for _, in := range inits {
		all += in.allocs
		if in.pkg != "main" && !strings.HasPrefix(in.pkg, "github.com/memnode/memnode/") {
			continue
		}
		own += in.allocs
		ownPkgs = append(ownPkgs, in.pkg)
		if in.allocs > ownPkgInitAllocsMax {
			t.Errorf("init of %s allocates %d times (at most %d): build its tables, regexps and templates on first use", in.pkg, in.allocs, ownPkgInitAllocsMax)
		}
	}
	if len(ownPkgs) < 5 {
		t.Fatalf("the init trace lists only %v of memnode's packages; is it reading the right binary?", ownPkgs)
	}
	if own > ownInitAllocsMax {
		t.Errorf("memnode's own package inits allocate %d times (at most %d): build tables on first use", own, ownInitAllocsMax)
	}
	if all > linkedMax {
		sort.Slice(inits, func(i, j int) bool { return inits[i].allocs > inits[j].allocs })
		var top []string
		for _, in := range inits[:min(10, len(inits))] {
			top = append(top, in.pkg+" "+strconv.Itoa(in.allocs))
		}
		t.Errorf("the %d linked package inits allocate %d times (at most %d): every memnode command (search, mcp) pays them at start; heaviest: %s",
			len(inits), all, linkedMax, strings.Join(top, ", "))
	}
	t.Logf("%d package inits: %d allocations, %d of them in memnode's own %d packages", len(inits), all, own, len(ownPkgs))
}
