package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/memnode/memnode/ai"
)

// Bounds of an offline summary.
const (
	maxSummaryField = 700
	maxRequest      = 500
	maxMessageScan  = 64 << 10
)

// Summary sections, as named by headings, labels or cue words.
const (
	secNone         = ""
	secInvestigated = "investigated"
	secLearned      = "learned"
	secCompleted    = "completed"
	secNext         = "next"
	secNotes        = "notes"
)

// mdUnit is a paragraph, list item or table row of markdown, as plain text.
type mdUnit struct {
	text    string
	section string // from the nearest heading or "Label:" line above
	todo    bool   // an unchecked "- [ ]" item
}

// sectionOf maps a heading or label ("Root cause", "Next steps") to a section.
func sectionOf(label string) string {
	l := strings.ToLower(strings.Trim(strings.TrimSpace(label), "*_:#` "))
	switch {
	case l == "":
		return secNone
	case strings.HasPrefix(l, "next"), strings.HasPrefix(l, "todo"), strings.HasPrefix(l, "follow"),
		strings.HasPrefix(l, "remaining"), strings.HasPrefix(l, "open question"), strings.HasPrefix(l, "future"),
		strings.HasPrefix(l, "recommend"), strings.HasPrefix(l, "suggest"), strings.HasPrefix(l, "to do"):
		return secNext
	case strings.Contains(l, "cause"), strings.HasPrefix(l, "why"), strings.HasPrefix(l, "problem"),
		strings.HasPrefix(l, "finding"), strings.HasPrefix(l, "learn"), strings.HasPrefix(l, "diagnos"),
		strings.HasPrefix(l, "analysis"), strings.HasPrefix(l, "explanation"), strings.HasPrefix(l, "issue"):
		return secLearned
	case strings.HasPrefix(l, "fix"), strings.HasPrefix(l, "done"), strings.HasPrefix(l, "change"),
		strings.HasPrefix(l, "complete"), strings.HasPrefix(l, "result"), strings.HasPrefix(l, "what i did"),
		strings.HasPrefix(l, "what changed"), strings.HasPrefix(l, "summary"), strings.HasPrefix(l, "implemented"),
		strings.HasPrefix(l, "solution"), strings.HasPrefix(l, "verification"), strings.HasPrefix(l, "tests"),
		strings.HasPrefix(l, "resolved"):
		return secCompleted
	case strings.HasPrefix(l, "note"), strings.HasPrefix(l, "caveat"), strings.HasPrefix(l, "warning"),
		strings.HasPrefix(l, "limitation"), strings.HasPrefix(l, "known issue"):
		return secNotes
	case strings.HasPrefix(l, "investigat"), strings.HasPrefix(l, "explored"), strings.HasPrefix(l, "checked"):
		return secInvestigated
	}
	return secNone
}

// markdownUnits turns markdown into plain-text units: fenced code is dropped, headings and
// "Label:" lines set the section of what follows, each list item is its own unit, and
// inline markup (emphasis, code spans, links) is reduced to its text.
func markdownUnits(s string) []mdUnit {
	if len(s) > maxMessageScan {
		s = s[:maxMessageScan]
	}
	var units []mdUnit
	var para strings.Builder
	section := secNone
	flush := func() {
		if para.Len() > 0 {
			if t := inlineText(para.String()); t != "" {
				units = append(units, mdUnit{text: t, section: section})
			}
			para.Reset()
		}
	}
	fence := ""
	for len(s) > 0 {
		var line string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			line, s = s, ""
		}
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			flush()
			fence = t[:3]
			continue
		case t == "", strings.HasPrefix(t, "---") && strings.Trim(t, "-") == "", strings.HasPrefix(t, "|-"), strings.HasPrefix(t, "| -"):
			flush()
			continue
		case t[0] == '#':
			flush()
			section = sectionOf(strings.TrimLeft(t, "# "))
			continue
		case t[0] == '>':
			if t = strings.TrimLeft(t, "> "); t == "" {
				flush()
				continue
			}
		}
		// A short line that is only a label ("**Root cause:**", "Next steps:") is a heading.
		if label := strings.Trim(t, "*_ "); len(label) <= 40 && strings.HasSuffix(label, ":") && !strings.Contains(label[:len(label)-1], ":") {
			if sec := sectionOf(label); sec != secNone {
				flush()
				section = sec
				continue
			}
		}
		if item, todo, ok := listItem(t); ok {
			flush()
			if it := inlineText(item); it != "" {
				units = append(units, mdUnit{text: it, section: section, todo: todo})
			}
			continue
		}
		if t[0] == '|' {
			flush()
			cells := strings.FieldsFunc(t, func(r rune) bool { return r == '|' })
			var keep []string
			for _, c := range cells {
				if c = strings.TrimSpace(c); c != "" {
					keep = append(keep, c)
				}
			}
			if row := inlineText(strings.Join(keep, ", ")); row != "" {
				units = append(units, mdUnit{text: row, section: section})
			}
			continue
		}
		if para.Len() > 0 {
			para.WriteByte(' ')
		}
		para.WriteString(t)
	}
	flush()
	return units
}

// listItem strips a bullet, number or checkbox from a list line.
func listItem(t string) (item string, todo, ok bool) {
	switch {
	case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ':
		t = t[2:]
		ok = true
	case strings.HasPrefix(t, "• "):
		t = t[len("• "):]
		ok = true
	default:
		i := 0
		for i < len(t) && i < 4 && isDigit(t[i]) {
			i++
		}
		if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
			t = t[i+2:]
			ok = true
		}
	}
	if !ok {
		return "", false, false
	}
	t = strings.TrimSpace(t)
	switch {
	case strings.HasPrefix(t, "[ ] "):
		return t[4:], true, true
	case strings.HasPrefix(t, "[x] "), strings.HasPrefix(t, "[X] "):
		return t[4:], false, true
	}
	return t, false, true
}

// inlineText removes emphasis markers, code-span backticks and link targets.
func inlineText(s string) string {
	if strings.ContainsAny(s, "*_`[") {
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch c {
			case '*', '`':
				continue
			case '_':
				// Keep snake_case; drop __emphasis__ markers.
				if i+1 < len(s) && s[i+1] == '_' {
					i++
					continue
				}
			case '[':
				// [text](url) → text
				if j := strings.IndexByte(s[i:], ']'); j > 0 && i+j+1 < len(s) && s[i+j+1] == '(' {
					if k := strings.IndexByte(s[i+j:], ')'); k > 0 {
						b.WriteString(s[i+1 : i+j])
						i = i + j + k
						continue
					}
				}
			}
			b.WriteByte(c)
		}
		s = b.String()
	}
	return clip(s, 1000)
}

// sentence labels such as "Fixed:" or "Next:" that open a sentence.
var sentenceLabels = []struct {
	prefix  string
	section string
}{
	{"next steps:", secNext}, {"next step:", secNext}, {"next:", secNext}, {"todo:", secNext},
	{"follow-up:", secNext}, {"follow up:", secNext}, {"remaining:", secNext},
	{"root cause:", secLearned}, {"cause:", secLearned}, {"why:", secLearned},
	{"problem:", secLearned}, {"the problem:", secLearned}, {"finding:", secLearned},
	{"learned:", secLearned}, {"the issue:", secLearned}, {"issue:", secLearned},
	{"fixed:", secCompleted}, {"fix:", secCompleted}, {"done:", secCompleted},
	{"changes:", secCompleted}, {"changed:", secCompleted}, {"result:", secCompleted},
	{"summary:", secCompleted}, {"completed:", secCompleted},
	{"note:", secNotes}, {"notes:", secNotes}, {"caveat:", secNotes}, {"warning:", secNotes},
}

// stripLabel removes a leading "Label:" and reports the section it names.
func stripLabel(s string) (string, string) {
	if len(s) < 4 {
		return s, secNone
	}
	head := strings.ToLower(s[:min(len(s), 16)])
	for _, l := range sentenceLabels {
		if strings.HasPrefix(head, l.prefix) {
			return capitalize(strings.TrimSpace(s[len(l.prefix):])), l.section
		}
	}
	return s, secNone
}

func hasAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// cueText is s lower-cased with punctuation turned into spaces and padded, so that cue
// words can be matched as " word ".
func cueText(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, ' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUpper(c):
			c += 'a' - 'A'
		case strings.IndexByte(".,;:!?()[]{}\"'`*", c) >= 0:
			c = ' '
		}
		b = append(b, c)
	}
	return string(append(b, ' '))
}

// classify assigns a sentence to a summary section by its label, its unit's section and its
// cue words. The order matters: explicit next steps, then causes, then soft next-step cues,
// then what was completed.
func classify(s, label, unitSection string, todo bool) string {
	ls := cueText(s)
	switch label {
	case secNext, secNotes, secLearned, secInvestigated:
		return label
	}
	if unitSection == secNext || todo ||
		hasAny(ls[:min(len(ls), 24)], " next,", " next ", " todo", " follow-up", " remaining", " later,", " still need", " consider ", " you may want", " you might want", " you should", " we should", " would you like", " want me to", " shall i", " should i") {
		return secNext
	}
	causal := hasAny(ls, " because ", " caused ", " causes ", " causing ", " due to ", "root cause",
		" the reason ", " which meant ", " which means ", " turned out", " turns out", " led to ",
		" leads to ", " resulted in ", " results in ", "the problem was", "the issue was", "the bug was",
		" ignored ", " ignores ", " ignoring ", " was missing", " were missing", " never ", " produced ",
		" triggered ", " happens when ", " happened when ", " whenever ", " was nil", " nil pointer",
		" null pointer", " nil-pointer", " null-pointer", " instead of ", " swallowed ", " silently ") ||
		(strings.Contains(ls, " so ") && !hasAny(ls, " so that ", " so far ", " and so on "))
	if label == secLearned || unitSection == secLearned || causal {
		return secLearned
	}
	if hasAny(ls, " should ", " needs to ", " need to ", " will need", " left to ", " not yet ",
		" could also ", " recommend", " follow-up", " todo ", " pending ", " out of scope") {
		return secNext
	}
	if label == secCompleted || unitSection == secCompleted || hasAny(ls, " fixed", " added ", " implemented",
		" updated ", " created ", " removed ", " deleted ", " refactored ", " renamed ", " moved ",
		" replaced ", " wrote ", " now ", " pass ", " passes ", " passed ", " passing ", " done",
		" completed ", " resolved ", " changed ", " covers ", " works ", " introduced ", " switched ",
		" handled ", " handles ", " verified ", " committed ", " merged ", " green", " succeeds", " return ", " returns ") {
		return secCompleted
	}
	if label == secNotes || unitSection == secNotes {
		return secNotes
	}
	if unitSection == secInvestigated || hasAny(ls, " i read ", " i looked", " i checked", " i traced",
		" i searched", " investigated ", " inspected ", " reviewed ", " explored ", " looked at ") {
		return secInvestigated
	}
	if hasAny(ls, " found ", " discovered ", " noticed ", " learned ", " relies on ", " is configured ",
		" expects ", " requires ", " uses ") {
		return secLearned
	}
	return secNotes
}

// endSentence adds a period unless s already ends a sentence.
func endSentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// filler is a sentence that carries nothing for the next session.
func filler(s string) bool {
	ls := strings.ToLower(s)
	for _, p := range [...]string{"let me know", "i hope", "feel free", "happy to", "hope this",
		"i'll start", "i will start", "let me ", "i'll now", "i'm going to", "now i'll", "okay", "ok,", "great", "sure", "perfect"} {
		if strings.HasPrefix(ls, p) {
			return true
		}
	}
	return len(s) < 4
}

// Summarize implements ai.Compressor: the sentences of the last assistant message are sorted
// into learned / completed / next steps / notes by labels, headings and cue words; what was
// investigated and changed comes from the session's observations.
func (*Compressor) Summarize(ctx context.Context, in ai.SessionInput) (ai.Summary, ai.Usage, error) {
	usage := ai.Usage{Model: Model}
	if err := ctx.Err(); err != nil {
		return ai.Summary{}, usage, fmt.Errorf("summarize session: %w", err)
	}
	return summarize(in), usage, nil
}

func summarize(in ai.SessionInput) ai.Summary {
	var sum ai.Summary
	sum.Request = clip(in.Request, maxRequest)

	buckets := map[string][]string{}
	for _, u := range markdownUnits(in.LastAssistantMessage) {
		for _, s := range splitSentences(u.text, nil) {
			s, label := stripLabel(s)
			if filler(s) {
				continue
			}
			sec := classify(s, label, u.section, u.todo)
			buckets[sec] = append(buckets[sec], clip(s, 300))
		}
	}

	// From the observations: what was looked at, what changed, how the last test run went.
	var read, searched, modified []string
	lastTest := ""
	for i := range in.Observations {
		o := &in.Observations[i]
		if strings.HasPrefix(o.Title, "Failed: ") {
			continue // a failed call read or changed nothing
		}
		switch {
		case strings.HasPrefix(o.Title, "Search ") || strings.HasPrefix(o.Title, "Find files ") ||
			strings.HasPrefix(o.Title, "Web search: ") || strings.HasPrefix(o.Title, "Fetch "):
			searched = appendUnique(searched, o.Title)
		case strings.HasPrefix(o.Title, "Tests "):
			lastTest = o.Title
		case len(o.FilesModified) == 0:
			for _, f := range o.FilesRead {
				read = appendUnique(read, f)
			}
		}
		for _, f := range o.FilesModified {
			modified = appendUnique(modified, f)
		}
	}

	var inv []string
	if len(read) > 0 {
		inv = append(inv, "Read "+joinClip(read, ", ", 300)+".")
	}
	for i, s := range searched {
		if i == 4 {
			break
		}
		inv = append(inv, endSentence(s))
	}
	inv = append(inv, buckets[secInvestigated]...)
	sum.Investigated = joinClip(inv, " ", maxSummaryField)

	sum.Learned = joinClip(buckets[secLearned], " ", maxSummaryField)

	done := buckets[secCompleted]
	doneText := strings.ToLower(strings.Join(done, " "))
	var unmentioned []string
	for _, f := range modified {
		if !strings.Contains(doneText, strings.ToLower(baseName(f))) {
			unmentioned = append(unmentioned, f)
		}
	}
	if len(unmentioned) > 0 {
		done = append(done, "Modified "+joinClip(unmentioned, ", ", 300)+".")
	}
	if strings.HasPrefix(lastTest, "Tests pass") && !strings.Contains(doneText, "pass") {
		done = append(done, endSentence(lastTest))
	}
	sum.Completed = joinClip(done, " ", maxSummaryField)

	sum.NextSteps = joinClip(buckets[secNext], " ", maxSummaryField)

	notes := buckets[secNotes]
	if len(notes) > 3 {
		notes = notes[:3]
	}
	if strings.HasPrefix(lastTest, "Tests fail") {
		notes = append(notes, endSentence("Last test run failed: "+strings.TrimPrefix(lastTest, "Tests fail: ")))
	}
	sum.Notes = joinClip(notes, " ", maxSummaryField)
	return sum
}
