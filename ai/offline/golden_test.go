package offline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
	"github.com/memnode/memnode/platform/registry"
	"github.com/memnode/memnode/privacy"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt from the compressor's current output")

const claudeMemSample = "../../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db"

// TestGolden renders the whole corpus — every registered platform's recorded session, fed
// through its adapter as the hook and the node would, and the model-written observations of
// the claude-mem sample database summarised by the offline compressor — and compares it with
// testdata/golden.txt. After a deliberate heuristic or keywords.json change, run
// `go test ./ai/offline -run TestGolden -update` and review the diff of golden.txt.
func TestGolden(t *testing.T) {
	var out bytes.Buffer
	c := New()
	for _, p := range registry.Builtin().All() {
		if p.Adapter == nil {
			continue // MCP-only: no hooks, no recorded session
		}
		renderPlatform(t, &out, c, p)
	}
	renderClaudeMem(t, &out, c)

	golden := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if got := out.String(); got != string(want) {
		t.Fatalf("the compressor's output differs from %s; if the change is intended, run with -update and review the diff.\n%s",
			golden, firstDiff(string(want), got))
	}
}

// renderPlatform replays one platform's session: prompts set the turn, observations are
// compressed one call at a time, each summarize event is summarised from the session so far.
func renderPlatform(t *testing.T, out *bytes.Buffer, c *Compressor, p platform.Platform) {
	t.Helper()
	dir := filepath.Join("..", "..", p.Fixtures)
	// As the hook and the node do: protocol-only prompts are ignored, a wholly private one
	// hides its turn's calls, the first prompt is the session's request.
	prompt, first, private := map[string]string{}, map[string]string{}, map[string]bool{}
	sessionObs := map[string][]ai.Observation{}
	for i, call := range platformtest.Session(t, dir) {
		cleaned, err := privacy.CleanJSON(call.Payload)
		if err != nil {
			t.Fatalf("%s #%d: %v", p.Name, i, err)
		}
		in, err := p.Adapter.Normalize(call.Event, cleaned)
		if err != nil {
			t.Fatalf("%s #%d: %v", p.Name, i, err)
		}
		switch call.Event {
		case platform.EventSessionInit:
			if in.Prompt != "" && privacy.IsProtocolOnly(in.Prompt) {
				continue
			}
			private[in.SessionID] = strings.TrimSpace(in.Prompt) == ""
			prompt[in.SessionID] = in.Prompt
			if first[in.SessionID] == "" {
				first[in.SessionID] = in.Prompt
			}
		case platform.EventObservation:
			if private[in.SessionID] {
				fmt.Fprintf(out, "== %s #%d %s: private turn, not recorded\n\n", p.Name, i, in.ToolName)
				continue
			}
			if in.Bookkeeping {
				fmt.Fprintf(out, "== %s #%d %s: bookkeeping, not recorded\n\n", p.Name, i, in.ToolName)
				continue
			}
			obs, _, err := c.Observe(context.Background(), []ai.ToolCall{{SessionID: in.SessionID, Project: "demo-app", Cwd: in.Cwd,
				ToolName: in.ToolName, ToolInput: in.ToolInput, ToolResponse: in.ToolResponse, Prompt: prompt[in.SessionID]}})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(out, "== %s #%d %s\n", p.Name, i, in.ToolName)
			if len(obs) == 0 {
				out.WriteString("skipped\n\n")
			}
			for _, o := range obs {
				writeObservation(out, o)
				sessionObs[in.SessionID] = append(sessionObs[in.SessionID], o)
			}
		case platform.EventSummarize:
			if in.AgentID != "" {
				continue // a subagent's turn is not summarised
			}
			msg := ""
			if in.LastAssistantMessage != nil {
				msg = *in.LastAssistantMessage
			} else if in.TranscriptPath != "" {
				raw, err := p.Adapter.LastAssistantMessage(filepath.Join(dir, in.TranscriptPath))
				if err != nil {
					t.Fatalf("%s #%d: %v", p.Name, i, err)
				}
				msg = privacy.Clean(raw)
			}
			s, _, err := c.Summarize(context.Background(), ai.SessionInput{SessionID: in.SessionID, Project: "demo-app",
				Request: first[in.SessionID], LastAssistantMessage: msg, Observations: sessionObs[in.SessionID]})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(out, "== %s #%d summary\n", p.Name, i)
			writeSummary(out, s)
		}
	}
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
