package opencode

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memnode/memnode/platform"
)

// MaxExport bounds one exported session (`opencode export` prints a whole session, tool
// outputs included, as one JSON document).
const MaxExport = 256 << 20

// exported is a session as `opencode export <sessionID>` prints it: {info, messages:
// [{info, parts}]} (the SDK's session and messages shapes), with the fields a replay reads.
type exported struct {
	Info struct {
		ID        string `json:"id"`
		Directory string `json:"directory"`
		Time      struct {
			Created int64 `json:"created"`
		} `json:"time"`
	} `json:"info"`
	Messages []struct {
		Info struct {
			ID   string `json:"id"`
			Role string `json:"role"`
			Time struct {
				Created int64 `json:"created"`
			} `json:"time"`
		} `json:"info"`
		Parts []exportedPart `json:"parts"`
	} `json:"messages"`
}

type exportedPart struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Tool      string `json:"tool"`
	CallID    string `json:"callID"`
	State     struct {
		Status   string          `json:"status"`
		Input    json.RawMessage `json:"input"`
		Output   json.RawMessage `json:"output"`
		Title    string          `json:"title"`
		Metadata json.RawMessage `json:"metadata"`
		Error    string          `json:"error"`
		Time     struct {
			End int64 `json:"end"`
		} `json:"time"`
	} `json:"state"`
}

// Replay reads one session as `opencode export` prints it and returns the calls memnode's
// plugin made for it live, in order and in the plugin's payload format: for each user
// message, chat.message (session-init) with its parts, the first one followed by context
// (the plugin asks once per session, at the first model request); for
// each tool part of the answer, tool.execute.after (observation) when it completed, or the
// bus's message.part.updated when it failed; session.idle (summarize) at the end of each
// turn with the last assistant text so far, as the plugin reads it. Event IDs come from
// the session, message and part IDs, so a second replay gives the same IDs. A document
// that is not an export is an error; one of no session replays to nothing.
func Replay(r io.Reader) (platform.Replayed, error) {
	var ex exported
	dec := json.NewDecoder(io.LimitReader(r, MaxExport))
	if err := dec.Decode(&ex); err != nil {
		return platform.Replayed{}, fmt.Errorf("decode opencode export: %w", err)
	}
	sid, cwd := ex.Info.ID, ex.Info.Directory
	if sid == "" {
		return platform.Replayed{}, nil
	}
	var (
		out            []platform.Recorded
		prompt, answer string
		turn           string // the user message of the turn ("": none yet)
		started        bool
		last           = ms(ex.Info.Time.Created)
	)
	add := func(event, id string, at time.Time, p map[string]any) {
		p["cwd"] = cwd
		b, _ := json.Marshal(p)
		out = append(out, platform.Recorded{Event: event, Payload: b, ID: "opencode-import:" + sid + ":" + id, At: at, TurnPrompt: prompt})
	}
	idle := func() {
		if turn != "" {
			add(platform.EventSummarize, "idle:"+turn, last, map[string]any{"last_assistant_message": answer,
				"event": map[string]any{"type": "session.idle", "properties": map[string]any{"sessionID": sid}}})
			// Live, session.idle reaches the node after a wholly private turn too (the hook
			// cannot tell), and the node summarizes the session without the turn's answer:
			// so does the import (its TurnPrompt would have it dropped).
			out[len(out)-1].TurnPrompt = ""
		}
	}
	for _, m := range ex.Messages {
		if m.Info.ID == "" {
			continue
		}
		at := ms(m.Info.Time.Created)
		if m.Info.Role != "user" && !at.IsZero() {
			last = at
		}
		switch m.Info.Role {
		case "user":
			var parts []map[string]any
			var texts []string
			for _, p := range m.Parts {
				if p.Type != "text" {
					continue
				}
				parts = append(parts, map[string]any{"type": "text", "text": p.Text, "synthetic": p.Synthetic, "id": p.ID, "messageID": m.Info.ID, "sessionID": sid})
				if !p.Synthetic {
					texts = append(texts, p.Text)
				}
			}
			if len(texts) == 0 {
				continue // no typed prompt (e.g. a compaction's)
			}
			idle() // the turn before ends at its last message
			if !at.IsZero() {
				last = at
			}
			turn, prompt = m.Info.ID, unquote(strings.Join(texts, "\n"))
			add(platform.EventSessionInit, m.Info.ID, last, map[string]any{"input": map[string]any{"sessionID": sid, "messageID": m.Info.ID},
				"output": map[string]any{"message": map[string]any{"id": m.Info.ID, "role": "user", "sessionID": sid}, "parts": parts}})
			if !started { // the plugin asks for the context at the first model request
				started = true
				add(platform.EventContext, "start", last, map[string]any{"input": map[string]any{"sessionID": sid}})
			}
		case "assistant":
			var texts []string
			for _, p := range m.Parts {
				switch {
				case p.Type == "text" && !p.Synthetic:
					texts = append(texts, p.Text)
				case p.Type == "tool" && p.CallID != "":
					// The part's ID names the call: a provider's call IDs need not be unique
					// in a session (a scripted one says call_1 every turn).
					id := "tool:" + p.ID
					if p.ID == "" {
						id = "call:" + p.CallID
					}
					at := last
					if e := ms(p.State.Time.End); !e.IsZero() {
						at = e
					}
					switch p.State.Status {
					case "completed":
						add(platform.EventObservation, id, at, map[string]any{
							"input":  map[string]any{"tool": p.Tool, "sessionID": sid, "callID": p.CallID, "args": platform.NonNull(p.State.Input)},
							"output": map[string]any{"title": p.State.Title, "output": withoutFileContext(p.Tool, p.State.Output), "metadata": platform.NonNull(p.State.Metadata)}})
					case "error":
						add(platform.EventObservation, id, at, map[string]any{"event": map[string]any{"type": "message.part.updated",
							"properties": map[string]any{"part": map[string]any{"type": "tool", "tool": p.Tool, "callID": p.CallID, "sessionID": sid,
								"state": map[string]any{"status": "error", "input": platform.NonNull(p.State.Input), "error": p.State.Error}}}}})
					}
				}
			}
			if text := strings.TrimSpace(strings.Join(texts, "\n")); text != "" {
				answer = text
			}
		}
	}
	idle()
	return platform.Replayed{Calls: out, Cwd: cwd}, nil
}

// fileContextHead starts the file context memnode's plugin appends to a read's output
// ("\n\nmemnode: app.js has 3 prior observation(s); …"): OpenCode stores the output with
// it, the live record was made before it.
const fileContextHead = "\n\nmemnode: "

// withoutFileContext is a tool's stored output without memnode's file context.
func withoutFileContext(tool string, raw json.RawMessage) json.RawMessage {
	var s string
	if tool != "read" || json.Unmarshal(raw, &s) != nil {
		return platform.NonNull(raw)
	}
	i := strings.LastIndex(s, fileContextHead)
	if i < 0 || !strings.Contains(s[i:], " prior observation(s); for details call ") {
		return raw
	}
	b, _ := json.Marshal(s[:i])
	return b
}

// ms is an epoch-milliseconds time (zero for 0).
func ms(v int64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
