package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"
)

// history: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl; the user's
// ~/.codex/AGENTS.md; a project's AGENTS.md (and AGENTS.override.md) at its root.
var history = platform.History{
	Dir: func(home string, getenv func(string) string) string {
		if h := getenv("CODEX_HOME"); h != "" {
			return filepath.Join(h, "sessions")
		}
		return filepath.Join(home, ".codex", "sessions")
	},
	IsSession: func(rel string) bool {
		base := rel[strings.LastIndex(rel, "/")+1:]
		return strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl")
	},
	Replay: func(path string) (platform.Replayed, error) {
		return platform.ReplayFile(path, func(r io.Reader) (platform.Replayed, error) { return Replay(r, path) })
	},
	UserMemory: "AGENTS.md",
	ProjectMemory: func(root, _ string) []string {
		return []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "AGENTS.override.md")}
	},
}

// replayLine is one record of a rollout, with the fields a replay reads.
type replayLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type string `json:"type"`
		// session_meta
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
		// response_item
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Arguments json.RawMessage `json:"arguments"`
		Input     json.RawMessage `json:"input"`
		Output    json.RawMessage `json:"output"`
		CallID    string          `json:"call_id"`
		// event_msg
		Message          string `json:"message"`
		LastAgentMessage string `json:"last_agent_message"`
		Item             struct {
			Type            string          `json:"type"`
			ID              string          `json:"id"`
			Content         json.RawMessage `json:"content"`
			AggregatedOut   *string         `json:"aggregated_output"`
			Result          json.RawMessage `json:"result"`
			Server          string          `json:"server"`
			Tool            string          `json:"tool"`
			Arguments       json.RawMessage `json:"arguments"`
			CommandExitCode *int            `json:"exit_code"`
		} `json:"item"`
	} `json:"payload"`
}

// Replay reads a past session's rollout (path is where it lies: the shell calls' exit codes
// are read from it by the adapter, as live) and returns the hook calls Codex made for it,
// in order: SessionStart, UserPromptSubmit for each typed prompt, PostToolUse for each tool
// call that finished (a failed apply_patch, for which Codex fires none and the Stop hook
// reads the rollout, as PostToolUseFailure with the failure text), Stop at each turn's end
// with its last answer, SessionEnd. tool_search (loading deferred tools) fires no hook and
// is left out. Each call's ID is derived from the session and the call, so a second replay
// of the same file gives the same IDs. Lines that are not JSON are counted in BadLines.
func Replay(r io.Reader, path string) (platform.Replayed, error) {
	type call struct {
		name  string
		input json.RawMessage
	}
	var (
		out                []platform.Recorded
		bad                int
		session, cwd       string
		last               time.Time
		lastAnswer, prompt string
		inTurn             bool
		turns              int
		calls              = map[string]call{}
		shellOut           = map[string]string{}          // call_id → aggregated output
		mcpResult          = map[string]json.RawMessage{} // call_id → MCP result
	)
	add := func(event, id string, at time.Time, p map[string]any, transcript string) {
		p["session_id"], p["cwd"], p["transcript_path"] = session, cwd, transcript
		b, _ := json.Marshal(p)
		out = append(out, platform.Recorded{Event: event, Payload: b, ID: "codex-import:" + session + ":" + id, At: at, TurnPrompt: prompt})
	}
	stop := func(at time.Time) {
		if inTurn {
			add(platform.EventSummarize, fmt.Sprintf("stop:%d", turns), at,
				map[string]any{"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": lastAnswer}, "")
		}
		inTurn, lastAnswer = false, ""
	}
	err := platform.ScanLines(r, func(_ int, b []byte) {
		var l replayLine
		if json.Unmarshal(b, &l) != nil {
			bad++
			return
		}
		p := l.Payload
		if l.Type == "session_meta" {
			if session == "" && p.ID != "" {
				session, cwd = p.ID, p.Cwd
				add(platform.EventContext, "start", l.Timestamp, map[string]any{"hook_event_name": "SessionStart", "source": "startup"}, "")
			}
			return
		}
		if session == "" {
			return
		}
		if !l.Timestamp.IsZero() {
			last = l.Timestamp
		}
		switch {
		case l.Type == "turn_context" && p.Cwd != "":
			cwd = p.Cwd
		case l.Type == "event_msg" && (p.Type == "item_completed" && p.Item.Type == "UserMessage" || p.Type == "user_message"):
			text := p.Message
			if p.Type == "item_completed" {
				text = itemText(p.Item.Content)
			}
			if strings.TrimSpace(text) == "" {
				return
			}
			stop(l.Timestamp)
			turns++
			prompt = text
			add(platform.EventSessionInit, fmt.Sprintf("prompt:%d", turns), l.Timestamp,
				map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": text}, "")
			inTurn = true
		case l.Type == "event_msg" && p.Type == "item_completed":
			switch p.Item.Type {
			case "AgentMessage":
				if t := strings.TrimSpace(itemText(p.Item.Content)); t != "" {
					lastAnswer = t
				}
			case "CommandExecution":
				if p.Item.AggregatedOut != nil {
					shellOut[p.Item.ID] = *p.Item.AggregatedOut
				}
			case "McpToolCall":
				mcpResult[p.Item.ID] = p.Item.Result
			}
		case l.Type == "event_msg" && p.Type == "agent_message" && strings.TrimSpace(p.Message) != "":
			lastAnswer = strings.TrimSpace(p.Message)
		case l.Type == "event_msg" && p.Type == "task_complete":
			if t := strings.TrimSpace(p.LastAgentMessage); t != "" {
				lastAnswer = t
			}
			stop(l.Timestamp)
		case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
			if t := strings.TrimSpace(itemText(p.Content)); t != "" {
				lastAnswer = t
			}
		case l.Type == "response_item" && (p.Type == "function_call" || p.Type == "custom_tool_call"):
			name := p.Name
			if p.Namespace != "" {
				name = p.Namespace + "__" + p.Name
			}
			input := p.Input
			if p.Type == "function_call" {
				input = decodeArguments(p.Arguments)
			}
			calls[p.CallID] = call{name: name, input: input}
		case l.Type == "response_item" && (p.Type == "function_call_output" || p.Type == "custom_tool_call_output"):
			c, ok := calls[p.CallID]
			if !ok {
				return
			}
			delete(calls, p.CallID)
			pl := map[string]any{"hook_event_name": "PostToolUse", "tool_use_id": p.CallID, "tool_name": c.name}
			transcript := ""
			switch {
			case isShell(c.name):
				var args struct {
					Cmd     json.RawMessage `json:"cmd"`
					Command json.RawMessage `json:"command"`
				}
				_ = json.Unmarshal(c.input, &args)
				command := args.Command
				if len(command) == 0 {
					command = args.Cmd
				}
				pl["tool_name"], pl["tool_input"] = "Bash", map[string]json.RawMessage{"command": command}
				text, ok := shellOut[p.CallID]
				if !ok {
					text = shellOutput(outputText(p.Output))
				}
				pl["tool_response"] = text
				transcript = path // the adapter reads the command's exit code from it, as live
			case c.name == "apply_patch":
				var patch string
				if json.Unmarshal(c.input, &patch) != nil {
					return
				}
				text := outputText(p.Output)
				pl["tool_input"] = map[string]string{"command": patch}
				if strings.HasPrefix(text, "Exit code: 0") {
					pl["tool_response"] = text
				} else {
					pl["hook_event_name"], pl["error"] = "PostToolUseFailure", text
				}
			case strings.HasPrefix(c.name, "mcp__"):
				pl["tool_input"] = c.input
				if res, ok := mcpResult[p.CallID]; ok && len(res) > 0 {
					pl["tool_response"] = res
				} else {
					pl["tool_response"] = outputText(p.Output)
				}
			default:
				pl["tool_input"], pl["tool_response"] = c.input, outputText(p.Output)
			}
			add(platform.EventObservation, "tool:"+p.CallID, l.Timestamp, pl, transcript)
		}
	})
	if err != nil {
		return platform.Replayed{BadLines: bad}, fmt.Errorf("read rollout: %w", err)
	}
	if session == "" {
		return platform.Replayed{BadLines: bad}, nil
	}
	stop(last)
	add(platform.EventSessionEnd, "end", last, map[string]any{"hook_event_name": "SessionEnd", "reason": "other"}, "")
	return platform.Replayed{Calls: out, Cwd: firstCwd(out), BadLines: bad}, nil
}

// firstCwd is the working folder of a replay's first call.
func firstCwd(calls []platform.Recorded) string {
	if len(calls) == 0 {
		return ""
	}
	var p struct {
		Cwd string `json:"cwd"`
	}
	_ = json.Unmarshal(calls[0].Payload, &p)
	return p.Cwd
}

// itemText joins the text of a message's content parts ({type: text|input_text|
// output_text|Text, text}).
func itemText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// decodeArguments is a function call's arguments as JSON: the model sends them as a string
// of JSON.
func decodeArguments(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

// outputText is a tool output as text: a string, or the text of its parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return itemText(raw)
}

// shellOutput is the command's own output in a shell call's output text ("Chunk ID: …\n
// Process exited with code 1\n…\nOutput:\n<output>"), the text itself when it has no header.
func shellOutput(text string) string {
	if _, after, ok := strings.Cut(text, "\nOutput:\n"); ok {
		return after
	}
	return text
}
