package offline

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/memnode/memnode/memory"
)

type searchInput struct {
	Pattern    string `json:"pattern"`
	Query      string `json:"query"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Include    string `json:"include"`
	Type       string `json:"type"`
	OutputMode string `json:"output_mode"`
	IgnoreCase bool   `json:"-i"`
}

type searchResponse struct {
	Mode       string   `json:"mode"`
	Filenames  []string `json:"filenames"`
	NumFiles   int      `json:"numFiles"`
	Content    string   `json:"content"`
	NumLines   int      `json:"numLines"`
	NumMatches int      `json:"numMatches"`
	Truncated  bool     `json:"truncated"`
}

func (b *builder) search(glob bool) bool {
	var in searchInput
	var resp searchResponse
	decode(b.call.ToolInput, &in)
	if s, ok := rawString(b.call.ToolResponse); ok {
		resp.Content = s
	} else {
		decode(b.call.ToolResponse, &resp)
	}
	pattern := in.Pattern
	if pattern == "" {
		pattern = in.Query
	}
	if pattern == "" {
		return b.generic(b.call.ToolName, "")
	}
	dir := in.Path
	where := ""
	if d := b.rel(dir); d != "" && d != "." {
		where = " in " + d
	}
	files := make([]string, 0, min(len(resp.Filenames), 64))
	for i, f := range resp.Filenames {
		if i == 64 {
			break
		}
		files = append(files, b.rel(f))
	}
	var lines []string
	if resp.Content != "" {
		lines = outputLines(resp.Content, 2000)
		if len(files) == 0 && (resp.Mode == "files_with_matches" || glob) {
			for i, l := range lines {
				if i == 64 {
					break
				}
				files = append(files, b.rel(l))
			}
			lines = nil
		}
	}
	nFiles := max(resp.NumFiles, len(files))
	b.obs.Type = memory.TypeDiscovery
	b.cc.scan(pattern)
	qp := "\"" + clip(pattern, 50) + "\""
	count := ""
	switch {
	case resp.Mode == "content" || (len(lines) > 0 && len(files) == 0):
		n := max(resp.NumLines, resp.NumMatches, len(lines))
		count = plural(n, "matching line", "matching lines")
	case resp.Mode == "count":
		count = plural(max(resp.NumMatches, nFiles), "match", "matches")
	default:
		unit := "file"
		if !glob {
			unit = "matching file"
		}
		count = plural(nFiles, unit, unit+"s")
	}
	if glob {
		b.obs.Title = "Find files " + qp + where + ": " + count
	} else {
		b.obs.Title = "Search " + qp + where + ": " + count
	}
	b.obs.Subtitle = count
	opts := []string{}
	if in.Glob != "" {
		opts = append(opts, "glob "+in.Glob)
	}
	if in.Include != "" {
		opts = append(opts, "include "+in.Include)
	}
	if in.Type != "" {
		opts = append(opts, "type "+in.Type)
	}
	if in.IgnoreCase {
		opts = append(opts, "case-insensitive")
	}
	spec := "pattern `" + clip(pattern, 120) + "`" + where
	if len(opts) > 0 {
		spec += " (" + strings.Join(opts, ", ") + ")"
	}
	b.fact(spec)
	switch {
	case len(files) > 0:
		b.fact(count + ": " + joinClip(files, ", ", 180-len(count)))
		for i, f := range files {
			if i == 10 {
				break
			}
			b.read(f)
		}
		b.cc.path(strings.Join(files[:min(len(files), 5)], " "))
	case len(lines) > 0:
		for i, l := range lines {
			if i == 4 {
				break
			}
			b.fact(b.relLine(l))
		}
	default:
		b.fact("no matches")
	}
	if resp.Truncated {
		b.fact("results truncated")
	}
	verb := "Searched for "
	if glob {
		verb = "Looked for files matching "
	}
	s1 := verb + qp + where
	switch {
	case len(files) > 0:
		s1 += "; found " + count + ": " + joinClip(files[:min(len(files), 4)], ", ", 200)
	case len(lines) > 0:
		s1 += "; found " + count
	default:
		s1 += "; nothing matched"
	}
	b.narrate(s1, b.promptContext(false))
	return true
}

// relLine makes the path at the start of a "path:line:text" match relative.
func (b *builder) relLine(l string) string {
	if cwd := strings.TrimRight(b.call.Cwd, "/"); cwd != "" && strings.HasPrefix(l, cwd+"/") {
		return l[len(cwd)+1:]
	}
	return l
}

func (b *builder) list() bool {
	var in searchInput
	decode(b.call.ToolInput, &in)
	dir := in.Path
	text := jsonText(b.call.ToolResponse, 16<<10)
	var entries []string
	for _, l := range outputLines(text, 500) {
		l = strings.TrimLeft(l, "-*• ")
		if l != "" && !strings.HasPrefix(l, "NOTE:") {
			entries = append(entries, b.rel(l))
		}
	}
	if len(entries) == 0 {
		return false
	}
	rd := b.rel(dir)
	if rd == "" {
		rd = "."
	}
	b.obs.Type = memory.TypeDiscovery
	b.obs.Title = "List " + rd
	b.obs.Subtitle = plural(len(entries), "entry", "entries")
	b.fact(plural(len(entries), "entry", "entries") + ": " + joinClip(entries, ", ", 170))
	b.cc.path(rd)
	b.narrate("Listed "+rd+" ("+plural(len(entries), "entry", "entries")+")", b.promptContext(false))
	return true
}

type webInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
	Query  string `json:"query"`
}

type webResponse struct {
	Code     int             `json:"code"`
	CodeText string          `json:"codeText"`
	Result   string          `json:"result"`
	Bytes    int             `json:"bytes"`
	URL      string          `json:"url"`
	Query    string          `json:"query"`
	Results  json.RawMessage `json:"results"`
}

// shortURL is host + path without scheme, query or fragment.
func shortURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return clip(raw, 100)
	}
	return clip(u.Host+strings.TrimRight(u.Path, "/"), 100)
}

func (b *builder) webFetch() bool {
	var in webInput
	var resp webResponse
	decode(b.call.ToolInput, &in)
	result := ""
	if s, ok := rawString(b.call.ToolResponse); ok {
		result = s
	} else {
		decode(b.call.ToolResponse, &resp)
		result = resp.Result
	}
	if in.URL == "" {
		return b.generic(b.call.ToolName, "")
	}
	su := shortURL(in.URL)
	b.obs.Type = memory.TypeDiscovery
	b.obs.Title = "Fetch " + su
	b.cc.scan(su)
	b.cc.scan(in.Prompt)
	if in.Prompt != "" {
		b.fact("asked: " + in.Prompt)
	}
	if resp.Code != 0 {
		b.obs.Subtitle = "HTTP " + itoa(resp.Code) + " " + resp.CodeText
		if resp.Code >= 400 {
			b.fact("HTTP " + itoa(resp.Code) + " " + resp.CodeText)
		}
	}
	sents := proseSentences(result, 4)
	for _, s := range sents {
		b.fact(s)
	}
	s1 := "Fetched " + su
	if in.Prompt != "" {
		s1 += " to learn: " + clip(in.Prompt, 120)
	}
	s2 := ""
	if len(sents) > 0 {
		s2 = sents[0]
	}
	b.narrate(s1, s2)
	return true
}

// proseSentences returns up to n sentences of free text (markdown tolerated).
func proseSentences(text string, n int) []string {
	if len(text) > 16<<10 {
		text = text[:16<<10]
	}
	var out []string
	for _, u := range markdownUnits(text) {
		for _, s := range splitSentences(u.text, nil) {
			if len(out) == n {
				return out
			}
			out = append(out, clip(s, maxFact))
		}
	}
	return out
}

func (b *builder) webSearch() bool {
	var in webInput
	var resp webResponse
	decode(b.call.ToolInput, &in)
	decode(b.call.ToolResponse, &resp)
	q := in.Query
	if q == "" {
		q = resp.Query
	}
	if q == "" {
		return b.generic(b.call.ToolName, "")
	}
	b.obs.Type = memory.TypeDiscovery
	b.obs.Title = "Web search: \"" + clip(q, 60) + "\""
	b.cc.scan(q)
	var hits []string
	var summary string
	var results []json.RawMessage
	decode(resp.Results, &results)
	for _, r := range results {
		if s, ok := rawString(r); ok {
			if summary == "" {
				summary = s
			}
			continue
		}
		var block struct {
			Content []struct {
				Title string `json:"title"`
				URL   string `json:"url"`
			} `json:"content"`
			Title string `json:"title"`
			URL   string `json:"url"`
		}
		decode(r, &block)
		if block.Title != "" {
			hits = append(hits, clip(block.Title, 80)+" ("+shortURL(block.URL)+")")
		}
		for _, c := range block.Content {
			if len(hits) == 6 {
				break
			}
			hits = append(hits, clip(c.Title, 80)+" ("+shortURL(c.URL)+")")
		}
	}
	if summary == "" {
		if s, ok := rawString(b.call.ToolResponse); ok {
			summary = s
		}
	}
	b.obs.Subtitle = plural(len(hits), "result", "results")
	for i, h := range hits {
		if i == 5 {
			break
		}
		b.fact(h)
	}
	sents := proseSentences(summary, 2)
	for _, s := range sents {
		b.fact(s)
	}
	s2 := ""
	if len(sents) > 0 {
		s2 = sents[0]
	} else if len(hits) > 0 {
		s2 = "Top result: " + hits[0]
	}
	b.narrate("Searched the web for \""+clip(q, 120)+"\"", s2)
	return true
}

type taskInput struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
}

type taskResponse struct {
	Content           json.RawMessage `json:"content"`
	Result            string          `json:"result"`
	TotalToolUseCount int             `json:"totalToolUseCount"`
	Status            string          `json:"status"`
}

func (b *builder) task() bool {
	var in taskInput
	var resp taskResponse
	decode(b.call.ToolInput, &in)
	result := ""
	if s, ok := rawString(b.call.ToolResponse); ok {
		result = s
	} else {
		decode(b.call.ToolResponse, &resp)
		result = resp.Result
		if result == "" {
			result = jsonText(resp.Content, 16<<10)
		}
	}
	what := in.Description
	if what == "" {
		what = firstLine(in.Prompt)
	}
	if what == "" {
		return b.generic(b.call.ToolName, "")
	}
	agent := in.SubagentType
	if agent == "" {
		agent = "agent"
	}
	b.obs.Type = memory.TypeDiscovery
	b.obs.Title = "Agent " + agent + ": " + what
	b.cc.scan(what)
	if in.Prompt != "" {
		b.fact("asked: " + in.Prompt)
	}
	sents := proseSentences(result, 4)
	for _, s := range sents {
		b.fact(s)
	}
	if resp.TotalToolUseCount > 0 {
		b.obs.Subtitle = plural(resp.TotalToolUseCount, "tool use", "tool uses")
	}
	if resp.Status != "" && resp.Status != "completed" {
		b.fact("status: " + resp.Status)
	}
	b.cc.scan(result)
	s2 := ""
	if len(sents) > 0 {
		s2 = "It reported: " + sents[0]
	}
	b.narrate("Delegated to the "+agent+" agent: "+clip(what, 120), s2)
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// mainArgKeys are the argument names that usually say what a tool call is about.
var mainArgKeys = [...]string{"title", "query", "q", "sql", "statement", "name", "path", "file_path", "url", "command", "pattern", "symbol", "id", "key", "repo", "description", "prompt", "text", "input"}

// writeVerbs in an MCP tool name mark it as changing something.
var writeVerbs = [...]string{"create", "update", "delete", "write", "set", "add", "remove", "post", "push", "send", "edit", "insert", "merge", "move", "rename", "upload", "comment", "close", "assign"}

func (b *builder) mcp() bool {
	rest := strings.TrimPrefix(b.call.ToolName, "mcp__")
	server, tool, ok := strings.Cut(rest, "__")
	if !ok {
		tool, server = rest, ""
	}
	label := tool
	if server != "" {
		label = server + " " + tool
	}
	return b.generic(label, strings.ToLower(tool))
}

// generic describes any tool from its arguments and response text.
func (b *builder) generic(label, tool string) bool {
	var args map[string]json.RawMessage
	decode(b.call.ToolInput, &args)
	keys := sortedKeys(args)
	main := ""
	for _, k := range mainArgKeys {
		if s, ok := rawStringHead(args[k], 4096); ok && strings.TrimSpace(s) != "" {
			main = s
			break
		}
	}
	for _, k := range keys {
		if main != "" {
			break
		}
		if s, ok := rawStringHead(args[k], 4096); ok && strings.TrimSpace(s) != "" {
			main = s
		}
	}
	var pairs []string
	for _, k := range keys {
		if len(pairs) == 6 {
			break
		}
		raw := args[k]
		if s, ok := rawStringHead(raw, 4096); ok {
			pairs = append(pairs, clip(k, 30)+"="+clip(s, 60))
			if len(k) > 4 && (strings.HasSuffix(k, "path") || strings.HasSuffix(k, "file")) {
				b.read(s)
			}
			continue
		}
		if t := strings.TrimSpace(string(raw)); t != "" && t != "null" && (t[0] == '-' || isDigit(t[0]) || t[0] == 't' || t[0] == 'f') {
			pairs = append(pairs, clip(k, 30)+"="+clip(t, 30))
		}
	}
	b.obs.Type = memory.TypeDiscovery
	if tool == "" {
		tool = strings.ToLower(label)
	}
	for _, v := range writeVerbs {
		if strings.Contains(tool, v) {
			b.obs.Type = memory.TypeChange
			break
		}
	}
	b.obs.Title = label
	if main != "" {
		b.obs.Title += ": " + clip(main, 60)
	}
	if len(pairs) > 0 {
		b.fact("args: " + joinClip(pairs, ", ", 190))
	}
	text := jsonText(b.call.ToolResponse, 8<<10)
	lines := outputLines(text, 50)
	for i, l := range lines {
		if i == 3 {
			break
		}
		b.fact("result: " + l)
	}
	if len(lines) > 3 {
		b.fact(plural(len(lines), "line", "lines") + " of result")
	}
	b.cc.scan(label)
	b.cc.scan(main)
	s1 := "Used " + label
	if main != "" {
		s1 += " on " + clip(main, 100)
	}
	s2 := ""
	if len(lines) > 0 {
		s2 = "Result: " + clip(lines[0], 150)
	}
	b.narrate(s1, s2, b.promptContext(b.obs.Type == memory.TypeChange))
	return true
}
