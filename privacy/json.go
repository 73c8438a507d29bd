package privacy

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidJSON is returned by CleanJSON for input that is not one JSON value.
var ErrInvalidJSON = errors.New("invalid json")

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

// CleanJSON decodes raw JSON, cleans every string in it (object keys and values, at any
// depth), and re-encodes it compactly; numbers keep their exact text.
//
// Empty or all-white-space input yields "null": a hook field that is absent is the same as
// one that is null. Strings that Clean leaves alone keep their original escapes; changed
// strings are re-encoded without HTML escaping. Duplicate object keys are kept in order.
func CleanJSON(raw []byte) ([]byte, error) {
	w := jsonWalker{}
	return w.doc(raw)
}

// CleanJSONParts cleans JSON documents that are the parts of one record (a tool call's
// input and its response) as one text: the string values of all documents, in order, are
// stripped of memory tags as if joined. Secrets are redacted value by value (a PEM END
// line hides its own value back to its start). A tag opened in the input and closed in the response hides
// everything between; a closing tag that closes nothing empties every string value before
// it. Object keys are cleaned on their own, so the documents keep their shape.
func CleanJSONParts(docs ...[]byte) ([][]byte, error) {
	w := jsonWalker{parts: &tagState{}, lastStray: -1}
	out := make([][]byte, len(docs))
	for i, d := range docs {
		c, err := w.doc(d)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	if w.lastStray < 0 {
		return out, nil
	}
	// Again, from the start, now emptying the values before the last stray closing tag.
	w = jsonWalker{parts: &tagState{}, lastStray: -1, blankBefore: w.lastStray}
	for i, d := range docs {
		c, err := w.doc(d)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// doc cleans one document, keeping the walker's part state.
func (w *jsonWalker) doc(raw []byte) ([]byte, error) {
	w.s, w.i = string(raw), 0
	w.skipSpace()
	if w.i == len(w.s) {
		return []byte("null"), nil
	}
	w.out = make([]byte, 0, len(raw))
	if err := w.value(0); err != nil {
		return nil, err
	}
	w.skipSpace()
	if w.i != len(w.s) {
		return nil, w.fail("data after the value")
	}
	return w.out, nil
}

// jsonWalker validates and copies JSON token by token. Its grammar is encoding/json's,
// so CleanJSON accepts exactly what json.Valid accepts.
type jsonWalker struct {
	s   string
	i   int
	out []byte

	// With parts set, string values are stripped as one text (CleanJSONParts): values
	// counts them, lastStray is the last one with a stray closing tag, and values before
	// blankBefore are written as "".
	parts       *tagState
	values      int
	lastStray   int
	blankBefore int
}

func (w *jsonWalker) fail(what string) error {
	return fmt.Errorf("clean json: %w: %s at offset %d", ErrInvalidJSON, what, w.i)
}

func (w *jsonWalker) skipSpace() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *jsonWalker) value(depth int) error {
	if w.i >= len(w.s) {
		return w.fail("unexpected end")
	}
	switch c := w.s[w.i]; c {
	case '{', '[':
		return w.container(depth, c)
	case '"':
		return w.str(false)
	case 't':
		return w.literal("true")
	case 'f':
		return w.literal("false")
	case 'n':
		return w.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return w.number()
		}
		return w.fail(fmt.Sprintf("unexpected %q", c))
	}
}

func (w *jsonWalker) container(depth int, open byte) error {
	if depth >= maxJSONDepth {
		return w.fail("nesting too deep")
	}
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	w.out = append(w.out, open)
	w.i++
	w.skipSpace()
	if w.i < len(w.s) && w.s[w.i] == closer {
		w.out = append(w.out, closer)
		w.i++
		return nil
	}
	for {
		if open == '{' {
			if w.i >= len(w.s) || w.s[w.i] != '"' {
				return w.fail("expected object key")
			}
			if err := w.str(true); err != nil {
				return err
			}
			w.skipSpace()
			if w.i >= len(w.s) || w.s[w.i] != ':' {
				return w.fail("expected ':'")
			}
			w.out = append(w.out, ':')
			w.i++
			w.skipSpace()
		}
		if err := w.value(depth + 1); err != nil {
			return err
		}
		w.skipSpace()
		if w.i >= len(w.s) {
			return w.fail("unexpected end")
		}
		switch w.s[w.i] {
		case ',':
			w.out = append(w.out, ',')
			w.i++
			w.skipSpace()
		case closer:
			w.out = append(w.out, closer)
			w.i++
			return nil
		default:
			return w.fail(fmt.Sprintf("unexpected %q", w.s[w.i]))
		}
	}
}

func (w *jsonWalker) literal(lit string) error {
	if len(w.s)-w.i < len(lit) || w.s[w.i:w.i+len(lit)] != lit {
		return w.fail("invalid literal")
	}
	w.out = append(w.out, lit...)
	w.i += len(lit)
	return nil
}

func (w *jsonWalker) number() error {
	s, start := w.s, w.i
	i := start
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		w.i = i
		return w.fail("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == d {
			w.i = i
			return w.fail("invalid number")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == d {
			w.i = i
			return w.fail("invalid number")
		}
	}
	w.out = append(w.out, s[start:i]...)
	w.i = i
	return nil
}

// str cleans one string token. Strings Clean does not change are copied byte for byte.
func (w *jsonWalker) str(key bool) error {
	s := w.s
	start := w.i
	escaped, nonASCII := false, false
	i := start + 1
	for {
		if i >= len(s) {
			w.i = i
			return w.fail("unterminated string")
		}
		c := s[i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			i++
			if i >= len(s) {
				w.i = i
				return w.fail("unterminated string")
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(s)-i < 5 || hex4(s[i+1:i+5]) < 0 {
					w.i = i
					return w.fail("invalid \\u escape")
				}
				i += 5
			default:
				w.i = i
				return w.fail("invalid escape")
			}
		case c < 0x20:
			w.i = i
			return w.fail("control character in string")
		default:
			if c >= utf8.RuneSelf {
				nonASCII = true
			}
			i++
		}
	}
	end := i + 1
	w.i = end
	text := s[start+1 : i]
	badUTF8 := nonASCII && !utf8.ValidString(text)
	if escaped || badUTF8 {
		text = unquote(text, !badUTF8)
	}
	var cleaned string
	if w.parts == nil || key {
		cleaned = Clean(text)
	} else {
		n := w.values
		w.values++
		stripped, stray := w.parts.strip(text)
		if stray {
			w.lastStray = n
		}
		if n < w.blankBefore {
			w.out = append(w.out, `""`...)
			return nil
		}
		cleaned = Redact(stripped)
	}
	if cleaned == text && !badUTF8 {
		w.out = append(w.out, s[start:end]...)
		return nil
	}
	w.out = appendString(w.out, cleaned)
	return nil
}

// unquote decodes the body of a string token already validated by str, exactly as
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD). validUTF8 says
// that the raw bytes are valid UTF-8, so runs between escapes can be copied in bulk.
func unquote(s string, validUTF8 bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if validUTF8 {
			k := strings.IndexByte(s[i:], '\\')
			if k < 0 {
				b = append(b, s[i:]...)
				break
			}
			b = append(b, s[i:i+k]...)
			i += k
		}
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch s[i] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := rune(hex4(s[i+1 : i+5]))
				i += 5
				if utf16.IsSurrogate(r) {
					if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := hex4(s[i+2 : i+6]); r2 >= 0 {
							if d := utf16.DecodeRune(r, rune(r2)); d != utf8.RuneError {
								b = utf8.AppendRune(b, d)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[i])
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	return string(b)
}

func hex4(s string) int {
	n := 0
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		n = n<<4 | int(c)
	}
	return n
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string token, escaping only what JSON requires plus
// U+2028/U+2029 (as encoding/json does), but not HTML characters.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
