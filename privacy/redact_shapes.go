package privacy

import (
	"encoding/base64"
	"slices"
	"strings"
	"sync"
)

// Detectors for secrets that have no literal prefix of their own: a PEM body without its
// header, base64 of "password=…", and passwords given on a command line.

const kindBase64Secret = "base64-secret"

// pemBodyPrefixes start the base64 body of every DER-encoded key (a SEQUENCE: "MII…") and
// of an OpenSSH key ("openssh-key-v1").
var pemBodyPrefixes = [...]string{"MII", "b3BlbnNzaC1rZXkt"}

// Lengths that make a base64 run a key body rather than a word: a first line of at least
// minPEMLine characters and minPEMBody in all (an EC P-256 key is ~160).
const (
	minPEMLine = 40
	minPEMBody = 100
)

// pemBodyHint reports whether s[i] ('I' or 'B') may be inside one of pemBodyPrefixes.
func pemBodyHint(s string, i int) bool {
	if s[i] == 'I' {
		return i >= 2 && s[i-2:i+1] == "MII"
	}
	return i >= 2 && strings.HasPrefix(s[i-2:], pemBodyPrefixes[1])
}

// redactPEMBody replaces a key body pasted without its BEGIN/END lines: lines of base64
// that start with a key's DER or OpenSSH prefix. Public certificates have the same shape
// and are redacted too.
func redactPEMBody(s string) string {
	sp := splice{s: s}
	for _, prefix := range pemBodyPrefixes {
		if sp.out != nil {
			s = sp.String()
			sp = splice{s: s}
		}
		for i := 0; ; {
			k := strings.Index(s[i:], prefix)
			if k < 0 {
				break
			}
			start := i + k
			i = start + 1
			if start > 0 && isBase64Byte(s[start-1]) {
				continue
			}
			end, n := base64Lines(s, start)
			if n < minPEMBody {
				i = max(i, end)
				continue
			}
			sp.replace(start, end, kindPrivateKey)
			i = end
		}
	}
	return sp.String()
}

// base64Lines returns the end of the run of base64 lines at s[start:] and the number of
// base64 characters in it; it is 0 unless the first line has minPEMLine characters. Lines
// after the first have its length, except a shorter last one.
func base64Lines(s string, start int) (end, n int) {
	e := start
	for e < len(s) && isBase64Byte(s[e]) {
		e++
	}
	if e-start < minPEMLine {
		return e, 0
	}
	first := e - start
	n, end = first, e
	for {
		p := end
		if p < len(s) && s[p] == '\r' {
			p++
		}
		if p >= len(s) || s[p] != '\n' {
			return end, n
		}
		p++
		q := p
		for q < len(s) && isBase64Byte(s[q]) {
			q++
		}
		switch {
		case q-p == first:
			n += q - p
			end = q
		case q > p && q-p < first && !isPlainWord(s[p:q]):
			return q, n + q - p // the last, shorter line
		default:
			return end, n
		}
	}
}

// isPlainWord reports a line of letters only, which ends a key body rather than being
// its last line ("done" after the key).
func isPlainWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isBase64Byte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// base64Words are looked for inside base64 text: "cGFzc3dvcmQ9aHVudGVy" is
// "password=hunter".
var base64Words = [...]string{
	"password", "Password", "PASSWORD", "passwd", "secret", "Secret", "SECRET",
	"token", "Token", "TOKEN", "apikey", "api_key", "API_KEY",
}

// A base64Anchor is the part of a word's base64 encoding that does not depend on its
// neighbours, at one of the three byte alignments; s[trig] is its rarest byte, where
// scanHints looks.
type base64Anchor struct {
	s    string
	trig int
}

// base64Index lists the anchors by their trigger byte.
var base64Index = sync.OnceValue(buildBase64Index)

func buildBase64Index() *[256][]base64Anchor {
	idx := new([256][]base64Anchor)
	for _, w := range base64Words {
		for pad := 0; pad < 3; pad++ {
			enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + w + "xxx"))
			// Character c holds bits [6c, 6c+6); keep those inside the word.
			lo, hi := (8*pad+5)/6, 8*(pad+len(w))/6
			a := base64Anchor{s: enc[lo:hi]}
			if slices.ContainsFunc(idx[:], func(as []base64Anchor) bool {
				return slices.ContainsFunc(as, func(b base64Anchor) bool { return b.s == a.s })
			}) {
				continue
			}
			a.trig = trigger(a.s, idx)
			idx[a.s[a.trig]] = append(idx[a.s[a.trig]], a)
		}
	}
	return idx
}

// byteRarity orders bytes from rare to common in prose and code; bytes not listed come
// last.
// The bytes scanHints already stops at for other detectors come last.
const byteRarity = "QZXVWYUFHNMRLPOTDCSE9876543210+/qzxjkvwyufgbhmpnlrdcositaeJKGIBA"

// trigger picks the byte of a where scanHints looks: a rare one that few other anchors
// use already.
func trigger(a string, idx *[256][]base64Anchor) int {
	best, cost := 0, 1<<30
	for i := 0; i < len(a); i++ {
		r := strings.IndexByte(byteRarity, a[i])
		if r < 0 {
			r = len(byteRarity)
		}
		if c := r + 4*len(idx[a[i]]); c < cost {
			best, cost = i, c
		}
	}
	return best
}

// base64AnchorAt reports whether an anchor's trigger byte is s[i] and the anchor is there.
func base64AnchorAt(s string, i int) bool {
	for _, a := range base64Index()[s[i]] {
		// The first byte rules out nearly every candidate without a call.
		if p := i - a.trig; p >= 0 && s[p] == a.s[0] && strings.HasPrefix(s[p:], a.s) {
			return true
		}
	}
	return false
}

// redactBase64Secrets replaces every base64 run that encodes one of base64Words.
func redactBase64Secrets(s string) string {
	type span struct{ start, end int }
	var spans []span
	idx := base64Index()
	for c := range idx {
		for _, a := range idx[c] {
			for i := 0; ; {
				k := strings.Index(s[i:], a.s)
				if k < 0 {
					break
				}
				start, end := i+k, i+k+len(a.s)
				for start > 0 && isBase64URLByte(s[start-1]) {
					start--
				}
				for end < len(s) && isBase64URLByte(s[end]) {
					end++
				}
				i = end
				if strings.HasPrefix(s[start:], markerPrefix[1:]) {
					continue
				}
				spans = append(spans, span{start, end})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	sp := splice{s: s}
	for _, r := range spans {
		if r.start < sp.last {
			continue // the same run found by another anchor
		}
		sp.replace(r.start, r.end, kindBase64Secret)
	}
	return sp.String()
}

func isBase64URLByte(c byte) bool { return isBase64Byte(c) || c == '-' || c == '_' }
