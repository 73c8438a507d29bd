package hooks

import (
	"encoding/json"
	"unicode/utf8"
)

// TruncatedMarker ends a string value cut short because the hook input was over
// MaxInputBytes: the tool call is kept, with as much of its output as fits.
const TruncatedMarker = "…[memnode: truncated, the hook input was over 32 MiB]"

// frame is one open container of a JSON text being scanned.
type frame struct {
	obj     bool // object (else array)
	wantKey bool // in an object: the next string is a key
}

// truncateJSON turns a prefix of a JSON object into a valid JSON object: a string value
// cut in the middle ends with marker; otherwise the text is cut after the last complete
// value. Open containers are closed. ok is false when no valid object can be made (the
// prefix does not start an object, or nothing complete precedes the cut).
func truncateJSON(prefix []byte, marker string) (out []byte, ok bool) {
	var (
		stack        []frame
		inStr, isKey bool
		escape       bool
		uLeft        int // hex digits left of a \u escape
		escStart     int // index of the backslash of the escape in progress
		scalar       bool
		safeAt       = -1 // prefix[:safeAt] ends with a complete value (or an open container)
		safeClose    []byte
	)
	closers := func() []byte {
		c := make([]byte, 0, len(stack))
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].obj {
				c = append(c, '}')
			} else {
				c = append(c, ']')
			}
		}
		return c
	}
	markSafe := func(at int) { safeAt, safeClose = at, closers() }
	valueDone := func(at int) {
		if len(stack) > 0 {
			markSafe(at)
		}
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if inStr {
			switch {
			case uLeft > 0:
				uLeft--
			case escape:
				escape = false
				if c == 'u' {
					uLeft = 4
				}
			case c == '\\':
				escape, escStart = true, i
			case c == '"':
				inStr = false
				if !isKey {
					valueDone(i + 1)
				}
			}
			if uLeft == 0 && !escape {
				escStart = -1
			}
			continue
		}
		if scalar {
			if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E' {
				continue
			}
			scalar = false
			valueDone(i)
		}
		switch c {
		case '{':
			stack = append(stack, frame{obj: true, wantKey: true})
			markSafe(i + 1)
		case '[':
			stack = append(stack, frame{})
			markSafe(i + 1)
		case '}', ']':
			if len(stack) == 0 {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return prefix[:i+1], json.Valid(prefix[:i+1]) // complete after all
			}
			valueDone(i + 1)
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].wantKey = true
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].wantKey = false
			}
		case '"':
			inStr = true
			isKey = len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].wantKey
		case ' ', '\t', '\n', '\r':
		default:
			scalar = true
		}
	}
	if len(stack) == 0 || !stack[0].obj {
		return nil, false
	}
	if inStr && !isKey {
		cut := len(prefix)
		if escape || uLeft > 0 {
			cut = escStart
		}
		// Never end on a split UTF-8 sequence (at most UTFMax-1 bytes to drop).
		for k := 1; k < utf8.UTFMax && cut > 0; k++ {
			if r, size := utf8.DecodeLastRune(prefix[:cut]); r != utf8.RuneError || size != 1 || prefix[cut-1] < utf8.RuneSelf {
				break
			}
			cut--
		}
		mk, _ := json.Marshal(marker)
		out = append(append([]byte(nil), prefix[:cut]...), mk[1:len(mk)-1]...)
		out = append(out, '"')
		out = append(out, closers()...)
	} else {
		if safeAt < 0 {
			return nil, false
		}
		out = append(append([]byte(nil), prefix[:safeAt]...), safeClose...)
	}
	return out, json.Valid(out)
}
