package privacy

import "strings"

// memoryTags are the tags whose content is never stored. Names are lower case; matching
// folds ASCII case.
var memoryTags = [...]string{
	"private",
	ContextTag,
	"claude-mem-context",
	"system-reminder",
	"system_instruction",
	"system-instruction",
	"persisted-output",
}

// maxStripPasses bounds how often StripTags rescans its own output. A second pass is needed
// when removing a region joins its neighbours into a new tag ("<pri<private>x</private>vate>");
// adversarial input can nest such splits, so after this many passes the rest of the text is
// dropped instead (fail safe, and keeps the work linear).
const maxStripPasses = 4

// StripTags removes every memory tag and its content (attributes allowed, multi-line,
// nested, an unclosed opening tag hides everything after it, a closing tag that closes
// nothing hides everything before it).
func StripTags(s string) string {
	var st tagState
	out, _ := st.strip(s)
	return out
}

// A tagState is what is still open at the end of the parts stripped so far, so that the
// parts of one record are stripped as one text (see CleanParts).
type tagState struct {
	depth [len(memoryTags)]int
	open  int // sum of depth: text is hidden while open > 0
}

// hideRest marks the state as open for good: the rest of the record is hidden.
func (st *tagState) hideRest() {
	st.depth[0]++
	st.open++
}

// strip removes the memory tags of s, the next part of a record, starting from and
// updating st. stray reports a closing tag that closed nothing: everything before it,
// earlier parts included, is private.
func (st *tagState) strip(s string) (out string, stray bool) {
	if st.open == 0 && strings.IndexByte(s, '<') < 0 {
		return s, false
	}
	out, changed, stray := st.stripPass(s)
	for pass := 1; changed; pass++ {
		if pass == maxStripPasses {
			st.hideRest()
			return cutAtFirstTag(out), stray
		}
		// Removing regions can join their neighbours into new tags ("<pri" + "vate>"):
		// rescan what is left, as a text of its own.
		var again tagState
		var s2 bool
		out, changed, s2 = again.stripPass(out)
		stray = stray || s2
		if again.open > 0 {
			st.hideRest()
		}
	}
	return out, stray
}

// stripPass makes one linear scan. It reports whether it saw any memory tag (or started
// hidden); when it did not, it returns s itself.
func (st *tagState) stripPass(s string) (string, bool, bool) {
	var (
		out   []byte
		found = st.open > 0
		stray bool
		last  int // start of visible text not yet copied to out
	)
	if found {
		out = make([]byte, 0, len(s))
	}
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
		t, closing, nameEnd := tagAt(s, i)
		if t < 0 {
			i++
			continue
		}
		if !found {
			found = true
			out = make([]byte, 0, len(s))
		}
		if st.open == 0 {
			out = append(out, s[last:i]...)
		}
		gt := strings.IndexByte(s[nameEnd:], '>')
		if gt < 0 {
			// A tag that never ends hides everything after it; when it closes nothing, it
			// may be a closing tag whose '>' is in the next part, and hides what precedes
			// it too.
			if closing && st.depth[t] == 0 {
				out, stray = out[:0], true
			}
			st.hideRest()
			return string(out), true, stray
		}
		end := nameEnd + gt + 1
		switch {
		case closing && st.depth[t] == 0:
			// A stray closing tag: its opening tag was in an earlier part of the record
			// (another text part, the tool input), so everything before it may be private.
			// Mirror the unclosed-tag rule and hide all of it. Tags still open stay open.
			out = out[:0]
			stray = true
		case closing:
			st.depth[t]--
			st.open--
		case s[end-2] == '/': // <private/> holds nothing
		default:
			st.depth[t]++
			st.open++
		}
		i = end
		if st.open == 0 {
			last = i
		}
	}
	if !found {
		return s, false, false
	}
	if st.open == 0 {
		out = append(out, s[last:]...)
	}
	return string(out), true, stray
}

// tagAt reports whether s[i] ('<') starts a memory tag: "<name" or "</name" followed by
// white space, '>', '/' or the end of s. It returns the tag's index in memoryTags (or -1)
// and the offset just after the name.
func tagAt(s string, i int) (t int, closing bool, nameEnd int) {
	k := i + 1
	if k < len(s) && s[k] == '/' {
		closing = true
		k++
	}
	if k >= len(s) {
		return -1, false, 0
	}
	switch s[k] | 0x20 {
	case 'p', 'm', 'c', 's':
	default:
		return -1, false, 0
	}
	for t, name := range memoryTags {
		if !hasPrefixFold(s[k:], name) {
			continue
		}
		e := k + len(name)
		if e == len(s) || isTagBoundary(s[e]) {
			return t, closing, e
		}
	}
	return -1, false, 0
}

func isTagBoundary(c byte) bool {
	switch c {
	case '>', '/', ' ', '\t', '\n', '\r', '\f':
		return true
	}
	return false
}

// cutAtFirstTag returns s up to its first memory tag.
func cutAtFirstTag(s string) string {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return s
		}
		i += j
		if t, _, _ := tagAt(s, i); t >= 0 {
			return s[:i]
		}
		i++
	}
}

// hasPrefixFold reports whether s starts with prefix, folding ASCII case; prefix must be
// lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

const protocolTag = "task-notification"

// maxProtocolBytes matches claude-mem: longer messages are never treated as protocol.
const maxProtocolBytes = 256 << 10

// IsProtocolOnly reports whether s consists only of multi-agent protocol tags
// (<task-notification>…</task-notification>) that are not user prompts.
//
// Like claude-mem's isInternalProtocolPayload the tag name is case-sensitive and a block
// may not contain another task-notification tag; unlike it, several blocks separated by
// white space also count.
func IsProtocolOnly(s string) bool {
	if len(s) > maxProtocolBytes {
		return false
	}
	const open, close = "<" + protocolTag, "</" + protocolTag + ">"
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	for t != "" {
		if !strings.HasPrefix(t, open) || len(t) == len(open) || !isTagBoundary(t[len(open)]) {
			return false
		}
		gt := strings.IndexByte(t, '>')
		if gt < 0 {
			return false
		}
		body := t[gt+1:]
		end := strings.Index(body, close[:len(close)-1])
		if end < 0 || !strings.HasPrefix(body[end:], close) || containsOpenTag(body[:end], open) {
			return false
		}
		t = strings.TrimSpace(body[end+len(close):])
	}
	return true
}

func containsOpenTag(s, open string) bool {
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return false
		}
		e := i + len(open)
		if e == len(s) || isTagBoundary(s[e]) {
			return true
		}
		s = s[e:]
	}
}
