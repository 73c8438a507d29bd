package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"
)

// Replay reads a past session's transcript (~/.claude/projects/<dir>/<session>.jsonl) and
// returns the hook calls Claude Code made for it, in order: SessionStart, each typed
// prompt, each tool call with its result (PostToolUse, or PostToolUseFailure for a call
// that failed), Stop with the turn's last answer at the end of each turn, and SessionEnd.
// Payloads are raw, as Claude Code sends them: the caller runs them through the adapter and
// the privacy gate like live ones. Subagent (sidechain) lines and meta lines are skipped.
// Each call's ID is derived from the transcript (session and line), so a replay of the same
// file gives the same IDs. Lines that are not JSON are counted in BadLines.
func Replay(r io.Reader) (platform.Replayed, error) {
	type line struct {
		Type          string          `json:"type"`
		SessionID     string          `json:"sessionId"`
		UUID          string          `json:"uuid"`
		Timestamp     time.Time       `json:"timestamp"`
		Cwd           string          `json:"cwd"`
		IsSidechain   bool            `json:"isSidechain"`
		IsMeta        bool            `json:"isMeta"`
		ToolUseResult json.RawMessage `json:"toolUseResult"`
		Message       struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	type part struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	type call struct {
		name  string
		input json.RawMessage
	}
	var (
		out        []platform.Recorded
		bad        int
		session    string
		cwd        string
		firstCwd   string
		last       time.Time
		lastAnswer string
		inTurn     bool
		turnPrompt string
		calls      = map[string]call{}
	)
	add := func(event, id string, at time.Time, p map[string]any) {
		p["session_id"], p["cwd"], p["transcript_path"] = session, cwd, ""
		b, _ := json.Marshal(p)
		out = append(out, platform.Recorded{Event: event, Payload: b, ID: "cc-import:" + session + ":" + id, At: at, TurnPrompt: turnPrompt})
	}
	stop := func() {
		if inTurn {
			add(platform.EventSummarize, "stop:"+last.Format(time.RFC3339Nano), last,
				map[string]any{"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": lastAnswer})
		}
		inTurn, lastAnswer = false, ""
	}
	err := platform.ScanLines(r, func(n int, b []byte) {
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			bad++
			return
		}
		if l.IsSidechain || l.IsMeta || (l.Type != "user" && l.Type != "assistant") {
			return
		}
		if session == "" {
			if l.SessionID == "" {
				return
			}
			session, cwd, firstCwd = l.SessionID, l.Cwd, l.Cwd
			add(platform.EventContext, "start", l.Timestamp, map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
		}
		if l.Cwd != "" {
			cwd = l.Cwd
		}
		if !l.Timestamp.IsZero() {
			last = l.Timestamp
		}
		id := l.UUID
		if id == "" {
			id = fmt.Sprintf("line%d", n)
		}
		var parts []part
		if json.Unmarshal(l.Message.Content, &parts) != nil {
			var s string
			if json.Unmarshal(l.Message.Content, &s) != nil {
				return
			}
			parts = []part{{Type: "text", Text: s}}
		}
		switch l.Type {
		case "assistant":
			for _, p := range parts {
				switch p.Type {
				case "text":
					if t := strings.TrimSpace(p.Text); t != "" {
						lastAnswer = t
					}
				case "tool_use":
					calls[p.ID] = call{name: p.Name, input: p.Input}
				}
			}
		case "user":
			var prompt []string
			tools := false
			for i, p := range parts {
				switch p.Type {
				case "text":
					prompt = append(prompt, p.Text)
				case "tool_result":
					tools = true
					c, ok := calls[p.ToolUseID]
					if !ok {
						continue
					}
					pl := map[string]any{"tool_name": c.name, "tool_use_id": p.ToolUseID, "tool_input": c.input}
					resp := l.ToolUseResult
					if len(resp) == 0 || i > 0 {
						resp = p.Content // the line's toolUseResult is its first result's
					}
					if p.IsError {
						pl["hook_event_name"], pl["error"] = "PostToolUseFailure", resultText(p.Content)
					} else {
						pl["hook_event_name"], pl["tool_response"] = "PostToolUse", resp
					}
					add(platform.EventObservation, "tool:"+p.ToolUseID, l.Timestamp, pl)
				}
			}
			if tools || len(prompt) == 0 {
				return
			}
			stop()
			turnPrompt = strings.Join(prompt, "\n")
			add(platform.EventSessionInit, id, l.Timestamp, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": strings.Join(prompt, "\n")})
			inTurn = true
		}
	})
	if err != nil {
		return platform.Replayed{BadLines: bad}, fmt.Errorf("read transcript: %w", err)
	}
	if session == "" {
		return platform.Replayed{BadLines: bad}, nil
	}
	stop()
	add(platform.EventSessionEnd, "end", last, map[string]any{"hook_event_name": "SessionEnd", "reason": "other"})
	return platform.Replayed{Calls: out, Cwd: firstCwd, BadLines: bad}, nil
}

// resultText is a tool_result's content as text (a string, or text parts joined).
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return partsText(raw)
}
