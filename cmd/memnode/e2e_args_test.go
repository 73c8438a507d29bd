package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
)

// argCase is one run of the real binary in TestEveryCommandValidatesItsArguments.
type argCase struct {
	cmd   string // the commandTable entry it covers
	kind  string // good, missing (a required argument left out), flag (unknown flag), bad (a bad value or a stray argument)
	args  []string
	stdin string
	code  int // the exit code; every kind but good wants exactly one line on stderr and nothing on stdout
	// good only: at least outMin lines on stdout, exactly errLines on stderr, errHas in it.
	outMin, errLines int
	errHas           string
}

// TestEveryCommandValidatesItsArguments walks every command × {good, missing argument,
// unknown flag, bad value} on the real binary against a running node: a mistake is exit
// ≠ 0 with one line on stderr saying what to do, before the command does anything
// (`stop --frob` leaves the node running, `forget ID --frob` forgets nothing, `install
// claude-code --frob` installs nothing).
func TestEveryCommandValidatesItsArguments(t *testing.T) {
	in := e2ekit.NewInstance(t)
	in.Extra = append(in.Extra, "MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=matrix")
	in.Start()
	pid := in.PidFile()
	export := filepath.Join(t.TempDir(), "two.jsonl")
	emptyDir := t.TempDir() // an agent's history folder with no session in it
	e2ekit.WriteObservations(t, export, 2)
	in.MustRun(nil, "import", export)
	var res apitype.Results
	if err := json.Unmarshal([]byte(in.MustRun(nil, "search", "parser", "--project", "bigproj", "--json")), &res); err != nil || len(res.Hits) != 2 {
		t.Fatalf("search after import: %d hits, %v", len(res.Hits), err)
	}
	keep, gone := res.Hits[0].ID, res.Hits[1].ID
	// The same export compressed (.jsonl.gz) imports as it is: its session and both records
	// already present, the header not counted as one.
	plain, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var packed bytes.Buffer
	z := gzip.NewWriter(&packed)
	z.Write(plain)
	z.Close()
	gz := export + ".gz"
	if err := os.WriteFile(gz, packed.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := in.MustRun(nil, "import", gz); !strings.Contains(out, "0 observations") || !strings.Contains(out, "3 already present") {
		t.Fatalf("import of the gzipped export: %s", out)
	}

	cases := []argCase{
		{cmd: "version", kind: "good", args: []string{"version"}, outMin: 1},
		{cmd: "version", kind: "flag", args: []string{"version", "--frob"}, code: 2},
		{cmd: "version", kind: "bad", args: []string{"version", "now"}, code: 2},

		{cmd: "start", kind: "good", args: []string{"start"}, outMin: 1},
		{cmd: "start", kind: "flag", args: []string{"start", "--frob"}, code: 2},
		{cmd: "start", kind: "bad", args: []string{"start", "now"}, code: 2},

		{cmd: "stop", kind: "flag", args: []string{"stop", "--frob"}, code: 2},
		{cmd: "stop", kind: "bad", args: []string{"stop", "now"}, code: 2},

		{cmd: "status", kind: "good", args: []string{"status"}, outMin: 5},
		{cmd: "status", kind: "flag", args: []string{"status", "--frob"}, code: 2},
		{cmd: "status", kind: "bad", args: []string{"status", "foo"}, code: 2},

		{cmd: "run", kind: "flag", args: []string{"run", "--frob"}, code: 2},
		{cmd: "run", kind: "bad", args: []string{"run", "--log-level", "loud"}, code: 2},
		{cmd: "run", kind: "bad", args: []string{"run", "now"}, code: 2},

		{cmd: "repair", kind: "flag", args: []string{"repair", "--frob"}, code: 2},
		{cmd: "repair", kind: "bad", args: []string{"repair", "now"}, code: 2},
		{cmd: "repair", kind: "bad", args: []string{"repair"}, code: 1}, // the node runs

		{cmd: "context", kind: "good", args: []string{"context", "--project", "bigproj"}, outMin: 1},
		{cmd: "context", kind: "flag", args: []string{"context", "--frob"}, code: 2},
		{cmd: "context", kind: "bad", args: []string{"context", "--project"}, code: 2},
		{cmd: "context", kind: "bad", args: []string{"context", "extra"}, code: 2},

		{cmd: "search", kind: "good", args: []string{"search", "parser", "--project", "bigproj"}, outMin: 2},
		{cmd: "search", kind: "flag", args: []string{"search", "parser", "--bogus"}, code: 2},
		{cmd: "search", kind: "bad", args: []string{"search", "parser", "--limit", "abc"}, code: 2},
		{cmd: "search", kind: "bad", args: []string{"search", "parser", "--since", "yesterday"}, code: 2},

		{cmd: "timeline", kind: "good", args: []string{"timeline", keep}, outMin: 2},
		{cmd: "timeline", kind: "missing", args: []string{"timeline"}, code: 2},
		{cmd: "timeline", kind: "flag", args: []string{"timeline", keep, "--frob"}, code: 2},
		{cmd: "timeline", kind: "bad", args: []string{"timeline", "ZZZZZZ"}, code: 1},
		{cmd: "timeline", kind: "bad", args: []string{"timeline", keep, "--before", "x"}, code: 2},

		{cmd: "get", kind: "good", args: []string{"get", keep}, outMin: 3},
		{cmd: "get", kind: "missing", args: []string{"get"}, code: 2},
		{cmd: "get", kind: "flag", args: []string{"get", keep, "--frob"}, code: 2},
		{cmd: "get", kind: "bad", args: []string{"get", "ZZZZZZ"}, code: 1},

		{cmd: "forget", kind: "missing", args: []string{"forget"}, code: 2},
		{cmd: "forget", kind: "flag", args: []string{"forget", keep, "--frob"}, code: 2},
		{cmd: "forget", kind: "bad", args: []string{"forget", "ZZZZZZ"}, code: 1},
		{cmd: "forget", kind: "good", args: []string{"forget", gone, "ZZZZZZ"}, outMin: 1, errLines: 1, errHas: "ZZZZZZ"},

		{cmd: "correct", kind: "missing", args: []string{"correct", keep}, code: 2},
		{cmd: "correct", kind: "flag", args: []string{"correct", keep, "it is", "--frob"}, code: 2},
		{cmd: "correct", kind: "bad", args: []string{"correct", "ZZZZZZ", "it is"}, code: 1},
		{cmd: "correct", kind: "good", args: []string{"correct", keep, "the parser handles nested blocks since v2"}, outMin: 1},

		{cmd: "supersede", kind: "missing", args: []string{"supersede", keep}, code: 2},
		{cmd: "supersede", kind: "flag", args: []string{"supersede", keep, keep, "--frob"}, code: 2},
		{cmd: "supersede", kind: "bad", args: []string{"supersede", "ZZZZZZ", "YYYYYY"}, code: 1},
		{cmd: "supersede", kind: "bad", args: []string{"supersede", "a", "b", "c"}, code: 2},

		{cmd: "config", kind: "good", args: []string{"config", "set", "context_sessions", "4"}, outMin: 1},
		{cmd: "config", kind: "good", args: []string{"config", "get", "context_sessions"}, outMin: 1},
		{cmd: "config", kind: "missing", args: []string{"config", "set", "port"}, code: 2},
		{cmd: "config", kind: "missing", args: []string{"config"}, code: 2},
		{cmd: "config", kind: "flag", args: []string{"config", "list", "--frob"}, code: 2},
		{cmd: "config", kind: "bad", args: []string{"config", "set", "port", "abc"}, code: 1},
		{cmd: "config", kind: "bad", args: []string{"config", "get", "nosuch"}, code: 1},

		{cmd: "import", kind: "good", args: []string{"import", export}, outMin: 1},
		{cmd: "import", kind: "missing", args: []string{"import"}, code: 2},
		{cmd: "import", kind: "flag", args: []string{"import", export, "--frob"}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", export, "--from-claude-mem", export}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", filepath.Join(in.DataDir, "nope.jsonl")}, code: 1},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-codex", "--from-gemini-cli"}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-qwen-code", "--from-claude-mem", export}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-codex", "a", "b"}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-gemini-cli", "--since", "someday"}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", export, "--since", "2026-11-01"}, code: 2},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-codex", filepath.Join(in.DataDir, "no-such-dir")}, code: 1},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-gemini-cli", filepath.Join(in.DataDir, "no-such-dir")}, code: 1},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-qwen-code", filepath.Join(in.DataDir, "no-such-dir")}, code: 1},
		{cmd: "import", kind: "bad", args: []string{"import", "--from-opencode", filepath.Join(in.DataDir, "no-such-dir")}, code: 1},
		{cmd: "import", kind: "good", args: []string{"import", "--from-opencode", emptyDir}, outMin: 1},
		{cmd: "import", kind: "good", args: []string{"import", "--from-codex", emptyDir}, outMin: 1},

		{cmd: "export", kind: "good", args: []string{"export", "--project", "nope"}, outMin: 2, errLines: 1, errHas: "exported 0 records"},
		{cmd: "export", kind: "flag", args: []string{"export", "--frob"}, code: 2},
		{cmd: "export", kind: "bad", args: []string{"export", "extra"}, code: 2},

		{cmd: "mcp", kind: "good", args: []string{"mcp"}},
		{cmd: "mcp", kind: "flag", args: []string{"mcp", "--frob"}, code: 2},
		{cmd: "mcp", kind: "bad", args: []string{"mcp", "extra"}, code: 2},

		{cmd: "embed", kind: "good", args: []string{"embed", "status"}, outMin: 3},
		{cmd: "embed", kind: "missing", args: []string{"embed"}, code: 2},
		{cmd: "embed", kind: "flag", args: []string{"embed", "status", "--frob"}, code: 2},
		{cmd: "embed", kind: "bad", args: []string{"embed", "nope"}, code: 2},
		{cmd: "embed", kind: "bad", args: []string{"embed", "pull", "a", "b"}, code: 2},

		{cmd: "viewer", kind: "good", args: []string{"viewer"}, outMin: 2},
		{cmd: "viewer", kind: "flag", args: []string{"viewer", "--frob"}, code: 2},
		{cmd: "viewer", kind: "bad", args: []string{"viewer", "foo"}, code: 2},

		{cmd: "team", kind: "good", args: []string{"team", "status"}, outMin: 1},
		{cmd: "team", kind: "missing", args: []string{"team"}, code: 2},
		{cmd: "team", kind: "missing", args: []string{"team", "join", "http://127.0.0.1:1"}, code: 2},
		{cmd: "team", kind: "missing", args: []string{"team", "share"}, code: 2},
		{cmd: "team", kind: "flag", args: []string{"team", "status", "--frob"}, code: 2},
		{cmd: "team", kind: "flag", args: []string{"team", "leave", "--frob"}, code: 2},
		{cmd: "team", kind: "bad", args: []string{"team", "leave"}, code: 1},
		{cmd: "team", kind: "bad", args: []string{"team", "join", "ftp://x", "--user", "alice"}, code: 2},
		{cmd: "team", kind: "bad", args: []string{"team", "admin", "promote", "@a/b"}, code: 2},

		{cmd: "peers", kind: "good", args: []string{"peers"}, outMin: 2},
		{cmd: "peers", kind: "missing", args: []string{"peers", "remove"}, code: 2},
		{cmd: "peers", kind: "flag", args: []string{"peers", "--frob"}, code: 2},
		{cmd: "peers", kind: "flag", args: []string{"peers", "remove", "x", "--frob"}, code: 2},
		{cmd: "peers", kind: "bad", args: []string{"peers", "foo"}, code: 2},
		{cmd: "peers", kind: "bad", args: []string{"peers", "invite", "--ttl", "soon"}, code: 2},
		{cmd: "peers", kind: "bad", args: []string{"peers", "remove", "nosuchdevice"}, code: 1},

		{cmd: "keys", kind: "good", args: []string{"keys", "list"}, outMin: 4},
		{cmd: "keys", kind: "missing", args: []string{"keys", "set"}, code: 2},
		{cmd: "keys", kind: "flag", args: []string{"keys", "list", "--frob"}, code: 2},
		{cmd: "keys", kind: "bad", args: []string{"keys", "set", "nosuch"}, code: 2},
		{cmd: "keys", kind: "bad", args: []string{"keys", "set", "anthropic"}, code: 1}, // empty stdin

		{cmd: "install", kind: "flag", args: []string{"install", "claude-code", "--frob"}, code: 2},
		{cmd: "install", kind: "bad", args: []string{"install", "nosuch"}, code: 2},
		{cmd: "install", kind: "bad", args: []string{"install", "claude-code", "--scope", "galaxy"}, code: 2},
		{cmd: "install", kind: "good", args: []string{"install", "claude-code"}, outMin: 1},

		{cmd: "doctor", kind: "good", args: []string{"doctor"}, outMin: 8}, // hooked up just above, node running
		{cmd: "doctor", kind: "flag", args: []string{"doctor", "--frob"}, code: 2},
		{cmd: "doctor", kind: "bad", args: []string{"doctor", "now"}, code: 2},

		{cmd: "uninstall", kind: "missing", args: []string{"uninstall"}, code: 2},
		{cmd: "uninstall", kind: "flag", args: []string{"uninstall", "claude-code", "--frob"}, code: 2},
		{cmd: "uninstall", kind: "bad", args: []string{"uninstall", "nosuch"}, code: 2},
		{cmd: "uninstall", kind: "good", args: []string{"uninstall", "claude-code"}, outMin: 1},

		{cmd: "pin", kind: "good", args: []string{"pin", keep}, outMin: 1},
		{cmd: "pin", kind: "missing", args: []string{"pin"}, code: 2},
		{cmd: "pin", kind: "flag", args: []string{"pin", keep, "--frob"}, code: 2},
		{cmd: "pin", kind: "bad", args: []string{"pin", "ZZZZZZ"}, code: 1},
		{cmd: "unpin", kind: "good", args: []string{"unpin", keep}, outMin: 1},
		{cmd: "unpin", kind: "missing", args: []string{"unpin"}, code: 2},
		{cmd: "unpin", kind: "flag", args: []string{"unpin", keep, "--frob"}, code: 2},
		{cmd: "unpin", kind: "bad", args: []string{"unpin", "ZZZZZZ"}, code: 1},

		{cmd: "save", kind: "good", args: []string{"save", "we use pnpm, never npm", "--project", "bigproj"}, outMin: 1},
		{cmd: "save", kind: "missing", args: []string{"save"}, code: 2},
		{cmd: "save", kind: "flag", args: []string{"save", "a note", "--frob"}, code: 2},
		{cmd: "save", kind: "bad", args: []string{"save", "a note", "--global", "--project", "bigproj"}, code: 2},

		{cmd: "pause", kind: "good", args: []string{"pause", "otherproj", "--for", "2h"}, outMin: 1},
		{cmd: "pause", kind: "flag", args: []string{"pause", "otherproj", "--frob"}, code: 2},
		{cmd: "pause", kind: "bad", args: []string{"pause", "otherproj", "--for", "soon"}, code: 2},
		{cmd: "resume", kind: "good", args: []string{"resume", "otherproj"}, outMin: 1},
		{cmd: "resume", kind: "flag", args: []string{"resume", "--frob"}, code: 2},
		{cmd: "resume", kind: "bad", args: []string{"resume", "otherproj", "now"}, code: 2},
		{cmd: "track", kind: "good", args: []string{"track", "otherproj"}, outMin: 1},
		{cmd: "track", kind: "flag", args: []string{"track", "otherproj", "--frob"}, code: 2},
		{cmd: "track", kind: "bad", args: []string{"track", "otherproj", "now"}, code: 2},
	}
	// hook answers the agent, whatever it gets: exit 0 and "{}" on stdout, so a bad hook
	// line never breaks the IDE; still one line on stderr says what is wrong.
	hookCases := []argCase{
		{cmd: "hook", kind: "good", args: []string{"hook", "claude-code", "context"}, stdin: "{}", outMin: 1},
		{cmd: "hook", kind: "missing", args: []string{"hook", "claude-code"}},
		{cmd: "hook", kind: "flag", args: []string{"hook", "--frob"}},
		{cmd: "hook", kind: "bad", args: []string{"hook", "nosuch", "context"}},
	}

	covered := map[string]map[string]bool{}
	for _, c := range append(cases, hookCases...) {
		if covered[c.cmd] == nil {
			covered[c.cmd] = map[string]bool{}
		}
		covered[c.cmd][c.kind] = true
	}
	// What a command has no case of, and why.
	none := map[string]string{
		"version/missing": "takes no argument", "start/missing": "takes no argument", "stop/missing": "takes no argument",
		"status/missing": "takes no argument", "run/missing": "takes no argument", "doctor/missing": "takes no argument", "repair/missing": "takes no argument",
		"context/missing": "takes no argument", "search/missing": "the query may be empty (newest records)",
		"export/missing": "takes no argument", "mcp/missing": "takes no argument", "viewer/missing": "takes no argument",
		"install/missing": "lists the detected agents (TestInstallWithoutATerminal)",
		"pause/missing":   "no PROJECT pauses every project", "resume/missing": "no PROJECT ends every pause", "track/missing": "no PROJECT tracks this directory's",
		"run/good": "runs until stopped: start runs it", "supersede/good": "correct covers the same code path (runSupersede)", "stop/good": "run last, below", "repair/good": "run last, below",
	}
	for name := range commandTable() {
		for _, kind := range []string{"good", "missing", "flag", "bad"} {
			if !covered[name][kind] && none[name+"/"+kind] == "" {
				t.Errorf("no %s case for memnode %s", kind, name)
			}
		}
	}

	check := func(c argCase, r e2ekit.Result) {
		t.Helper()
		errLines := e2ekit.Lines(r.Stderr)
		if c.kind == "good" {
			if r.Code != 0 || len(e2ekit.Lines(r.Stdout)) < c.outMin || len(errLines) != c.errLines || !strings.Contains(r.Stderr, c.errHas) {
				t.Errorf("memnode %s: exit %d, want 0 with >= %d stdout lines and %d stderr lines (%q)\nstdout: %s\nstderr: %s",
					strings.Join(c.args, " "), r.Code, c.outMin, c.errLines, c.errHas, r.Stdout, r.Stderr)
			}
			return
		}
		wantOut := ""
		if c.cmd == "hook" {
			wantOut = "{}\n"
		}
		if r.Code != c.code || r.Stdout != wantOut || len(errLines) != 1 || !strings.HasPrefix(r.Stderr, "memnode: ") {
			t.Errorf("memnode %s: exit %d, want %d with stdout %q and one stderr line\nstdout: %s\nstderr: %s",
				strings.Join(c.args, " "), r.Code, c.code, wantOut, r.Stdout, r.Stderr)
		}
	}
	for _, c := range append(cases, hookCases...) {
		check(c, in.Run([]byte(c.stdin), c.args...))
	}

	// Nothing a rejected command line named was done.
	if got := in.PidFile(); got != pid || in.Run(nil, "status").Code != 0 {
		t.Errorf("after the bad stop lines: pid file %d (was %d), status exit %d", got, pid, in.Run(nil, "status").Code)
	}
	if r := in.Run(nil, "get", keep); r.Code != 0 {
		t.Errorf("forget %s --frob forgot it: %s%s", keep, r.Stdout, r.Stderr)
	}
	if r := in.Run(nil, "get", gone); r.Code != 1 {
		t.Errorf("forget %s did not forget it: %s", gone, r.Stdout)
	}

	check(argCase{cmd: "stop", kind: "good", outMin: 1, args: []string{"stop"}}, in.Run(nil, "stop"))
	check(argCase{cmd: "repair", kind: "good", outMin: 1, args: []string{"repair"}}, in.Run(nil, "repair"))
}

// TestInstallWithoutATerminal: `memnode install </dev/null` (cron, CI, an IDE task) has
// nobody to ask, and /dev/null is a character device like a terminal: it must not show
// the [y/N] prompt and read EOF as "no". The rule: without a terminal, install needs --yes;
// without it, it lists the agents, installs nothing and exits 1 with one line saying so.
func TestInstallWithoutATerminal(t *testing.T) {
	in := e2ekit.NewInstance(t)
	if err := os.MkdirAll(filepath.Join(in.DataDir, ".claude"), 0o700); err != nil { // HOME is the data dir
		t.Fatal(err)
	}
	devNull := func(args ...string) e2ekit.Result {
		t.Helper()
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(e2ekit.MemnodeBin, args...)
		cmd.Env, cmd.Dir, cmd.Stdin = in.Env(), in.DataDir, f
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		r := e2ekit.Result{Stdout: out.String(), Stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}
	settings := filepath.Join(in.DataDir, ".claude", "settings.json")
	r := devNull("install")
	if r.Code != 1 || strings.Contains(r.Stdout, "[y/N]") || len(e2ekit.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "memnode install --yes") ||
		!strings.Contains(r.Stdout, "claude-code") {
		t.Errorf("install </dev/null: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Errorf("install </dev/null without --yes wrote %s", settings)
	}
	if r := devNull("install", "--yes"); r.Code != 0 {
		t.Fatalf("install --yes </dev/null: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), "hook claude-code") {
		t.Errorf("install --yes </dev/null did not hook Claude Code up: %v\n%s", err, b)
	}
}
