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
// nested, an unclosed opening tag hides everything after it).
func StripTags(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	out, changed := stripPass(s)
	for pass := 1; changed; pass++ {
		if pass == maxStripPasses {
			return cutAtFirstTag(out)
		}
		out, changed = stripPass(out)
	}
	return out
}

// stripPass makes one linear scan. It reports whether it saw any memory tag; when it did
// not, it returns s itself.
func stripPass(s string) (string, bool) {
	var (
		out   []byte
		found bool
		depth [len(memoryTags)]int
		open  int // sum of depth: text is hidden while open > 0
		last  int // start of visible text not yet copied to out
	)
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
		if open == 0 {
			out = append(out, s[last:i]...)
		}
		gt := strings.IndexByte(s[nameEnd:], '>')
		if gt < 0 {
			// A tag that never ends hides everything after it.
			return string(out), true
		}
		end := nameEnd + gt + 1
		switch {
		case closing && depth[t] == 0:
			// A stray closing tag: its opening tag was in an earlier part of the record
			// (another text part, the tool input), so everything before it may be private.
			// Mirror the unclosed-tag rule and hide all of it.
			// Tags still open stay open.
			out = out[:0]
		case closing:
			depth[t]--
			open--
		case s[end-2] == '/': // <private/> holds nothing
		default:
			depth[t]++
			open++
		}
		i = end
		if open == 0 {
			last = i
		}
	}
	if !found {
		return s, false
	}
	if open == 0 {
		out = append(out, s[last:]...)
	}
	return string(out), true
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
