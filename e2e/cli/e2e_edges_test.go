package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/antigravity"
	"github.com/memnode/memnode/platform/copilot"
	"github.com/memnode/memnode/platform/cursor"
	"github.com/memnode/memnode/platform/geminicli"
	"github.com/memnode/memnode/platform/qwencode"
	"github.com/memnode/memnode/platform/registry"
)

// TestExportRefusesPlantedPaths is issue 26's export "done when": `memnode export --out`
// onto a symlink another user planted, and onto a file another user owns, is refused and
// writes nothing through either; onto a new path it writes a 0600 file.
func TestExportRefusesPlantedPaths(t *testing.T) {
	t.Parallel()
	cred := e2ekit.Nobody(t)
	in := e2ekit.NewInstance(t)
	in.Start()
	shared, err := os.MkdirTemp("", "export-shared")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	os.Chmod(shared, 0o1777) // like /tmp
	target := filepath.Join(shared, "victim.txt")
	os.WriteFile(target, []byte("untouched\n"), 0o644)
	link := filepath.Join(shared, "export.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, int(cred.Uid), int(cred.Gid))
	theirs := filepath.Join(shared, "theirs.jsonl")
	os.WriteFile(theirs, []byte("theirs\n"), 0o666)
	os.Chown(theirs, int(cred.Uid), int(cred.Gid))

	for path, want := range map[string]string{link: "symbolic link", theirs: "belongs to uid"} {
		r := in.Run(nil, "export", "--out", path)
		if r.Code == 0 || !strings.Contains(r.Stderr, want) {
			t.Errorf("export --out %s: exit %d, %q; want a refusal (%s)", filepath.Base(path), r.Code, r.Stderr, want)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "untouched\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
		t.Errorf("another user's file was written: %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(shared, ".*tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	fresh := filepath.Join(shared, "mine.jsonl")
	in.MustRun(nil, "export", "--out", fresh)
	if fi, err := os.Lstat(fresh); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("new export: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(fresh); !strings.Contains(string(b), `"memnode-export"`) {
		t.Fatalf("new export holds %q", b)
	}
}

// TestHookWithFIFOTranscriptAnswers is issue 26's FIFO "done when": hooks whose
// transcript_path is a FIFO nobody writes (a blocking read would wait forever) answer
// within their 10 s budget, exit 0 — Claude Code's and Codex's, and every hook of the five
// other agents whose payloads carry a transcript path (Gemini CLI, Qwen Code, Copilot,
// Antigravity, Cursor).
func TestHookWithFIFOTranscriptAnswers(t *testing.T) {
	in := e2ekit.NewInstance(t)
	in.Start()
	fifo := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	proj := t.TempDir()
	for _, c := range []struct{ platform, event, body string }{
		{"claude-code", "summarize", fmt.Sprintf(`{"session_id":"fifo-1","transcript_path":%s,"cwd":%s,"hook_event_name":"Stop","stop_hook_active":false}`, e2ekit.JsonString(fifo), e2ekit.JsonString(proj))},
		{"claude-code", "session-init", fmt.Sprintf(`{"session_id":"fifo-1","transcript_path":%s,"cwd":%s,"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, e2ekit.JsonString(fifo), e2ekit.JsonString(proj))},
		{"codex", "observation", fmt.Sprintf(`{"session_id":"fifo-2","transcript_path":%s,"cwd":%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"c1","tool_input":{"command":"ls"},"tool_response":"ok"}`, e2ekit.JsonString(fifo), e2ekit.JsonString(proj))},
		{"codex", "summarize", fmt.Sprintf(`{"session_id":"fifo-2","transcript_path":%s,"cwd":%s,"hook_event_name":"Stop"}`, e2ekit.JsonString(fifo), e2ekit.JsonString(proj))},
	} {
		r := in.RunLean([]byte(c.body), "hook", c.platform, c.event)
		// The budget is the contract here: without the check the hook blocks until killed.
		if r.Code != 0 || r.Took >= 10*time.Second {
			t.Errorf("%s %s with a FIFO transcript: exit %d after %v: %s", c.platform, c.event, r.Code, r.Took, r.Stderr)
		}
	}
	// Every other agent whose hooks get a transcript path: each hook its HookSpecs register,
	// with the first recorded payload of that event, the path pointing at the FIFO.
	for _, p := range []struct {
		name  string
		specs []install.HookSpec
	}{
		{geminicli.Name, geminicli.HookSpecs()}, {qwencode.Name, qwencode.HookSpecs()}, {copilot.Name, copilot.HookSpecs()},
		{antigravity.Name, antigravity.HookSpecs()}, {cursor.Name, cursor.HookSpecs()},
	} {
		plat, _ := registry.Builtin().Lookup(p.name)
		raw, err := os.ReadFile(filepath.Join("..", "..", plat.Fixtures, "session.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(string(raw), "/home/dev/demo-app", proj)), "\n") {
			var rec struct {
				Event   string         `json:"event"`
				Payload map[string]any `json:"payload"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"transcript_path", "transcriptPath"} {
				if _, ok := rec.Payload[field]; ok {
					rec.Payload[field] = fifo
				}
			}
			body, _ := json.Marshal(rec.Payload)
			for _, spec := range p.specs {
				if spec.Event != rec.Event || ran[spec.Sub] {
					continue
				}
				ran[spec.Sub] = true
				r := in.RunLean(body, "hook", p.name, spec.Sub)
				if r.Code != 0 || r.Took >= 10*time.Second {
					t.Errorf("%s %s (%s) with a FIFO transcript: exit %d after %v: %s", p.name, spec.Sub, rec.Event, r.Code, r.Took, r.Stderr)
				}
			}
		}
		if !ran[platform.EventSummarize] {
			t.Errorf("%s: no recorded payload ran its summarize hook (ran %v)", p.name, ran)
		}
	}
}

// TestStopStopsANodeFromARenamedBinary: a node started from a copy of the binary named
// otherwise is stopped by `memnode stop` — the data dir's lock names it, not its argv[0].
func TestStopStopsANodeFromARenamedBinary(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	// The node runs from memnoded (the lean memnode hands `run` to it): rename that one.
	b, err := os.ReadFile(filepath.Join(filepath.Dir(e2ekit.MemnodeBin), "memnoded"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "agentd")
	if err := os.WriteFile(renamed, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := in.RunBin(renamed, nil, "start"); r.Code != 0 {
		t.Fatalf("start from the renamed binary: exit %d: %s", r.Code, r.Stderr)
	}
	pid := in.PidFile()
	if out := in.MustRun(nil, "stop"); !strings.Contains(out, fmt.Sprintf("memnode stopped (pid %d)", pid)) {
		t.Fatalf("stop: %s", out)
	}
	if r := in.Run(nil, "status"); r.Code != 3 {
		t.Fatalf("status after stop: exit %d\n%s", r.Code, r.Stdout)
	}
}
