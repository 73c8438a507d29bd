package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/codex"
	"github.com/memnode/memnode/platform/copilot"
	"github.com/memnode/memnode/platform/geminicli"
	"github.com/memnode/memnode/platform/qwencode"
)

func at(day, hour, minute int) int64 {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC).UnixMilli()
}

func fileObs(f string) []apitype.FileObservation {
	many := []string{f}
	for i := range 9 {
		many = append(many, fmt.Sprintf("pkg/f%d.go", i))
	}
	return []apitype.FileObservation{ // newest first, as the node sends them
		{ID: "obs-5", SessionID: "s1", Type: "feature", Title: "Add refresh\ntoken expiry", CreatedAt: at(28, 9, 0), FilesRead: []string{f}},
		{ID: "obs-4", SessionID: "s1", Type: "change", Title: "older in s1", CreatedAt: at(28, 8, 0), FilesRead: []string{f}},
		{ID: "obs-3", SessionID: "s2", Type: "bugfix", Title: "Fix nil claims", CreatedAt: at(27, 14, 15), FilesModified: []string{"internal/auth/middleware.go", "a.go", "b.go", "c.go"}},
		{ID: "obs-2", SessionID: "s3", Type: "decision", Title: "Chose 401 over 500", CreatedAt: at(26, 10, 30), FilesRead: many},
	}
}

func TestSelectFileObservations(t *testing.T) {
	f := "/p/demo-app/internal/auth/middleware.go"
	got := selectFileObservations(fileObs(f), f, 2)
	if len(got) != 2 || got[0].ID != "obs-3" || got[1].ID != "obs-5" {
		t.Fatalf("got %+v; want obs-3 (modified, 4 files: 3) then obs-5 (1 file: 2)", got)
	}
}

// fileWithHistory is a fake node that knows fileObs of a 2000-byte file in a new project,
// older than those observations.
func fileWithHistory(t *testing.T) (n *fakeNode, cfg Config, cwd, file string) {
	t.Helper()
	n = newFakeNode(t)
	cfg = n.config(t)
	cwd = newProject(t)
	file = filepath.Join(cwd, "internal/auth/middleware.go")
	writeSourceFile(t, file, 2000, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	n.byFile[file] = fileObs(file)
	return n, cfg, cwd, file
}

func TestFileContextTimelineAndGates(t *testing.T) {
	n, cfg, cwd, file := fileWithHistory(t)
	read := func(paths ...string) string {
		t.Helper()
		ti := map[string]any{"file_path": paths[0]}
		if len(paths) > 1 {
			ti["file_paths"] = paths[1:]
		}
		r := runHook(t, cfg, "file-context", map[string]any{"session_id": sid, "cwd": cwd, "tool_name": "Read", "tool_input": ti})
		if r.out["continue"] == true {
			return "" // nothing to say: the neutral answer
		}
		// Context only: a permission decision would turn off Claude Code's own checks
		// (reading ~/.ssh or ~/.aws/credentials must still be asked about).
		hso, _ := r.out["hookSpecificOutput"].(map[string]any)
		if r.code != 0 || len(r.out) != 1 || len(hso) != 2 || hso["hookEventName"] != "PreToolUse" {
			t.Fatalf("output %v code %d", r.out, r.code)
		}
		return hso["additionalContext"].(string)
	}

	want := `<memnode-context>
memnode: internal/auth/middleware.go has 3 prior observation(s); for details call mcp__memnode__get_observations([IDs]) with IDs from this list.
### Nov 26, 2026
obs-2 10:30 ⚖️ Chose 401 over 500
### Nov 27, 2026
obs-3 14:15 🔴 Fix nil claims
### Nov 28, 2026
obs-5 09:00 🟣 Add refresh token expiry
</memnode-context>`
	if got := read(file); got != want {
		t.Fatalf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if got := read("internal/auth/middleware.go"); got != want {
		t.Fatalf("relative path: %q", got)
	}

	// Gates.
	small := filepath.Join(cwd, "small.go")
	writeSourceFile(t, small, 1400, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	n.byFile[small] = fileObs(small)
	fresh := filepath.Join(cwd, "fresh.go")
	writeSourceFile(t, fresh, 2000, time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)) // == newest observation
	n.byFile[fresh] = fileObs(fresh)
	unknown := filepath.Join(cwd, "unknown.go")
	writeSourceFile(t, unknown, 2000, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	before := n.Seen()
	for name, p := range map[string]string{"small": small, "no history": unknown, "missing": filepath.Join(cwd, "gone.go")} {
		if got := read(p); got != "" {
			t.Errorf("%s: context %q, want none", name, got)
		}
	}
	if strings.Contains(strings.TrimPrefix(n.Seen(), before), "small.go") || strings.Contains(strings.TrimPrefix(n.Seen(), before), "gone.go") {
		t.Error("small or missing files must not reach the node")
	}
	// A file changed since some of its observations: those lines say so, the others not.
	if got := read(fresh); !strings.Contains(got, "obs-2 10:30 ⚖️ Chose 401 over 500 (file changed since)\n") ||
		!strings.Contains(got, "obs-3 14:15 🔴 Fix nil claims (file changed since)\n") ||
		!strings.Contains(got, "obs-5 09:00 🟣 Add refresh token expiry\n") {
		t.Errorf("modified since: context %q, want the two older lines marked and the newest not", got)
	}

	// Several paths: only those that pass the gates, each with its own header.
	other := filepath.Join(cwd, "other.go")
	writeSourceFile(t, other, 2000, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	n.byFile[other] = fileObs(other)[:1]
	got := read(small, file, other)
	if strings.Count(got, "memnode: ") != 2 || !strings.Contains(got, "other.go has 1 prior observation") || strings.Count(got, "<memnode-context>") != 1 {
		t.Fatalf("multi-path:\n%s", got)
	}

	// At most 10 paths are looked up.
	var paths []string
	for i := range 14 {
		p := filepath.Join(cwd, fmt.Sprintf("m%02d.go", i))
		writeSourceFile(t, p, 2000, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		paths = append(paths, p)
	}
	before = n.Seen()
	read(paths...)
	if c := strings.Count(strings.TrimPrefix(n.Seen(), before), "/api/observations/by-file"); c != 10 {
		t.Fatalf("looked up %d paths, want 10", c)
	}
}

// hookSpecific reads hookSpecificOutput.additionalContext when its hookEventName is event.
func hookSpecific(event string) func(map[string]any) string {
	return func(o map[string]any) string {
		hso, _ := o["hookSpecificOutput"].(map[string]any)
		if hso["hookEventName"] != event {
			return ""
		}
		s, _ := hso["additionalContext"].(string)
		return s
	}
}

// TestObservationAnswersWithFileContext: for Codex (a shell read), Copilot (a view or a
// bash read), Gemini CLI and Qwen Code (a read_file) the one observation hook records the
// call and answers with the file's context in the agent's output contract; a shell command
// that names no file makes the observation's request and no other.
func TestObservationAnswersWithFileContext(t *testing.T) {
	n, cfg, cwd, file := fileWithHistory(t)
	run := func(p platform.Platform, payload string) map[string]any {
		t.Helper()
		var stdout bytes.Buffer
		if code := Run(context.Background(), cfg, p, platform.EventObservation, strings.NewReader(payload), &stdout, io.Discard); code != 0 {
			t.Fatalf("%s: exit %d", p.Name, code)
		}
		return oneObject(t, stdout.String())
	}
	const header = "memnode: internal/auth/middleware.go has 3 prior observation(s)"
	for _, tc := range []struct {
		p       platform.Platform
		payload string
		context func(map[string]any) string
		tool    string
	}{
		{codex.Platform(), `{"session_id":"s","cwd":` + jsonQuote(cwd) + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat internal/auth/middleware.go"},"tool_response":"package auth"}`,
			hookSpecific("PostToolUse"), "Bash"},
		{copilot.Platform(), `{"sessionId":"s","cwd":` + jsonQuote(cwd) + `,"toolName":"view","toolArgs":{"path":"internal/auth/middleware.go"},"toolResult":{"resultType":"success","textResultForLlm":"1. package auth"}}`,
			func(o map[string]any) string { s, _ := o["additionalContext"].(string); return s }, "Read"},
		{copilot.Platform(), `{"sessionId":"s","cwd":` + jsonQuote(cwd) + `,"toolName":"bash","toolArgs":{"command":"sed -n 1,40p internal/auth/middleware.go"},"toolResult":{"resultType":"success","textResultForLlm":"package auth"}}`,
			func(o map[string]any) string { s, _ := o["additionalContext"].(string); return s }, "Bash"},
		{geminicli.Platform(), `{"session_id":"s","cwd":` + jsonQuote(cwd) + `,"hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":` + jsonQuote(file) + `},"tool_response":{"llmContent":"package auth","returnDisplay":""}}`,
			hookSpecific("AfterTool"), "Read"},
		{qwencode.Platform(), `{"session_id":"s","cwd":` + jsonQuote(cwd) + `,"hook_event_name":"PostToolUse","tool_name":"read_file","tool_use_id":"t1","tool_input":{"file_path":` + jsonQuote(file) + `},"tool_response":{"llmContent":"package auth","returnDisplay":""}}`,
			hookSpecific("PostToolUse"), "Read"},
	} {
		events, before := len(n.Events()), n.Seen()
		out := run(tc.p, tc.payload)
		if got := tc.context(out); !strings.Contains(got, header) {
			t.Errorf("%s: the observation hook answered without the file's context: %v", tc.p.Name, out)
		}
		evs := n.Events()
		if len(evs) != events+1 || evs[len(evs)-1].ToolName != tc.tool {
			t.Errorf("%s: the call is not recorded once as %s: %+v", tc.p.Name, tc.tool, evs[events:])
		}
		if seen := strings.TrimPrefix(n.Seen(), before); !strings.Contains(seen, "/api/observations/by-file") {
			t.Errorf("%s: no file lookup:\n%s", tc.p.Name, seen)
		}
	}

	before := n.Seen()
	out := run(codex.Platform(), `{"session_id":"s","cwd":`+jsonQuote(cwd)+`,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"python3 test_app.py"},"tool_response":"ok"}`)
	if len(out) != 0 {
		t.Errorf("a command that names no file got context: %v", out)
	}
	if seen := strings.TrimPrefix(n.Seen(), before); strings.Count(seen, "/api/") != 1 || !strings.Contains(seen, "POST /api/events") {
		t.Errorf("a command that names no file made other requests than the observation:\n%s", seen)
	}
}
