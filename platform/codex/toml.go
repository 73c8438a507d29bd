package codex

import (
	"fmt"
	"strings"
)

// Codex's config.toml is edited as text, table by table, so that every byte memnode did
// not write stays as the user (or Codex) wrote it: memnode adds one table at the end and
// removes exactly the tables it owns.

// tableName parses a table header line ("[a.b]", `[a."b.c"]`, "[[a]]", a trailing comment
// allowed) into its dotted key parts.
func tableName(line string) ([]string, bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "["), "[")
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						cur.WriteByte('\n')
					case 't':
						cur.WriteByte('\t')
					default:
						cur.WriteByte(s[j])
					}
				} else {
					cur.WriteByte(s[j])
				}
				j++
			}
			if j >= len(s) {
				return nil, false
			}
			i = j
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case c == ']':
			parts = append(parts, strings.TrimSpace(cur.String()))
			return parts, true
		case c == ' ' || c == '\t':
		default:
			cur.WriteByte(c)
		}
	}
	return nil, false
}

// table is one table of a TOML text: its header line and the lines up to the next header.
type table struct {
	name       []string // nil for the keys before the first header
	start, end int      // line indexes [start, end)
}

// splitLines splits text into lines that keep their "\n".
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, "\n")
}

// tables splits lines into tables. Lines inside multi-line strings are never headers.
func tables(lines []string) []table {
	out := []table{{start: 0}}
	inMulti := ""
	for i, l := range lines {
		if inMulti == "" {
			if name, ok := tableName(l); ok {
				out[len(out)-1].end = i
				out = append(out, table{name: name, start: i})
				continue
			}
		}
		for _, q := range []string{`"""`, `'''`} {
			if (inMulti == "" || inMulti == q) && strings.Count(l, q)%2 == 1 {
				if inMulti == "" {
					inMulti = q
				} else {
					inMulti = ""
				}
			}
		}
	}
	out[len(out)-1].end = len(lines)
	return out
}

// removeTables returns text without the tables for which drop holds. A table's trailing
// blank lines go with it; so does memnode's comment line right above its header.
func removeTables(text string, drop func(name []string) bool) (string, bool) {
	lines := splitLines(text)
	keep := make([]bool, len(lines))
	for i := range keep {
		keep[i] = true
	}
	removed := false
	for _, t := range tables(lines) {
		if t.name == nil || !drop(t.name) {
			continue
		}
		removed = true
		for i := t.start; i < t.end; i++ {
			keep[i] = false
		}
		if t.start > 0 && strings.TrimSpace(lines[t.start-1]) == mcpComment {
			keep[t.start-1] = false
		}
	}
	if !removed {
		return text, false
	}
	var b strings.Builder
	for i, l := range lines {
		if keep[i] {
			b.WriteString(l)
		}
	}
	return b.String(), true
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// normalized is text without blank lines and surrounding spaces, for "same content" checks
// that ignore the blank lines Codex and memnode put between tables.
func normalized(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
