package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The parsers of the agent CLIs' headless output. Their input is untrusted (a CLI's output
// can carry anything a model or a proxy sent): they bound what they keep, never panic, and
// report tokens as non-negative ints (FuzzParseCLIOutput). The answer text they return is
// validated like any provider's (ParseObservations, ParseSummary).

// errNoResult means the output holds no result object.
var errNoResult = errors.New("no result in the CLI's output")

// maxTokens caps a reported token count (a hostile or broken number must not overflow sums).
const maxTokens = 1 << 40

func tokens(v int64) int {
	return int(min(max(v, 0), maxTokens))
}

// lastJSONObject returns the last line of out that decodes into v (CLIs may print
// warnings before their JSON).
func lastJSONObject(out []byte, v any) error {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 || l[0] != '{' {
			continue
		}
		if err := json.Unmarshal(l, v); err == nil {
			return nil
		}
	}
	// A pretty-printed object spans lines: try the whole output from its first brace.
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		if err := json.Unmarshal(out[i:], v); err == nil {
			return nil
		}
	}
	return errNoResult
}

// parseClaudeOutput reads `claude -p --output-format json`: one result object with the
// answer (result), is_error, the model API's status on failure (api_error_status) and
// usage, per model in modelUsage (which also counts any side request it made).
func parseClaudeOutput(out []byte) (cliResult, error) {
	var v struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
		APIStatus int    `json:"api_error_status"`
		Usage     *struct {
			Input         int64 `json:"input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			Output        int64 `json:"output_tokens"`
		} `json:"usage"`
		ModelUsage map[string]struct {
			Input         int64 `json:"inputTokens"`
			Output        int64 `json:"outputTokens"`
			CacheRead     int64 `json:"cacheReadInputTokens"`
			CacheCreation int64 `json:"cacheCreationInputTokens"`
		} `json:"modelUsage"`
	}
	if err := lastJSONObject(out, &v); err != nil {
		return cliResult{}, err
	}
	if v.Type != "result" {
		return cliResult{}, fmt.Errorf("claude output: type %q: %w", truncate(v.Type, 20), errNoResult)
	}
	r := cliResult{Text: v.Result}
	if v.IsError || (v.Subtype != "" && v.Subtype != "success") {
		r = cliResult{Failed: true, Failure: truncate(v.Result, 1000), Status: v.APIStatus}
		if r.Status < 100 || r.Status > 599 {
			r.Status = 0
		}
	}
	var in, outT int64
	names := make([]string, 0, len(v.ModelUsage))
	for name := range v.ModelUsage {
		names = append(names, name)
	}
	sort.Strings(names)
	var top int64 = -1
	for _, name := range names {
		u := v.ModelUsage[name]
		in += clamp(u.Input) + clamp(u.CacheRead) + clamp(u.CacheCreation)
		outT += clamp(u.Output)
		if clamp(u.Output) > top {
			top, r.Model = clamp(u.Output), truncate(name, 100)
		}
	}
	if len(names) == 0 && v.Usage != nil {
		in = clamp(v.Usage.Input) + clamp(v.Usage.CacheCreation) + clamp(v.Usage.CacheRead)
		outT = clamp(v.Usage.Output)
	}
	r.InputTokens, r.OutputTokens = tokens(in), tokens(outT)
	r.Reported = in+outT > 0
	return r, nil
}

func clamp(v int64) int64 { return min(max(v, 0), maxTokens) }

// parseCodexOutput reads `codex exec --json`: JSON lines of events; the answer is the last
// agent_message item, usage comes with turn.completed, failures as turn.failed or error.
func parseCodexOutput(out []byte) (cliResult, error) {
	var r cliResult
	seen := false
	for _, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
			Usage struct {
				Input  int64 `json:"input_tokens"`
				Cached int64 `json:"cached_input_tokens"`
				Output int64 `json:"output_tokens"`
			} `json:"usage"`
			Message string `json:"message"`
			Error   struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "item.completed":
			if ev.Item.Type == "agent_message" {
				r.Text, seen = ev.Item.Text, true
			}
		case "turn.completed":
			seen = true
			// cached_input_tokens are part of input_tokens (the Responses API's accounting).
			r.InputTokens = tokens(int64(r.InputTokens) + clamp(ev.Usage.Input))
			r.OutputTokens = tokens(int64(r.OutputTokens) + clamp(ev.Usage.Output))
			r.Reported = r.InputTokens+r.OutputTokens > 0
		case "turn.failed":
			r.Failed, seen = true, true
			r.Failure = truncate(r.Failure+" "+ev.Error.Message, 1000)
		case "error":
			r.Failed, seen = true, true
			r.Failure = truncate(r.Failure+" "+ev.Message, 1000)
		}
	}
	if !seen {
		return cliResult{}, errNoResult
	}
	if r.Failed {
		r.Text = ""
		r.Status = statusIn(r.Failure)
	}
	return r, nil
}

// parseGeminiOutput reads `gemini --output-format json`: one object with the answer
// (response), per-model token stats, or an error object.
func parseGeminiOutput(out []byte) (cliResult, error) {
	var v struct {
		Response *string `json:"response"`
		Stats    struct {
			Models map[string]struct {
				Tokens struct {
					Input      int64 `json:"input"`
					Prompt     int64 `json:"prompt"`
					Candidates int64 `json:"candidates"`
					Thoughts   int64 `json:"thoughts"`
					Tool       int64 `json:"tool"`
					Total      int64 `json:"total"`
				} `json:"tokens"`
			} `json:"models"`
		} `json:"stats"`
		Error *struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if err := lastJSONObject(out, &v); err != nil {
		return cliResult{}, err
	}
	if v.Error != nil {
		r := cliResult{Failed: true, Failure: truncate(v.Error.Type+": "+v.Error.Message, 1000)}
		var code int
		if json.Unmarshal(v.Error.Code, &code) == nil && code >= 100 && code <= 599 {
			r.Status = code
		} else {
			r.Status = statusIn(r.Failure)
		}
		return r, nil
	}
	if v.Response == nil {
		return cliResult{}, fmt.Errorf("gemini output: %w", errNoResult)
	}
	r := cliResult{Text: *v.Response}
	names := make([]string, 0, len(v.Stats.Models))
	for name := range v.Stats.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	var in, outT, top int64 = 0, 0, -1
	for _, name := range names {
		t := v.Stats.Models[name].Tokens
		prompt := max(clamp(t.Prompt), clamp(t.Input))
		o := clamp(t.Candidates) + clamp(t.Thoughts)
		if total := clamp(t.Total); total > prompt+o {
			o = total - prompt // the total is what was billed
		}
		in += prompt
		outT += o
		if o > top {
			top, r.Model = o, truncate(name, 100)
		}
	}
	r.InputTokens, r.OutputTokens = tokens(in), tokens(outT)
	r.Reported = in+outT > 0
	return r, nil
}

// statusIn finds an HTTP status named in an error text ("429 Too Many Requests",
// "status 401"), 0 if none.
func statusIn(s string) int {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if len(f) != 3 {
			continue
		}
		switch f {
		case "401", "402", "403", "429", "500", "502", "503", "529":
			n := 0
			for _, d := range f {
				n = n*10 + int(d-'0')
			}
			return n
		}
	}
	return 0
}
