package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// docTestBlock is a README code block whose commands TestReadmeDocTest runs: a fence opened
// with "```sh doc-test".
var docTestBlock = regexp.MustCompile("(?s)```sh doc-test\n(.*?)```")

// TestReadmeDocTest runs, line by line, every README code block marked doc-test against the
// real binaries in PATH and a fresh HOME, as a new user following the README would, so the
// README cannot drift from what memnode does. It also keeps the Quick start near the top.
func TestReadmeDocTest(t *testing.T) {
	t.Parallel()
	e2ekit.NeedBinaries(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	quick := regexp.MustCompile(`(?m)^## Quick start`).FindIndex(readme)
	if quick == nil {
		t.Fatal("the README has no Quick start section")
	}
	if line := 1 + strings.Count(string(readme[:quick[0]]), "\n"); line > 80 {
		t.Errorf("Quick start begins at README line %d, after line 80", line)
	}
	blocks := docTestBlock.FindAllSubmatch(readme, -1)
	if len(blocks) < 2 {
		t.Fatalf("the README has %d doc-test blocks, want the quick start and 'is it working?' at least", len(blocks))
	}

	home := t.TempDir()
	bin := t.TempDir()
	for _, name := range []string{"memnode", "memnode-hook"} {
		if err := os.Symlink(filepath.Join(filepath.Dir(e2ekit.MemnodeBin), name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMNODE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MEMNODE_PORT="+strconv.Itoa(e2ekit.FreePort(t)), "MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1",
		// the key store a CI box has: no Secret Service, maybe no kernel keyring
		"MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=doc-test")
	sh := func(line string) (string, error) {
		cmd := exec.Command("sh", "-c", line)
		cmd.Env, cmd.Dir = env, home
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { sh("memnode stop") })
	ran := 0
	for _, b := range blocks {
		for _, line := range strings.Split(string(b[1]), "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			out, err := sh(line)
			if err != nil {
				t.Errorf("README line %q: %v\n%s", line, err, out)
			}
			ran++
		}
	}
	t.Logf("ran %d README lines", ran)
}
