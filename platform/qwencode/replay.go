package qwencode

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"
)

// history: ~/.qwen/projects/<project path, / as ->/chats/<session id>.jsonl; the user's
// ~/.qwen/QWEN.md; a project's QWEN.md at its root.
var history = platform.History{
	Dir: func(home string, _ func(string) string) string { return filepath.Join(home, ".qwen", "projects") },
	IsSession: func(rel string) bool {
		parts := strings.Split(rel, "/")
		return len(parts) == 3 && parts[1] == "chats" && strings.HasSuffix(parts[2], ".jsonl")
	},
	Replay: func(path string) (platform.Replayed, error) {
		return platform.ReplayFile(path, Replay)
	},
	UserMemory: "QWEN.md",
	ProjectMemory: func(root, _ string) []string {
		return []string{filepath.Join(root, "QWEN.md")}
	},
}

// replayRecord is one line of a Qwen Code chat file, with the fields a replay reads.
type replayRecord struct {
	UUID      string    `json:"uuid"`
	SessionID string    `json:"sessionId"`
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Cwd       string    `json:"cwd"`
	Message   struct {
		Parts []struct {
			Text         *string `json:"text"`
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string `json:"id"`
				Name     string `json:"name"`
				Response struct {
					Output json.RawMessage `json:"output"`
					Error  *string         `json:"error"`
				} `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"message"`
	SystemPayload struct {
		DisplayText *string `json:"displayText"`
	} `json:"systemPayload"`
	ToolCallResult struct {
		Status        string          `json:"status"`
		ResultDisplay json.RawMessage `json:"resultDisplay"`
	} `json:"toolCallResult"`
}

// Replay reads a past session's chat file and returns the hook calls Qwen Code made for it,
// in order: SessionStart, UserPromptSubmit for each typed prompt (its first call of the
// prompt: the continuations carry nothing), PostToolUse for each tool call that succeeded,
// PostToolUseFailure for each that failed, Stop at each turn's end with its last answer,
// SessionEnd. IDs come from the session and the record or call, so a second replay gives
// the same IDs. Lines that are not JSON are counted in BadLines.
func Replay(r io.Reader) (platform.Replayed, error) {
	type call struct {
		name string
		args json.RawMessage
	}
	var (
		out                []platform.Recorded
		bad                int
		session, cwd, root string
		last               time.Time
		prompt, answer     string
		inTurn             bool
		calls              = map[string]call{}
	)
	add := func(event, id string, at time.Time, p map[string]any) {
		p["session_id"], p["cwd"], p["transcript_path"] = session, cwd, ""
		p["timestamp"] = at.UTC().Format(time.RFC3339Nano)
		b, _ := json.Marshal(p)
		out = append(out, platform.Recorded{Event: event, Payload: b, ID: "qwen-import:" + session + ":" + id, At: at, TurnPrompt: prompt})
	}
	stop := func(id string) {
		if inTurn {
			add(platform.EventSummarize, "stop:"+id, last, map[string]any{"hook_event_name": "Stop",
				"stop_hook_active": false, "last_assistant_message": answer})
		}
		inTurn, answer = false, ""
	}
	err := platform.ScanLines(r, func(n int, b []byte) {
		var rec replayRecord
		if json.Unmarshal(b, &rec) != nil {
			bad++
			return
		}
		if rec.SessionID == "" || (session != "" && rec.SessionID != session) {
			return
		}
		if session == "" {
			session, cwd, root = rec.SessionID, rec.Cwd, rec.Cwd
			add(platform.EventContext, "start", rec.Timestamp, map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
		}
		if rec.Cwd != "" {
			cwd = rec.Cwd
		}
		if !rec.Timestamp.IsZero() {
			last = rec.Timestamp
		}
		id := rec.UUID
		if id == "" {
			id = fmt.Sprintf("line%d", n)
		}
		switch rec.Type {
		case "user":
			text := ""
			if rec.SystemPayload.DisplayText != nil {
				text = *rec.SystemPayload.DisplayText
			} else {
				var texts []string
				for _, p := range rec.Message.Parts {
					if p.Text != nil && !strings.HasPrefix(*p.Text, "<qwen:") {
						texts = append(texts, *p.Text)
					}
				}
				text = strings.Join(texts, "\n")
			}
			if strings.TrimSpace(text) == "" {
				return
			}
			stop(id)
			prompt = text
			add(platform.EventSessionInit, id, rec.Timestamp, map[string]any{"hook_event_name": "UserPromptSubmit",
				"prompt": text, "submitted_prompt": text})
			inTurn = true
		case "assistant":
			for _, p := range rec.Message.Parts {
				switch {
				case p.FunctionCall != nil:
					c := call{name: p.FunctionCall.Name, args: p.FunctionCall.Args}
					var deferred struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					}
					if c.name == "tool_call" && json.Unmarshal(c.args, &deferred) == nil && deferred.Name != "" {
						// A deferred (MCP) tool, called through tool_call: hooks see the tool.
						c = call{name: deferred.Name, args: deferred.Arguments}
					}
					calls[p.FunctionCall.ID] = c
				case p.Text != nil && strings.TrimSpace(*p.Text) != "":
					answer = strings.TrimSpace(*p.Text)
				}
			}
		case "tool_result":
			for _, p := range rec.Message.Parts {
				fr := p.FunctionResponse
				if fr == nil {
					continue
				}
				c, ok := calls[fr.ID]
				if !ok {
					continue
				}
				delete(calls, fr.ID)
				pl := map[string]any{"tool_name": c.name, "tool_input": c.args, "tool_use_id": fr.ID}
				switch {
				case fr.Response.Error != nil:
					pl["hook_event_name"], pl["error"], pl["is_interrupt"] = "PostToolUseFailure", *fr.Response.Error, false
				case rec.ToolCallResult.Status == "error":
					pl["hook_event_name"], pl["error"], pl["is_interrupt"] = "PostToolUseFailure", outputString(fr.Response.Output), false
				default:
					pl["hook_event_name"] = "PostToolUse"
					pl["tool_response"] = map[string]json.RawMessage{"llmContent": fr.Response.Output, "returnDisplay": rec.ToolCallResult.ResultDisplay}
				}
				add(platform.EventObservation, "tool:"+fr.ID, rec.Timestamp, pl)
			}
		}
	})
	if err != nil {
		return platform.Replayed{BadLines: bad}, fmt.Errorf("read chat file: %w", err)
	}
	if session == "" {
		return platform.Replayed{BadLines: bad}, nil
	}
	stop("end")
	add(platform.EventSessionEnd, "end", last, map[string]any{"hook_event_name": "SessionEnd", "reason": "other"})
	return platform.Replayed{Calls: out, Cwd: root, BadLines: bad}, nil
}

// outputString is a function response's output as text.
func outputString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
