package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the claude-mem sample is read through importer.OpenClaudeMem

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/antigravity"
	"github.com/memnode/memnode/platform/codex"
	"github.com/memnode/memnode/platform/copilot"
	"github.com/memnode/memnode/platform/cursor"
	"github.com/memnode/memnode/platform/geminicli"
	"github.com/memnode/memnode/platform/platformtest"
	"github.com/memnode/memnode/platform/qwencode"
	"github.com/memnode/memnode/platform/registry"
	"github.com/memnode/memnode/platform/windsurf"
	"github.com/memnode/memnode/privacy"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the compressor's current output")

const claudeMemSample = "../../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db"

// TestGolden renders the whole corpus — every registered platform's recorded session, fed
// through its adapter as the hook and the node would, one golden file per platform, and the
// model-written observations of the claude-mem sample database summarised by the offline
// compressor — and compares each with testdata/golden/<name>.txt. A platform whose session
// gives no observation fails: the agent's events must reach the compressor. After a
// deliberate heuristic or keywords.json change, run
// `go test ./ai/offline -run TestGolden -update` and review the diff.
func TestGolden(t *testing.T) {
	c := New()
	for _, p := range registry.Builtin().All() {
		if p.Adapter == nil {
			continue // MCP-only: no hooks, no recorded session
		}
		t.Run(p.Name, func(t *testing.T) {
			var out bytes.Buffer
			if n := renderPlatform(t, &out, c, p); n == 0 {
				t.Errorf("%s: the recorded session gave no observation", p.Name)
			}
			checkGolden(t, p.Name, out.Bytes())
		})
	}
	t.Run("claude-mem", func(t *testing.T) {
		var out bytes.Buffer
		renderClaudeMem(t, &out, c)
		checkGolden(t, "claude-mem", out.Bytes())
	})
}

// checkGolden compares got with testdata/golden/name.txt, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("the compressor's output differs from %s; if the change is intended, run with -update and review the diff.\n%s",
			golden, firstDiff(string(want), string(got)))
	}
}

// installedHooks maps each platform's agent events onto the memnode events its installer
// registers them under. Claude Code's fixture is recorded as memnode events already;
// OpenCode's plugin decides in JavaScript, which platformtest mirrors.
var installedHooks = map[string]func() []install.HookSpec{
	"codex": codex.HookSpecs, "gemini-cli": geminicli.HookSpecs, "antigravity": antigravity.HookSpecs,
	"copilot": copilot.HookSpecs, "qwen-code": qwencode.HookSpecs, "cursor": cursor.HookSpecs, "windsurf": windsurf.HookSpecs,
}

// hookRun is one memnode hook run for a recorded call: its event and payload.
type hookRun struct {
	event   string
	payload []byte
}

// hookRuns are the memnode hooks a recorded call of p's session runs, in order.
func hookRuns(t *testing.T, p platform.Platform, dir string, c platformtest.Call) []hookRun {
	t.Helper()
	payload := withFixtureTranscript(t, dir, c.Payload)
	switch p.Name {
	case "claude-code":
		return []hookRun{{c.Event, payload}}
	case "opencode":
		ev, pl := platformtest.OpenCodePluginEvent(t, platformtest.Call{Event: c.Event, Payload: payload})
		if ev == "" {
			return nil
		}
		return []hookRun{{ev, pl}}
	}
	specs, ok := installedHooks[p.Name]
	if !ok {
		t.Fatalf("%s: the golden corpus does not know which memnode events its hooks run: add it to installedHooks", p.Name)
	}
	var runs []hookRun
	for _, s := range specs() {
		if s.Event == c.Event && !slices.ContainsFunc(runs, func(r hookRun) bool { return r.event == s.Sub }) {
			runs = append(runs, hookRun{s.Sub, payload})
		}
	}
	return runs
}

// withFixtureTranscript points a payload's transcript path at the fixture file of the same
// name, as the agent's own path would be on the recording machine.
func withFixtureTranscript(t *testing.T, dir string, raw json.RawMessage) []byte {
	t.Helper()
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	changed := false
	for _, k := range []string{"transcript_path", "transcriptPath"} {
		v, ok := m[k].(string)
		if !ok || v == "" {
			continue
		}
		abs, err := filepath.Abs(filepath.Join(dir, filepath.Base(v)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err == nil {
			m[k], changed = abs, true
		}
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderPlatform replays one platform's session: prompts set the turn, observations are
// compressed one call at a time, each summarize event is summarised from the session so
// far. It returns the number of observations made.
func renderPlatform(t *testing.T, out *bytes.Buffer, c *Compressor, p platform.Platform) (observations int) {
	t.Helper()
	dir := filepath.Join("..", "..", p.Fixtures)
	st := &replayState{prompt: map[string]string{}, first: map[string]string{}, private: map[string]bool{},
		sessionObs: map[string][]ai.Observation{}, calls: map[string]platform.Input{}}
	for i, call := range platformtest.Session(t, dir) {
		for _, run := range hookRuns(t, p, dir, call) {
			observations += st.render(t, out, c, p, fmt.Sprintf("%s #%d", p.Name, i), run)
		}
	}
	return observations
}

// replayState is what the hook and the node keep across a session's calls: protocol-only
// prompts are ignored, a wholly private one hides its turn's calls, the first prompt is the
// session's request.
type replayState struct {
	prompt, first map[string]string
	private       map[string]bool
	sessionObs    map[string][]ai.Observation
	// calls by tool use ID: the node records a failure that names only its call
	// (apitype.ToolFailedStep) with that call's tool and input (pipeline/recent.go).
	calls map[string]platform.Input
}

// render renders one hook run and returns the observations it made.
func (st *replayState) render(t *testing.T, out *bytes.Buffer, c *Compressor, p platform.Platform, at string, run hookRun) int {
	t.Helper()
	cleaned, err := privacy.CleanJSON(run.payload)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	in, err := p.Adapter.Normalize(run.event, cleaned)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	ctx := context.Background()
	switch run.event {
	case platform.EventSessionInit:
		if in.Continuation || in.Prompt != "" && privacy.IsProtocolOnly(in.Prompt) {
			return 0
		}
		st.private[in.SessionID] = strings.TrimSpace(privacy.Clean(in.Prompt)) == ""
		st.prompt[in.SessionID] = privacy.Clean(in.Prompt)
		if st.first[in.SessionID] == "" {
			st.first[in.SessionID] = st.prompt[in.SessionID]
		}
	case platform.EventObservation:
		if in.ToolName == "" {
			return 0 // nothing the hook would send
		}
		if st.private[in.SessionID] {
			fmt.Fprintf(out, "== %s %s: private turn, not recorded\n\n", at, in.ToolName)
			return 0
		}
		if in.Bookkeeping {
			fmt.Fprintf(out, "== %s %s: bookkeeping, not recorded\n\n", at, in.ToolName)
			return 0
		}
		if c, ok := st.calls[in.ToolUseID]; ok && in.ToolName == apitype.ToolFailedStep {
			fmt.Fprintf(out, "== %s %s of %s, recorded with its call\n", at, in.ToolName, c.ToolName)
			in.ToolName, in.ToolInput = c.ToolName, c.ToolInput
		} else if in.ToolUseID != "" {
			st.calls[in.ToolUseID] = in
		}
		obs, _, err := c.Observe(ctx, []ai.ToolCall{{SessionID: in.SessionID, Project: "demo-app", Cwd: in.Cwd,
			ToolName: in.ToolName, ToolInput: in.ToolInput, ToolResponse: in.ToolResponse, Prompt: st.prompt[in.SessionID]}})
		if err != nil {
			t.Fatal(err)
		}
		if in.ToolName != apitype.ToolFailedStep || len(obs) == 0 {
			fmt.Fprintf(out, "== %s %s\n", at, in.ToolName)
		}
		if len(obs) == 0 {
			out.WriteString("skipped\n\n")
		}
		for _, o := range obs {
			checkOnce(t, at, o)
			writeObservation(out, o)
			st.sessionObs[in.SessionID] = append(st.sessionObs[in.SessionID], o)
		}
		return len(obs)
	case platform.EventSummarize:
		if in.AgentID != "" || in.StopHookActive {
			return 0 // a subagent's turn, or not the turn's end
		}
		msg := ""
		if in.LastAssistantMessage != nil {
			msg = *in.LastAssistantMessage
		} else if in.TranscriptPath != "" {
			path := in.TranscriptPath
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Join("..", "..", p.Fixtures), path)
			}
			raw, err := p.Adapter.LastAssistantMessage(path)
			if err != nil {
				t.Fatalf("%s: %v", at, err)
			}
			msg = privacy.Clean(raw)
		}
		s, _, err := c.Summarize(ctx, ai.SessionInput{SessionID: in.SessionID, Project: "demo-app",
			Request: st.first[in.SessionID], LastAssistantMessage: msg, Observations: st.sessionObs[in.SessionID]})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(out, "== %s summary\n", at)
		writeSummary(out, s)
	}
	return 0
}

// renderClaudeMem summarises each claude-mem session from its model-written observations:
// the narratives stand in for the agent's last message, the first prompt is the request.
func renderClaudeMem(t *testing.T, out *bytes.Buffer, c *Compressor) {
	t.Helper()
	ctx := context.Background()
	db, err := importer.OpenClaudeMem(ctx, claudeMemSample)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var order []string
	request := map[string]string{}
	obs := map[string][]ai.Observation{}
	narratives := map[string][]string{}
	err = db.Each(ctx, func(r importer.Record) error {
		switch {
		case r.Session != nil:
			order = append(order, r.Session.ID)
		case r.Prompt != nil && request[r.Prompt.SessionID] == "":
			request[r.Prompt.SessionID] = r.Prompt.Text
		case r.Observation != nil:
			o := r.Observation
			obs[o.SessionID] = append(obs[o.SessionID], ai.Observation{Type: o.Type, Title: o.Title, Subtitle: o.Subtitle,
				Narrative: o.Narrative, Facts: o.Facts, Concepts: o.Concepts, FilesRead: o.FilesRead, FilesModified: o.FilesModified})
			narratives[o.SessionID] = append(narratives[o.SessionID], o.Narrative)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(order) == 0 || len(obs) == 0 {
		t.Fatalf("claude-mem sample: %d sessions, %d with observations", len(order), len(obs))
	}
	for _, id := range order {
		s, _, err := c.Summarize(ctx, ai.SessionInput{SessionID: id, Request: request[id],
			LastAssistantMessage: strings.Join(narratives[id], "\n\n"), Observations: obs[id]})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(out, "== claude-mem session %s (%d model-written observations) summary\n", id, len(obs[id]))
		writeSummary(out, s)
	}
}

// checkOnce fails an observation that says one thing twice: a fact again (by meaning), or
// the title again at the start of the narrative.
func checkOnce(t *testing.T, at string, o ai.Observation) {
	t.Helper()
	if d := distinctFacts(slices.Clone(o.Facts), o.Subtitle); len(d) != len(o.Facts) {
		t.Errorf("%s: facts repeat themselves or the subtitle: %q (subtitle %q)", at, o.Facts, o.Subtitle)
	}
	if o.Title != "" && strings.HasPrefix(strings.ToLower(o.Narrative), strings.ToLower(strings.TrimPrefix(o.Title, "Failed: "))) {
		t.Errorf("%s: the narrative repeats the title %q: %q", at, o.Title, o.Narrative)
	}
}

func writeObservation(out *bytes.Buffer, o ai.Observation) {
	field(out, "type", o.Type)
	field(out, "title", o.Title)
	field(out, "subtitle", o.Subtitle)
	field(out, "narrative", o.Narrative)
	list(out, "facts", o.Facts)
	field(out, "concepts", strings.Join(o.Concepts, ", "))
	field(out, "files_read", strings.Join(o.FilesRead, ", "))
	field(out, "files_modified", strings.Join(o.FilesModified, ", "))
	out.WriteString("\n")
}

func writeSummary(out *bytes.Buffer, s ai.Summary) {
	field(out, "request", s.Request)
	field(out, "investigated", s.Investigated)
	field(out, "learned", s.Learned)
	field(out, "completed", s.Completed)
	field(out, "next_steps", s.NextSteps)
	field(out, "notes", s.Notes)
	out.WriteString("\n")
}

func field(out *bytes.Buffer, name, v string) {
	if v != "" {
		fmt.Fprintf(out, "%s: %s\n", name, strings.ReplaceAll(v, "\n", "\n  "))
	}
}

func list(out *bytes.Buffer, name string, vs []string) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(out, "%s:\n", name)
	for _, v := range vs {
		fmt.Fprintf(out, "  - %s\n", strings.ReplaceAll(v, "\n", "\n    "))
	}
}

// firstDiff shows the first differing line of two renderings, with a little context.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  golden: %q\n  now:    %q", i+1, wl, gl)
		}
	}
	return "(same lines, different line endings)"
}
