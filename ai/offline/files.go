package offline

import (
	"encoding/json"
	"strings"

	"github.com/memnode/memnode/memory"
)

// fileInput covers the inputs of the file tools of Claude Code and other agents.
type fileInput struct {
	FilePath     string `json:"file_path"`
	Path         string `json:"path"`
	NotebookPath string `json:"notebook_path"`
	Offset       int    `json:"offset"`
	Limit        int    `json:"limit"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	ReplaceAll   bool   `json:"replace_all"`
	Content      string `json:"content"`
	Edits        []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	NewSource string `json:"new_source"`
	CellType  string `json:"cell_type"`
	EditMode  string `json:"edit_mode"`
	CellID    string `json:"cell_id"`
}

func (in *fileInput) path() string {
	for _, p := range [...]string{in.FilePath, in.NotebookPath, in.Path} {
		if p != "" {
			return p
		}
	}
	return ""
}

type patchHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// fileResponse covers Claude Code's Read, Edit, MultiEdit and Write responses.
type fileResponse struct {
	Type string `json:"type"`
	File struct {
		FilePath   string `json:"filePath"`
		Content    string `json:"content"`
		NumLines   int    `json:"numLines"`
		StartLine  int    `json:"startLine"`
		TotalLines int    `json:"totalLines"`
	} `json:"file"`
	FilePath        string      `json:"filePath"`
	OldString       string      `json:"oldString"`
	NewString       string      `json:"newString"`
	OriginalFile    string      `json:"originalFile"`
	Content         string      `json:"content"`
	StructuredPatch []patchHunk `json:"structuredPatch"`
	Output          string      `json:"output"`
}

func (b *builder) decodeFile() (fileInput, fileResponse) {
	var in fileInput
	var resp fileResponse
	decode(b.call.ToolInput, &in)
	if s, ok := rawString(b.call.ToolResponse); ok {
		resp.Content = s
	} else {
		decode(b.call.ToolResponse, &resp)
	}
	return in, resp
}

func (b *builder) readFile() bool {
	in, resp := b.decodeFile()
	path := in.path()
	if path == "" {
		path = resp.File.FilePath
	}
	if path == "" {
		return b.generic(b.call.ToolName, "")
	}
	rp := b.rel(path)
	b.read(path)
	b.cc.path(rp)
	l := langOf(path)
	content := resp.File.Content
	for _, alt := range [...]string{resp.Content, resp.Output} {
		if content == "" {
			content = alt
		}
	}
	b.obs.Type = memory.TypeDiscovery
	b.obs.Title = "Read " + rp
	switch resp.Type {
	case "image", "pdf", "notebook":
		b.obs.Title = "Read " + resp.Type + " " + rp
	}
	o := scanOutline(content, l)
	lines := resp.File.NumLines
	if lines == 0 {
		lines = o.lines
	}
	start := max(resp.File.StartLine, in.Offset, 1)
	total := resp.File.TotalLines
	partial := start > 1 || (total > 0 && lines > 0 && lines < total)
	size := ""
	switch {
	case partial && lines > 0:
		b.obs.Title += " (lines " + itoa(start) + "-" + itoa(start+lines-1) + ")"
		size = "lines " + itoa(start) + "-" + itoa(start+lines-1)
		if total > 0 {
			size += " of " + itoa(total)
		}
	case lines > 0:
		size = plural(lines, "line", "lines")
	}
	if size != "" {
		b.fact(size)
	}
	if len(o.names) > 0 {
		b.fact(o.label + ": " + joinClip(o.names, ", ", maxFact-len(o.label)-2))
		b.cc.scan(strings.Join(o.names[:min(len(o.names), 8)], " "))
	}
	for _, t := range o.todos {
		b.fact("note in file: " + t)
	}
	kind := langNames[l]
	switch {
	case size != "" && kind != "":
		b.obs.Subtitle = size + " of " + kind
	case size != "":
		b.obs.Subtitle = size
	default:
		b.obs.Subtitle = kind
	}
	// The title says what was read; the narrative says what it holds.
	what := b.obs.Subtitle
	if size == "" && kind != "" {
		what = "A " + kind + " file"
	}
	if len(o.names) > 0 {
		names := joinClip(o.names[:min(len(o.names), 5)], ", ", 160)
		if what == "" {
			what = capitalize(verbFor(o.label)) + " " + names
		} else {
			what += ", which " + verbFor(o.label) + " " + names
		}
	}
	b.narrate(what, b.promptContext(false))
	return true
}

func verbFor(label string) string {
	switch label {
	case "sections":
		return "has sections"
	case "keys":
		return "sets"
	}
	return "defines"
}

// editText returns the old and new text of an Edit or MultiEdit call.
func editText(in *fileInput, resp *fileResponse) (oldS, newS string, edits int) {
	oldS, newS = in.OldString, in.NewString
	edits = 1
	if len(in.Edits) > 0 {
		var o, n strings.Builder
		for i, e := range in.Edits {
			if i > 0 {
				o.WriteByte('\n')
				n.WriteByte('\n')
			}
			o.WriteString(e.OldString)
			n.WriteString(e.NewString)
			if o.Len() > maxScanBytes || n.Len() > maxScanBytes {
				break
			}
		}
		oldS, newS, edits = o.String(), n.String(), len(in.Edits)
	}
	if oldS == "" && newS == "" {
		oldS, newS = resp.OldString, resp.NewString
	}
	if oldS == "" && newS == "" {
		// Only a patch: rebuild both sides from its -/+ lines.
		var o, n strings.Builder
		for _, h := range resp.StructuredPatch {
			for _, ln := range h.Lines {
				switch {
				case strings.HasPrefix(ln, "-"):
					o.WriteString(ln[1:])
					o.WriteByte('\n')
				case strings.HasPrefix(ln, "+"):
					n.WriteString(ln[1:])
					n.WriteByte('\n')
				}
			}
			if o.Len() > maxScanBytes || n.Len() > maxScanBytes {
				break
			}
		}
		oldS, newS = o.String(), n.String()
	}
	return oldS, newS, edits
}

func (b *builder) editFile() bool {
	in, resp := b.decodeFile()
	path := in.path()
	if path == "" {
		path = resp.FilePath
	}
	if path == "" {
		return b.generic(b.call.ToolName, "")
	}
	rp := b.rel(path)
	b.modified(path)
	l := langOf(path)
	oldS, newS, edits := editText(&in, &resp)
	d := analyzeEdit(oldS, newS, l)

	where := ""
	if resp.OriginalFile != "" && oldS != "" {
		probe := oldS
		if len(probe) > 256 {
			probe = probe[:256]
		}
		if i := strings.Index(resp.OriginalFile, probe); i >= 0 {
			// From the end of the edit's first line, so that an edit of a declaration line
			// names that declaration.
			end := i + len(probe)
			if nl := strings.IndexByte(probe, '\n'); nl >= 0 {
				end = i + nl
			}
			where = enclosingDecl(resp.OriginalFile, end)
		}
	}
	b.obs.Type = b.modType(l, &d, false)
	what := d.headline()
	if !isCode(l) {
		if rest, ok := strings.CutPrefix(what, "rename "); ok {
			what = "change " + rest
		}
	}
	b.obs.Title = fileTitle("Edit", rp, what)

	b.obs.Subtitle = rp + " +" + itoa(d.added) + " −" + itoa(d.removed)
	if len(resp.StructuredPatch) > 0 && resp.StructuredPatch[0].NewStart > 0 {
		b.obs.Subtitle += " at line " + itoa(resp.StructuredPatch[0].NewStart)
	}
	if where != "" {
		b.obs.Subtitle += " in " + where
	}
	if edits > 1 {
		b.fact(itoa(edits) + " edits")
	}
	if in.ReplaceAll {
		b.fact("replaces every occurrence")
	}
	d.facts(b, what)

	b.cc.path(rp)
	b.cc.scan(strings.Join(d.newIdents, " "))
	b.cc.scan(newS)

	s1 := "Edited " + rp
	if where != "" {
		s1 += " (" + where + ")"
	}
	if what != "" {
		s1 += " to " + what
	}
	s2 := ""
	if len(d.pairs) > 0 {
		s2 = "`" + clip(d.pairs[0][0], 80) + "` became `" + clip(d.pairs[0][1], 80) + "`"
	}
	if d.comment != "" {
		if s2 != "" {
			s2 += ". "
		}
		s2 += "New comment: " + clip(d.comment, 120)
	}
	if len(d.outcomes) > 0 && !strings.Contains(what, d.outcomes[0]) && !strings.Contains(what, strings.TrimPrefix(d.outcomes[0], "returns ")) {
		if s2 != "" {
			s2 += " and it now " + d.outcomes[0]
		} else {
			s2 = "It now " + d.outcomes[0]
		}
	}
	b.narrate(s1, s2, b.promptContext(true))
	return true
}

// fileTitle is "Verb path: what", shortening the path to its base name when too long.
func fileTitle(verb, rp, what string) string {
	if what == "" {
		return verb + " " + rp
	}
	t := verb + " " + rp + ": " + what
	if len(t) > maxTitle {
		t = verb + " " + baseName(rp) + ": " + what
	}
	return t
}

// headline says in a few words what an edit does.
func (d *editDiff) headline() string {
	switch {
	case len(d.addedDecls) > 0:
		return "add " + joinClip(d.addedDecls, ", ", 40)
	case len(d.condIdents) > 0:
		return "handle " + d.condIdents[0]
	case len(d.conditions) > 0:
		c := d.conditions[0]
		for _, kw := range [...]string{"if ", "else if ", "elif ", "unless ", "guard "} {
			c = strings.TrimPrefix(c, kw)
		}
		return "check " + clip(c, 50)
	case len(d.outcomes) > 0:
		o := d.outcomes[0]
		for _, v := range [...][2]string{{"returns", "return"}, {"raises", "raise"}, {"responds", "respond"}, {"panics", "panic"}} {
			if strings.HasPrefix(o, v[0]) {
				return v[1] + o[len(v[0]):]
			}
		}
		return o
	}
	if len(d.pairs) == 1 {
		p := d.pairs[0]
		if from, to, ok := renamed(p[0], p[1]); ok {
			verb := "rename "
			if !isIdentStart(from[0]) || !isIdentStart(to[0]) {
				verb = "change "
			}
			return verb + clip(from, 30) + " → " + clip(to, 30)
		}
		if len(p[0]) <= 28 && len(p[1]) <= 28 {
			return "`" + p[0] + "` → `" + p[1] + "`"
		}
	}
	switch {
	case len(d.removedDecls) > 0:
		return "remove " + joinClip(d.removedDecls, ", ", 40)
	case len(d.newIdents) > 0:
		return "use " + d.newIdents[0]
	case d.added == 0 && d.removed > 0:
		return "remove `" + clip(d.removedLines[0], 40) + "`"
	case len(d.addedLines) > 0 && d.removed == 0:
		return "add `" + clip(d.addedLines[0], 40) + "`"
	case d.comment != "" && d.removed == 0: // only comments were added
		return "add comment `" + clip(d.comment, 40) + "`"
	case d.added > 0:
		return "update " + plural(d.added, "line", "lines")
	}
	return ""
}

// facts lists the change: paired before → after lines, new checks, outcomes, new names.
func (d *editDiff) facts(b *builder, headline string) {
	for _, p := range d.pairs {
		b.fact("`" + clip(p[0], 95) + "` → `" + clip(p[1], 95) + "`")
	}
	if len(d.addedDecls) > 0 {
		b.fact("adds " + joinClip(d.addedDecls, ", ", 180))
	}
	for i, c := range d.conditions {
		if i == 2 {
			break
		}
		b.fact("adds check `" + c + "`")
	}
	for _, o := range d.outcomes {
		b.fact(o)
	}
	if d.comment != "" {
		b.fact("comment: " + d.comment)
	}
	var uses []string
	for _, id := range d.newIdents {
		if !strings.Contains(headline, id) {
			uses = append(uses, id)
		}
	}
	if len(uses) > 0 {
		b.fact("uses " + joinClip(uses, ", ", 180))
	}
	if len(d.removedDecls) > 0 {
		b.fact("removes " + joinClip(d.removedDecls, ", ", 180))
	}
	if len(d.pairs) == 0 {
		for i, r := range d.removedLines {
			if i == 2 {
				break
			}
			b.fact("removes `" + clip(r, 180) + "`")
		}
	}
	shown := 0
	for _, a := range d.addedLines {
		if shown == 2 || len(b.obs.Facts) >= maxFacts-1 {
			break
		}
		if isPaired(d.pairs, a) {
			continue
		}
		if _, ok := condition(a); ok {
			continue
		}
		if strings.HasPrefix(a, "return") || strings.HasPrefix(a, "raise") || strings.HasPrefix(a, "throw") {
			continue
		}
		if _, ok := declName(a); ok {
			continue
		}
		b.fact("adds `" + clip(a, 180) + "`")
		shown++
	}
}

func isPaired(pairs [][2]string, line string) bool {
	for _, p := range pairs {
		if p[1] == line {
			return true
		}
	}
	return false
}

func (b *builder) writeFile() bool {
	in, resp := b.decodeFile()
	path := in.path()
	if path == "" {
		path = resp.FilePath
	}
	if path == "" {
		return b.generic(b.call.ToolName, "")
	}
	rp := b.rel(path)
	b.modified(path)
	b.cc.path(rp)
	l := langOf(path)
	content := in.Content
	if content == "" {
		content = resp.Content
	}
	o := scanOutline(content, l)
	if len(o.names) > 0 {
		b.cc.scan(strings.Join(o.names[:min(len(o.names), 8)], " "))
	}
	b.cc.scan(content)
	created := resp.Type == "create"
	if resp.Type == "update" && resp.OriginalFile != "" {
		d := analyzeEdit(resp.OriginalFile, content, l)
		b.obs.Type = b.modType(l, &d, false)
		what := d.headline()
		b.obs.Title = fileTitle("Rewrite", rp, what)
		b.obs.Subtitle = rp + " +" + itoa(d.added) + " −" + itoa(d.removed)
		d.facts(b, what)
		b.fact("now " + plural(o.lines, "line", "lines"))
		s1 := "Rewrote " + rp
		if what != "" {
			s1 += " to " + what
		}
		b.narrate(s1, b.promptContext(true))
		return true
	}
	d := editDiff{addedDecls: o.names}
	b.obs.Type = b.modType(l, &d, created)
	verb := "Write"
	if created {
		verb = "Create"
	}
	what := ""
	if len(o.names) > 0 {
		what = joinClip(o.names, ", ", 40)
	}
	b.obs.Title = fileTitle(verb, rp, what)
	size := plural(o.lines, "line", "lines")
	if created {
		b.fact("new file, " + size)
	} else {
		b.fact(size)
	}
	if len(o.names) > 0 {
		b.fact(o.label + ": " + joinClip(o.names, ", ", maxFact-len(o.label)-2))
	}
	for _, t := range o.todos {
		b.fact("note in file: " + t)
	}
	b.obs.Subtitle = size
	if k := langNames[l]; k != "" {
		b.obs.Subtitle += " of " + k
	}
	s1 := verb + "d " + rp
	if verb == "Write" {
		s1 = "Wrote " + rp
	}
	if len(o.names) > 0 {
		s1 += ", which " + verbFor(o.label) + " " + joinClip(o.names[:min(len(o.names), 5)], ", ", 160)
	}
	b.narrate(s1, b.promptContext(true))
	return true
}

func (b *builder) notebookEdit() bool {
	in, _ := b.decodeFile()
	path := in.path()
	if path == "" {
		return b.generic(b.call.ToolName, "")
	}
	rp := b.rel(path)
	b.modified(path)
	b.cc.path(rp)
	b.cc.scan(in.NewSource)
	mode := in.EditMode
	if mode == "" {
		mode = "replace"
	}
	cell := in.CellType
	if cell == "" {
		cell = "cell"
	} else {
		cell += " cell"
	}
	d := analyzeEdit("", in.NewSource, langPython)
	b.obs.Type = b.modType(langPython, &d, false)
	what := mode + " " + cell
	if len(d.addedDecls) > 0 {
		what += " defining " + joinClip(d.addedDecls, ", ", 30)
	}
	b.obs.Title = fileTitle("Edit notebook", rp, what)
	if in.CellID != "" {
		b.fact("cell " + in.CellID)
	}
	if mode != "delete" {
		if first := firstLine(in.NewSource); first != "" {
			b.fact("source starts `" + clip(first, 150) + "`")
		}
		b.fact(plural(len(splitCodeLines(in.NewSource)), "line", "lines"))
	}
	b.narrate("Edited notebook "+rp+": "+what, b.promptContext(true))
	return true
}

// jsonText extracts readable text from an arbitrary JSON value: strings as they are,
// MCP-style content arrays as their text, other objects as "key: value" pairs.
func jsonText(raw json.RawMessage, limit int) string {
	if len(raw) == 0 {
		return ""
	}
	if s, ok := rawString(raw); ok {
		return s
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var b strings.Builder
	walkText(v, &b, limit, 0)
	return b.String()
}

var textKeys = [...]string{"text", "content", "result", "output", "stdout", "message", "error", "data", "results", "items", "summary"}

func walkText(v any, b *strings.Builder, limit, depth int) {
	if b.Len() >= limit || depth > 5 {
		return
	}
	switch x := v.(type) {
	case string:
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if len(x) > limit-b.Len() {
			x = x[:limit-b.Len()]
		}
		b.WriteString(x)
	case []any:
		for _, e := range x {
			walkText(e, b, limit, depth+1)
		}
	case map[string]any:
		for _, k := range textKeys {
			if e, ok := x[k]; ok {
				walkText(e, b, limit, depth+1)
				return
			}
		}
		for _, k := range sortedKeys(x) {
			if b.Len() >= limit {
				return
			}
			switch e := x[k].(type) {
			case string, float64, bool:
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(k + ": " + clip(scalarString(e), 120))
			}
		}
	case float64, bool:
		b.WriteString(scalarString(x))
	}
}
