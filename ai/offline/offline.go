// Package offline is memnode's default compressor: deterministic heuristics that turn a
// canonical tool call (platform.Input's shape) into an observation and a session's last
// message into a summary, with no key and no network.
package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

// Model is the ai.Usage.Model of the offline compressor.
const Model = "offline"

// Compressor is the default ai.Compressor: deterministic heuristics over the tool input and
// response, no key, no network. It is stateless and safe for concurrent use.
//
// Each tool kind has its own reading (file outlines for reads, a line diff with new checks,
// outcomes and identifiers for edits, test/build/git recognition for shell commands, match
// lists for searches); tools it does not know (MCP included) are described from their
// arguments and response text. The turn's prompt decides bugfix / refactor / feature for
// calls that change code. It reads the canonical tool call only (platform.Input): each
// agent's adapter maps its own tool names and fields onto Claude Code's.
//
// One call gives at most one observation. Calls worth nothing are skipped (fewer
// observations than calls):
//   - an agent's housekeeping tools (memory.Housekeeping: todo lists, deferred-tool
//     loading, background shells) and memnode's own MCP tools (recording memory searches
//     in memory is noise);
//   - Bash commands made only of cd, pwd, clear, true, sleep, echo, which, whoami, date,
//     export, source or set, and ls with no output, when they did not fail;
//   - an LS that listed nothing;
//   - calls with no (printable) tool name.
type Compressor struct {
	v *vocab
}

var _ ai.Compressor = (*Compressor)(nil)

// New returns the offline compressor.
func New() *Compressor {
	v, err := parseVocab(keywordsJSON)
	if err != nil {
		panic("offline: embedded keywords.json: " + err.Error()) // a build defect, caught by its test
	}
	return &Compressor{v: v}
}

// Name implements ai.Compressor.
func (*Compressor) Name() string { return Model }

// Observe implements ai.Compressor. Usage reports zero tokens: no model was asked.
func (c *Compressor) Observe(ctx context.Context, calls []ai.ToolCall) ([]ai.Observation, ai.Usage, error) {
	usage := ai.Usage{Model: Model}
	out := make([]ai.Observation, 0, len(calls))
	for i := range calls {
		if err := ctx.Err(); err != nil {
			return nil, usage, fmt.Errorf("observe tool calls: %w", err)
		}
		if obs, ok := observeCall(c.v, &calls[i]); ok {
			obs.Call = i + 1
			out = append(out, obs)
		}
	}
	return out, usage, nil
}

// builder accumulates one observation and bounds it in finish.
type builder struct {
	v      *vocab
	call   *ai.ToolCall
	intent intent
	obs    ai.Observation
	cc     concepts
	// noResult marks a call recorded with no response at all (not an empty one).
	noResult bool
}

func (b *builder) fact(s string) {
	if s = clip(s, maxFact); s == "" || len(b.obs.Facts) >= maxFacts {
		return
	}
	for _, f := range b.obs.Facts {
		if f == s {
			return
		}
	}
	b.obs.Facts = append(b.obs.Facts, s)
}

func (b *builder) rel(p string) string { return relPath(b.call.Cwd, p) }

func (b *builder) read(p string) {
	if p = b.rel(p); p != "" && len(b.obs.FilesRead) < maxFiles {
		b.obs.FilesRead = appendUnique(b.obs.FilesRead, p)
	}
}

func (b *builder) modified(p string) {
	if p = b.rel(p); p != "" && len(b.obs.FilesModified) < maxFiles {
		b.obs.FilesModified = appendUnique(b.obs.FilesModified, p)
	}
}

// narrate joins sentences into the narrative, ending each with a period.
func (b *builder) narrate(sentences ...string) {
	var parts []string
	for _, s := range sentences {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, `."`) {
			s += "."
		}
		parts = append(parts, capitalize(s))
	}
	b.obs.Narrative = strings.Join(parts, " ")
}

// promptContext is the narrative sentence that ties a call to the user's request.
func (b *builder) promptContext(modifies bool) string {
	g := promptGist(b.call.Prompt)
	if g == "" {
		return ""
	}
	switch {
	case modifies && b.intent == intentBug:
		return `Fix for: "` + g + `"`
	case modifies:
		return `Request: "` + g + `"`
	default:
		return `While working on: "` + g + `"`
	}
}

func (b *builder) finish() ai.Observation {
	o := b.obs
	if o.Type == "" {
		o.Type = memory.TypeDiscovery
	}
	o.Title = clip(o.Title, maxTitle)
	if o.Title == "" {
		o.Title = clip(b.call.ToolName, maxTitle)
	}
	o.Subtitle = clip(o.Subtitle, maxSubtitle)
	o.Narrative = clip(o.Narrative, maxNarrative)
	o.Facts = distinctFacts(o.Facts, o.Subtitle)
	o.Concepts = b.cc.list
	return o
}

// distinctFacts keeps each fact once by meaning: the same text with or without a "$ " or
// a label ("output: ", "result: ", "error: ", "stderr: "), in another case or spacing, is
// one fact, and so is a fact that another fact or the subtitle says in full ("16 lines"
// beside "16 lines of Go"); the longer wording stays, in the first one's place.
func distinctFacts(facts []string, subtitle string) []string {
	if len(facts) == 0 {
		return facts
	}
	sub := factKey(subtitle)
	var kb [maxFacts]string
	keys := kb[:0]
	out := facts[:0]
	for _, f := range facts {
		k := factKey(f)
		if k == "" || k == sub || wordPrefix(k, sub) {
			continue
		}
		dup := false
		for j, kj := range keys {
			switch {
			case k == kj && strings.HasPrefix(f, "error: "):
				out[j], dup = f, true // the same text as an error says more
			case k == kj || wordPrefix(k, kj):
				dup = true
			case wordPrefix(kj, k):
				out[j], keys[j], dup = f, k, true
			}
			if dup {
				break
			}
		}
		if !dup {
			out = append(out, f)
			keys = append(keys, k)
		}
	}
	return out
}

// factKey is what a fact says, for comparing: no "$ " or label, lower case, single spaces,
// no closing period.
func factKey(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$ ")
	for _, label := range [...]string{"output: ", "result: ", "error: ", "stderr: "} {
		s = strings.TrimPrefix(s, label)
	}
	if !normalKey(s) {
		var b strings.Builder
		b.Grow(len(s))
		space := false
		for _, r := range s {
			if unicode.IsSpace(r) {
				space = b.Len() > 0
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(unicode.ToLower(r))
		}
		s = b.String()
	}
	return strings.TrimRight(s, ".")
}

// normalKey reports whether s is already a key (no upper-case ASCII, single spaces, no
// other blanks), which most facts are: no copy is made for them.
func normalKey(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isUpper(c), c == '\t', c == '\n', c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// wordPrefix reports whether short is long's beginning, ending at a word boundary.
func wordPrefix(short, long string) bool {
	return short != "" && len(short) < len(long) && strings.HasPrefix(long, short) && !isWordByte(long[len(short)])
}

// modType picks the type of a call that changed a file.
func (b *builder) modType(l lang, d *editDiff, created bool) string {
	code := isCode(l)
	switch {
	case code && b.intent == intentBug:
		return memory.TypeBugfix
	case code && b.intent == intentRefactor:
		return memory.TypeRefactor
	case code && (created || (d != nil && len(d.addedDecls) > 0)):
		return memory.TypeFeature
	case code && b.intent == intentFeature:
		return memory.TypeFeature
	case code && d != nil && (d.fixComment || d.errNowChecked):
		return memory.TypeBugfix
	case !code && created:
		return memory.TypeFeature
	}
	return memory.TypeChange
}

// maxPayload bounds the JSON decoded per input or response: larger payloads are not
// decoded (an oversized input gives a minimal observation, an oversized response is
// ignored), which keeps the worst case at tens of milliseconds.
const maxPayload = 4 << 20

// observeCall turns one call into an observation, or reports that it is worth nothing.
func observeCall(v *vocab, c *ai.ToolCall) (ai.Observation, bool) {
	name := strings.TrimSpace(c.ToolName)
	if clip(name, maxTitle) == "" {
		return ai.Observation{}, false
	}
	b := &builder{v: v, call: c, intent: promptIntent(v, c.Prompt), cc: concepts{v: v}}
	if len(c.ToolInput) > maxPayload {
		if toolKind(name) == kindSkip {
			return ai.Observation{}, false
		}
		return b.oversized(name), true
	}
	dropped := len(c.ToolResponse) > maxPayload
	if dropped {
		trimmed := *c
		trimmed.ToolResponse = nil
		b.call = &trimmed
	}
	var ok bool
	switch kind := toolKind(name); kind {
	case kindSkip:
		return ai.Observation{}, false
	case kindRead:
		ok = b.readFile()
	case kindEdit:
		ok = b.editFile()
	case kindWrite:
		ok = b.writeFile()
	case kindBash:
		ok = b.bash()
	case kindGrep, kindGlob:
		ok = b.search(kind == kindGlob)
	case kindLS:
		ok = b.list()
	case kindWebFetch:
		ok = b.webFetch()
	case kindWebSearch:
		ok = b.webSearch()
	case kindTask:
		ok = b.task()
	case kindNotebook:
		ok = b.notebookEdit()
	case kindMCP:
		ok = b.mcp()
	default:
		ok = b.generic(name, "")
	}
	if !ok {
		return ai.Observation{}, false
	}
	if msg, failed := failureOf(b.call.ToolResponse); failed && toolKind(name) != kindBash {
		// Shell failures are read by bash(); for every other tool the error is the news,
		// and the narrative must not tell of a read or an edit that did not happen.
		b.obs.Narrative = ""
		b.narrate("It failed: "+clip(firstLine(msg), 160), b.promptContext(false))
		b.obs.Title = "Failed: " + b.obs.Title
		b.fact("error: " + firstLine(msg))
	}
	if dropped {
		b.fact("response of " + itoa(len(c.ToolResponse)) + " bytes not summarised")
	}
	return b.finish(), true
}

// failureOf reports whether a response is the canonical failure ({"error": "...", …}) and
// returns its message.
func failureOf(resp json.RawMessage) (string, bool) {
	if len(resp) == 0 || resp[0] != '{' || !bytes.Contains(resp, []byte(`"error"`)) {
		return "", false
	}
	var f struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(resp, &f) != nil || f.Error == nil || strings.TrimSpace(*f.Error) == "" {
		return "", false
	}
	return strings.TrimSpace(*f.Error), true
}

// findStringField finds `key: "value"` in raw JSON without decoding it: a cheap scan for a
// key outside string values (a quote preceded by a backslash is inside a string).
func findStringField(raw []byte, key string) (string, bool) {
	from := 0
	for from < len(raw) {
		i := bytes.Index(raw[from:], []byte(key))
		if i < 0 {
			return "", false
		}
		i += from
		from = i + len(key)
		if i > 0 && raw[i-1] == '\\' {
			continue
		}
		rest := bytes.TrimLeft(raw[from:min(len(raw), from+4096)], " \t\r\n:")
		if len(rest) == 0 || rest[0] != '"' {
			continue
		}
		for j := 1; j < len(rest); j++ {
			if rest[j] == '\\' {
				j++
				continue
			}
			if rest[j] == '"' {
				if p, ok := rawString(json.RawMessage(rest[:j+1])); ok && p != "" {
					return p, true
				}
				break
			}
		}
	}
	return "", false
}

// oversized describes a call whose input is too large to decode, from the file path that
// a cheap scan of its head finds.
func (b *builder) oversized(name string) ai.Observation {
	b.obs.Title = name
	in := b.call.ToolInput
	for _, key := range [...]string{`"file_path"`, `"notebook_path"`, `"path"`} {
		p, ok := findStringField(in, key)
		if !ok {
			continue
		}
		b.obs.Title = name + " " + b.rel(p)
		switch toolKind(name) {
		case kindEdit, kindWrite, kindNotebook:
			b.modified(p)
			b.obs.Type = memory.TypeChange
		default:
			b.read(p)
		}
		break
	}
	b.fact("input of " + itoa(len(b.call.ToolInput)) + " bytes, too large to summarise")
	return b.finish()
}

type toolKindID int

const (
	kindUnknown toolKindID = iota
	kindSkip
	kindRead
	kindEdit
	kindWrite
	kindBash
	kindGrep
	kindGlob
	kindLS
	kindWebFetch
	kindWebSearch
	kindTask
	kindNotebook
	kindMCP
)

// toolKinds maps the lower-cased canonical tool names (Claude Code's; an adapter maps its
// agent's tools onto them) to kinds.
var toolKinds = map[string]toolKindID{
	"read": kindRead, "notebookread": kindRead,
	"edit": kindEdit, "multiedit": kindEdit,
	"write":     kindWrite,
	"bash":      kindBash,
	"grep":      kindGrep,
	"glob":      kindGlob,
	"ls":        kindLS,
	"webfetch":  kindWebFetch,
	"websearch": kindWebSearch,
	"task":      kindTask, "agent": kindTask,
	"notebookedit": kindNotebook,
}

func toolKind(name string) toolKindID {
	if strings.HasPrefix(name, "mcp__") {
		server, _, _ := strings.Cut(name[len("mcp__"):], "__")
		if strings.Contains(strings.ToLower(server), "memnode") {
			return kindSkip
		}
		return kindMCP
	}
	if memory.Housekeeping(name) {
		return kindSkip
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return kindUnknown
	}
	return toolKinds[string(lowerInto(buf[:0], name))]
}

// decode unmarshals raw into v, ignoring errors: a malformed payload leaves v partly or
// wholly zero, which every handler tolerates.
func decode(raw json.RawMessage, v any) {
	if len(raw) == 0 || raw[0] == 'n' {
		return
	}
	_ = json.Unmarshal(raw, v)
}

// rawString returns raw as a string when it is a JSON string.
func rawString(raw json.RawMessage) (string, bool) {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	if i == len(raw) || raw[i] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// rawStringHead is rawString for display: a long string is decoded from its first n bytes
// only.
func rawStringHead(raw json.RawMessage, n int) (string, bool) {
	if len(raw) <= n || raw[0] != '"' {
		return rawString(raw)
	}
	head := raw[:n]
	// An escape is at most 6 bytes (\uXXXX): cut before a backslash in the last 6 bytes,
	// at the start of its run, since in "\\\\" only every other backslash starts an escape.
	tail := max(1, len(head)-6)
	if k := bytes.LastIndexByte(head[tail:], '\\'); k >= 0 {
		k += tail
		for k > 1 && head[k-1] == '\\' {
			k--
		}
		head = head[:k]
	}
	var s string
	if json.Unmarshal(append(head[:len(head):len(head)], '"'), &s) != nil {
		return "", false
	}
	return s, true
}
