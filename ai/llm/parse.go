package llm

import (
	"fmt"
	"html"
	"strings"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

// Bounds on what a parsed answer may contain, so a runaway model cannot bloat the database.
const (
	maxTitle     = 200
	maxField     = 4000
	maxListItems = 50
	maxListItem  = 500
	maxBlocks    = 100
)

// ParseObservations extracts <observation> blocks from a model answer. It tolerates prose
// around the XML, a last block cut off by the output limit, missing fields, CDATA, entities
// and bullet lists instead of child tags. An empty answer means "skip" (nil, nil). A non-empty
// answer with no observation in it returns ErrBadOutput.
func ParseObservations(text string) ([]ai.Observation, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	low := asciiLower(text)
	blocks := findBlocks(text, low, "observation")
	if len(blocks) == 0 {
		// A bare block without the wrapper still says what the model meant.
		if strings.Contains(low, "<title>") || strings.Contains(low, "<narrative>") {
			blocks = []span{{0, len(text)}}
		} else {
			return nil, fmt.Errorf("parse observations: %w: no <observation> block", ErrBadOutput)
		}
	}
	var out []ai.Observation
	for _, b := range blocks {
		body, lb := text[b.start:b.end], low[b.start:b.end]
		o := ai.Observation{
			Type:          normalizeType(field(body, lb, "type", 32)),
			Title:         field(body, lb, "title", maxTitle),
			Subtitle:      field(body, lb, "subtitle", maxTitle*2),
			Narrative:     field(body, lb, "narrative", maxField),
			Facts:         list(body, lb, "facts", "fact"),
			Concepts:      list(body, lb, "concepts", "concept"),
			FilesRead:     list(body, lb, "files_read", "file"),
			FilesModified: list(body, lb, "files_modified", "file"),
		}
		if o.Title == "" {
			switch {
			case o.Subtitle != "":
				o.Title = firstLine(o.Subtitle)
			case o.Narrative != "":
				o.Title = firstLine(o.Narrative)
			case len(o.Facts) > 0:
				o.Title = firstLine(o.Facts[0])
			default:
				continue // nothing usable in this block
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// ParseSummary extracts the <summary> block from a model answer. An empty answer returns
// ErrEmptyAnswer; an answer without any summary field returns ErrBadOutput.
func ParseSummary(text string) (ai.Summary, error) {
	if strings.TrimSpace(text) == "" {
		return ai.Summary{}, fmt.Errorf("parse summary: %w", ErrEmptyAnswer)
	}
	low := asciiLower(text)
	body, lb := text, low
	if bs := findBlocks(text, low, "summary"); len(bs) > 0 {
		body, lb = text[bs[0].start:bs[0].end], low[bs[0].start:bs[0].end]
	}
	s := ai.Summary{
		Request:      field(body, lb, "request", maxField),
		Investigated: field(body, lb, "investigated", maxField),
		Learned:      field(body, lb, "learned", maxField),
		Completed:    field(body, lb, "completed", maxField),
		NextSteps:    field(body, lb, "next_steps", maxField),
		Notes:        field(body, lb, "notes", maxField),
	}
	if s == (ai.Summary{}) {
		return s, fmt.Errorf("parse summary: %w: no summary fields", ErrBadOutput)
	}
	return s, nil
}

type span struct{ start, end int }

// findBlocks returns the inner spans of <tag ...>…</tag>. A block without its closing tag
// ends where the next block starts or at the end of the text (an answer cut by max tokens).
func findBlocks(text, low, tag string) []span {
	open, closing := "<"+tag, "</"+tag+">"
	var out []span
	i := 0
	for len(out) < maxBlocks {
		j := indexOpen(low, open, i)
		if j < 0 {
			break
		}
		gt := strings.IndexByte(low[j:], '>')
		if gt < 0 {
			break
		}
		start := j + gt + 1
		end := len(text)
		next := len(text)
		if k := strings.Index(low[start:], closing); k >= 0 {
			end = start + k
			next = end + len(closing)
		}
		if k := indexOpen(low[:end], open, start); k >= 0 {
			end, next = k, k
		}
		out = append(out, span{start, end})
		i = next
	}
	return out
}

// indexOpen finds "<tag" followed by '>', '/', or whitespace, so "<observation" does not
// match "<observations".
func indexOpen(low, open string, from int) int {
	for from <= len(low) {
		k := strings.Index(low[from:], open)
		if k < 0 {
			return -1
		}
		p := from + k + len(open)
		if p >= len(low) || strings.IndexByte(">/ \t\r\n", low[p]) >= 0 {
			return from + k
		}
		from = p
	}
	return -1
}

// field returns the cleaned inner text of the first <tag>, or "".
func field(body, low, tag string, limit int) string {
	bs := findBlocks(body, low, tag)
	if len(bs) == 0 {
		return ""
	}
	inner := body[bs[0].start:bs[0].end]
	// An unclosed field runs until the next tag starts.
	if !strings.Contains(low[bs[0].start:], "</"+tag+">") {
		if k := strings.IndexByte(inner, '<'); k >= 0 && !strings.HasPrefix(inner[k:], "<![CDATA[") {
			inner = inner[:k]
		}
	}
	return clean(inner, limit)
}

// list returns the items of <outer><item>…</item></outer>, or its lines when the model
// wrote a bullet list instead of child tags.
func list(body, low, outer, item string) []string {
	bs := findBlocks(body, low, outer)
	if len(bs) == 0 {
		return nil
	}
	inner, innerLow := body[bs[0].start:bs[0].end], low[bs[0].start:bs[0].end]
	var out []string
	add := func(s string) {
		if s = clean(s, maxListItem); s != "" && len(out) < maxListItems {
			out = append(out, s)
		}
	}
	if items := findBlocks(inner, innerLow, item); len(items) > 0 {
		for _, it := range items {
			add(inner[it.start:it.end])
		}
		return out
	}
	if strings.Contains(inner, "<") && !strings.Contains(inner, "<![CDATA[") {
		inner = inner[:strings.IndexByte(inner, '<')]
	}
	for _, line := range strings.Split(inner, "\n") {
		add(strings.TrimLeft(strings.TrimSpace(line), "-*•· \t"))
	}
	return out
}

var cdata = strings.NewReplacer("<![CDATA[", "", "]]>", "")

func clean(s string, limit int) string {
	s = strings.TrimSpace(html.UnescapeString(cdata.Replace(s)))
	return truncate(s, limit)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(strings.TrimSpace(s), 80)
}

func normalizeType(t string) string {
	switch t = strings.ToLower(strings.TrimSpace(t)); t {
	case memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor, memory.TypeChange, memory.TypeDiscovery, memory.TypeDecision:
		return t
	case "bug", "fix", "bug-fix", "bug_fix":
		return memory.TypeBugfix
	}
	return memory.TypeChange
}

// asciiLower lowercases ASCII only, so byte offsets in the result match the input.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
