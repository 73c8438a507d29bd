package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// compiler names no program of the npm test's PATH may have: no Go, no C compiler.
var compiler = regexp.MustCompile(`^(go|gofmt|cc|c\+\+|cpp|gcc.*|g\+\+.*|clang.*|tcc|.*-(gcc|g\+\+|cc|cpp)(-[0-9.]+)?)$`)

// toolchainFreePath is a directory of symlinks to every program in the test's PATH except
// Go and the C compilers (node, npm, sh, git, coreutils, python3 …): a machine with Node and
// no toolchain.
func toolchainFreePath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(d)
		if err != nil || strings.Contains(d, filepath.Join("go", "bin")) {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if compiler.MatchString(name) {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				continue // the first in PATH wins, as in a shell
			}
			os.Symlink(filepath.Join(d, name), filepath.Join(dir, name))
		}
	}
	return dir
}

// npmTarballs are the memnode package and this platform's binary package.
func npmTarballs(t *testing.T) []string {
	t.Helper()
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	main, _ := filepath.Glob(filepath.Join(e2ekit.NpmDir, "memnode-[0-9]*.tgz"))
	plat, _ := filepath.Glob(filepath.Join(e2ekit.NpmDir, "memnode-"+runtime.GOOS+"-"+cpu+"-[0-9]*.tgz"))
	if len(main) != 1 || len(plat) != 1 {
		msg := "no npm tarballs in " + e2ekit.NpmDir + ": run 'make npm' (make test does)"
		if os.Getenv("MEMNODE_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out := []string{}
	for _, p := range []string{main[0], plat[0]} {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, abs)
	}
	return out
}

// TestNpmInstallWithoutToolchain is the npm acceptance test: on a PATH with no Go
// and no C compiler, a fresh HOME and npm prefix, `npm install -g` of the locally built
// tarballs, `npx memnode install claude-code`, then the pinned Claude Code CLI's session is
// recorded by the npm package's binaries and the next session gets memnode's context.
func TestNpmInstallWithoutToolchain(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the npm tarballs are built on Linux")
	}
	tarballs := npmTarballs(t)
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
	app := "" // known once the rig exists
	var next agentcli.Script
	rig := newAgentRig(t, greetingProject(), &agentcli.AnthropicMessages{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app = filepath.Join(rig.project, "app.py")
	next = agentcli.Sequence(
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Read", Args: map[string]string{"file_path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Edit", Args: map[string]string{"file_path": app, "old_string": `"Helo, "`, "new_string": `"Hello, "`}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "python3 test_app.py", "description": "run the tests"}}}},
		agentcli.Turn{Text: "Fixed the greeting typo in app.py; test_app.py passes."},
		agentcli.Turn{Text: "Last time the greeting typo in app.py was fixed."},
	)
	prefix := t.TempDir()
	rig.path = toolchainFreePath(t) + string(os.PathListSeparator) + filepath.Join(prefix, "bin")
	npmEnv := []string{"NPM_CONFIG_PREFIX=" + prefix, "NPM_CONFIG_CACHE=" + filepath.Join(t.TempDir(), "npm-cache"),
		// The tarballs are local and unpublished: nothing may come from the registry.
		"NPM_CONFIG_OFFLINE=true", "NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_AUDIT=false", "NPM_CONFIG_FUND=false"}
	rig.agentEnv = append(npmEnv, "ANTHROPIC_BASE_URL="+rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command("sh", append([]string{"-c", `exec "$0" "$@"`, name}, args...)...)
		cmd.Dir = rig.project
		cmd.Env = rig.env()
		o := runCLI(t, 3*time.Minute, cmd)
		if o.Code != 0 {
			t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), o.Code, o.Stdout, o.Stderr)
		}
		return o.Stdout
	}
	// The machine has no toolchain, and memnode is not there before npm puts it there.
	if out := run("sh", "-c", "for c in go gofmt gcc cc c++ clang memnode; do command -v $c; done; true"); strings.TrimSpace(out) != "" {
		t.Fatalf("the test's PATH has a toolchain or memnode:\n%s", out)
	}
	run("npm", append([]string{"install", "-g"}, tarballs...)...)
	if out := run("npx", "memnode", "version"); !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("npx memnode version = %q", out)
	}
	run("npx", "memnode", "install", "claude-code")
	// The hooks run the npm package's binaries straight (no node in between).
	settings := string(e2ekit.ReadFile(t, filepath.Join(rig.home, ".claude", "settings.json")))
	hook := filepath.Join(prefix, "lib", "node_modules", "@memnode")
	if !strings.Contains(settings, hook) || !strings.Contains(settings, "/bin/memnode-hook hook claude-code context") {
		t.Fatalf("settings.json's hooks do not run the npm package's memnode-hook under %s:\n%s", hook, settings)
	}

	claudeArgs := []string{"--output-format", "json", "--allowedTools", "Bash Edit mcp__memnode", "--model", "claude-sonnet-4-5"}
	rig.runAgent(claude, append([]string{"-p", "The greeting in app.py has a typo. Fix it and run the tests."}, claudeArgs...)...)
	s1 := len(rig.turns())
	testkit.WaitForState(t, "session 1's tool calls as observations", 60*time.Second, func() (bool, string) {
		obs := rig.observationTexts()
		all := strings.Join(obs, "\n")
		return len(obs) >= 3 && strings.Contains(all, "python3 test_app.py") && strings.Contains(all, "app.py") && rig.Queued() == 0, all
	})
	rig.runAgent(claude, append([]string{"-c", "-p", "What did we change in this project last time?"}, claudeArgs...)...)
	reqs := rig.turns()
	if len(reqs) <= s1 || !reqs[s1].Contains("# memnode: memory of project") {
		t.Fatalf("the next session's first request lacks memnode's context (%d requests after session 1)", len(reqs)-s1)
	}
	if !reqs[s1].Contains("app.py") {
		t.Errorf("the next session's context does not mention app.py:\n%.3000s", reqs[s1].Body)
	}
}
