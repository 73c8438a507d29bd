package geminicli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"
)

// history: ~/.gemini/tmp/<project slug>/chats/session-<time>-<id>.jsonl, the project's root
// in ~/.gemini/tmp/<project slug>/.project_root; the user's ~/.gemini/GEMINI.md; a
// project's GEMINI.md at its root.
var history = platform.History{
	Dir: func(home string, getenv func(string) string) string {
		if h := getenv("GEMINI_CLI_HOME"); h != "" {
			home = h
		}
		return filepath.Join(home, ".gemini", "tmp")
	},
	IsSession: func(rel string) bool {
		parts := strings.Split(rel, "/")
		return len(parts) == 3 && parts[1] == "chats" && strings.HasPrefix(parts[2], "session-") && strings.HasSuffix(parts[2], ".jsonl")
	},
	Replay: func(path string) (platform.Replayed, error) {
		return platform.ReplayFile(path, func(r io.Reader) (platform.Replayed, error) { return Replay(r, ProjectRoot(path)) })
	},
	UserMemory: "GEMINI.md",
	ProjectMemory: func(root, _ string) []string {
		return []string{filepath.Join(root, "GEMINI.md")}
	},
}

// ProjectRoot reads the project folder a session file belongs to from the .project_root
// marker Gemini CLI keeps in the project's tmp folder ("" when there is none).
func ProjectRoot(sessionFile string) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(sessionFile)), ".project_root"))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// replayRecord is one line of a session file: the header, a "$set" update, or a message.
type replayRecord struct {
	SessionID      string          `json:"sessionId"`
	StartTime      time.Time       `json:"startTime"`
	Set            json.RawMessage `json:"$set"`
	ID             string          `json:"id"`
	Timestamp      time.Time       `json:"timestamp"`
	Type           string          `json:"type"`
	Content        json.RawMessage `json:"content"`
	DisplayContent json.RawMessage `json:"displayContent"`
	ToolCalls      []struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Status string          `json:"status"`
		Result []struct {
			FunctionResponse struct {
				Response struct {
					Output json.RawMessage `json:"output"`
					Error  *string         `json:"error"`
				} `json:"response"`
			} `json:"functionResponse"`
		} `json:"result"`
		ResultDisplay json.RawMessage `json:"resultDisplay"`
		Timestamp     time.Time       `json:"timestamp"`
	} `json:"toolCalls"`
}

// Replay reads a past session's file (cwd: the project folder it ran in) and returns the
// hook calls Gemini CLI made for it, in order: SessionStart, BeforeAgent for each typed
// prompt (as Gemini CLI hands it, with the context hooks injected: the adapter strips it),
// AfterTool for each finished tool call (a failed one with its error), AfterAgent at each
// turn's end with the turn's text, SessionEnd. A message written again with the same id
// (Gemini CLI adds its tool calls so) counts once, in its last form. IDs come from the
// session and the message or call, so a second replay gives the same IDs. Lines that are
// not JSON are counted in BadLines.
func Replay(r io.Reader, cwd string) (platform.Replayed, error) {
	var (
		bad     int
		session string
		start   time.Time
		order   []string
		byID    = map[string]replayRecord{}
	)
	err := platform.ScanLines(r, func(n int, b []byte) {
		var rec replayRecord
		if json.Unmarshal(b, &rec) != nil {
			bad++
			return
		}
		switch {
		case rec.Set != nil:
		case rec.ID == "" && rec.SessionID != "":
			if session == "" {
				session, start = rec.SessionID, rec.StartTime
			}
		case rec.ID != "" && rec.Type != "":
			if _, seen := byID[rec.ID]; !seen {
				order = append(order, rec.ID)
			}
			byID[rec.ID] = rec
		}
	})
	if err != nil {
		return platform.Replayed{BadLines: bad}, fmt.Errorf("read session file: %w", err)
	}
	if session == "" {
		return platform.Replayed{BadLines: bad}, nil
	}
	var (
		out    []platform.Recorded
		last   time.Time
		prompt string // raw, as BeforeAgent had it
		answer []string
		inTurn bool
	)
	add := func(event, id string, at time.Time, p map[string]any) {
		p["session_id"], p["cwd"], p["transcript_path"] = session, cwd, ""
		p["timestamp"] = at.UTC().Format(time.RFC3339Nano)
		b, _ := json.Marshal(p)
		out = append(out, platform.Recorded{Event: event, Payload: b, ID: "gemini-import:" + session + ":" + id,
			At: at, TurnPrompt: StripHookContext(prompt)})
	}
	stop := func(id string) {
		if inTurn {
			add(platform.EventSummarize, "stop:"+id, last, map[string]any{"hook_event_name": "AfterAgent",
				"prompt": prompt, "prompt_response": strings.Join(answer, " \n"), "stop_hook_active": false})
		}
		inTurn, answer = false, nil
	}
	add(platform.EventContext, "start", start, map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	for _, id := range order {
		rec := byID[id]
		if !rec.Timestamp.IsZero() {
			last = rec.Timestamp
		}
		switch rec.Type {
		case "user":
			content := rec.DisplayContent
			if content == nil {
				content = rec.Content
			}
			text, ok := promptText(content)
			if !ok {
				continue // a tool's result, or nothing typed
			}
			stop(id)
			prompt = text
			add(platform.EventSessionInit, id, rec.Timestamp, map[string]any{"hook_event_name": "BeforeAgent", "prompt": text})
			inTurn = true
		case "gemini":
			var text string
			if json.Unmarshal(rec.Content, &text) == nil && strings.TrimSpace(text) != "" {
				answer = append(answer, text)
			}
			for _, c := range rec.ToolCalls {
				if c.Status != "success" && c.Status != "error" {
					continue // cancelled, or still running: no AfterTool
				}
				res := map[string]any{"returnDisplay": c.ResultDisplay}
				var output json.RawMessage
				var failure *string
				for _, part := range c.Result {
					if o := part.FunctionResponse.Response.Output; o != nil {
						output = o
					}
					if e := part.FunctionResponse.Response.Error; e != nil {
						failure = e
					}
				}
				res["llmContent"] = output
				if c.Status == "error" {
					msg := contentText(output)
					if failure != nil {
						msg = *failure
						res["llmContent"] = msg
					}
					res["error"] = map[string]string{"message": msg, "type": ""}
				}
				at := c.Timestamp
				if at.IsZero() {
					at = rec.Timestamp
				}
				add(platform.EventObservation, "tool:"+c.ID, at, map[string]any{"hook_event_name": "AfterTool",
					"tool_name": c.Name, "tool_input": c.Args, "tool_response": res})
			}
		}
	}
	stop("end")
	add(platform.EventSessionEnd, "end", last, map[string]any{"hook_event_name": "SessionEnd", "reason": "exit"})
	return platform.Replayed{Calls: out, Cwd: cwd, BadLines: bad}, nil
}

// promptText is the text a user record's parts hold, when they are text (a typed prompt)
// and not a function's response.
func promptText(raw json.RawMessage) (string, bool) {
	var parts []struct {
		Text             *string         `json:"text"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
			return "", false
		}
		return s, true
	}
	var texts []string
	for _, p := range parts {
		if p.FunctionResponse != nil {
			return "", false
		}
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	text := strings.Join(texts, "\n")
	return text, strings.TrimSpace(StripHookContext(text)) != ""
}
