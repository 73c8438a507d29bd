package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// fixtureProject is the project path the recorded fixture session was made in.
const fixtureProject = "/home/dev/demo-app"

// Built-in payloads, used when the fixture file is not found: the anchor's own PostToolUse,
// UserPromptSubmit and SessionStart payloads, with the project path as a placeholder.
const (
	builtinObservation = `{"session_id":"bench-sess-0001","transcript_path":"","cwd":"/home/dev/demo-app","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./internal/store/... -run TestFTS -count=1","description":"Run FTS store tests"},"tool_response":{"stdout":"ok  \tgithub.com/example/mem/internal/store\t0.412s\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_bench"}`
	builtinPrompt      = `{"session_id":"bench-sess-0001","transcript_path":"","cwd":"/home/dev/demo-app","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"Add a full-text search endpoint to the memory store and make the FTS tests pass"}`
	builtinContext     = `{"session_id":"bench-sess-0001","transcript_path":"","cwd":"/home/dev/demo-app","hook_event_name":"SessionStart","source":"startup"}`
)

// payloads makes the i-th stdin of each measured hook. Every run gets a distinct
// tool_use_id or prompt, as the anchor's hyperfine --prepare scripts do.
type payloads struct {
	source string
	obs    map[string]json.RawMessage
	prompt map[string]json.RawMessage
	ctx    []byte
}

// loadPayloads takes the first Edit PostToolUse, the first UserPromptSubmit and the first
// SessionStart of the fixture session (paths rewritten into project), or the built-ins.
func loadPayloads(fixture, project string) (*payloads, error) {
	raw := map[string][]byte{}
	source := "built-in (fixture " + fixture + " not found)"
	f, err := os.Open(fixture)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		raw["observation"], raw["session-init"], raw["context"] = []byte(builtinObservation), []byte(builtinPrompt), []byte(builtinContext)
	case err != nil:
		return nil, fmt.Errorf("open fixture: %w", err)
	default:
		defer f.Close()
		abs, _ := filepath.Abs(fixture)
		source = abs
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var rec struct {
				Event   string          `json:"event"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				return nil, fmt.Errorf("fixture %s: %w", fixture, err)
			}
			if _, seen := raw[rec.Event]; seen {
				continue
			}
			if rec.Event == "observation" {
				var p struct {
					ToolName string `json:"tool_name"`
				}
				if json.Unmarshal(rec.Payload, &p) != nil || p.ToolName != "Edit" {
					continue
				}
			}
			raw[rec.Event] = rec.Payload
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("fixture %s: %w", fixture, err)
		}
		for _, e := range []string{"observation", "session-init", "context"} {
			if raw[e] == nil {
				return nil, fmt.Errorf("fixture %s has no %s payload (an Edit one for observation)", fixture, e)
			}
		}
	}
	p := &payloads{source: source}
	pj, _ := json.Marshal(project)
	rewrite := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(fixtureProject), pj[1:len(pj)-1]) }
	for _, x := range []struct {
		event string
		dst   *map[string]json.RawMessage
	}{{"observation", &p.obs}, {"session-init", &p.prompt}} {
		if err := json.Unmarshal(rewrite(raw[x.event]), x.dst); err != nil {
			return nil, fmt.Errorf("%s payload: %w", x.event, err)
		}
		// Claude Code gives the hook an absolute transcript path; the fixture's is relative.
		(*x.dst)["transcript_path"] = json.RawMessage(`""`)
	}
	p.ctx = rewrite(raw["context"])
	var c map[string]json.RawMessage
	if err := json.Unmarshal(p.ctx, &c); err != nil {
		return nil, fmt.Errorf("context payload: %w", err)
	}
	c["transcript_path"] = json.RawMessage(`""`)
	p.ctx = mustJSON(c)
	if _, ok := p.prompt["prompt"]; !ok {
		return nil, errors.New("session-init payload has no prompt")
	}
	return p, nil
}

func (p *payloads) observation(i int) []byte {
	m := make(map[string]json.RawMessage, len(p.obs))
	for k, v := range p.obs {
		m[k] = v
	}
	m["tool_use_id"] = mustJSON("toolu_bench_" + strconv.Itoa(i))
	return mustJSON(m)
}

func (p *payloads) sessionInit(i int) []byte {
	m := make(map[string]json.RawMessage, len(p.prompt))
	for k, v := range p.prompt {
		m[k] = v
	}
	var prompt string
	_ = json.Unmarshal(p.prompt["prompt"], &prompt)
	m["prompt"] = mustJSON(prompt + " (run " + strconv.Itoa(i) + ")")
	return mustJSON(m)
}

func (p *payloads) context(int) []byte { return p.ctx }
