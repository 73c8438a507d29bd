// Package codewords splits the names of code into the words they are made of, as a
// developer reads them: OnLoad is "on load", parseJSONBody "parse json body", http2
// "http 2". SQLite's unicode61 tokenizer already splits at punctuation (snake_case,
// kebab-case, dotted and slashed paths), but keeps a run of letters and digits as one
// token, so a record about `OnUnload` never matched "unloaded". The replica indexes the
// parts beside the text (replica/DESIGN.md, "Code-aware tokens") and search adds them to
// a query, both through Parts/Split, so the two sides always split alike.
//
// Stdlib only; no state.
package codewords

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Version names the splitting rules. The replica's index stores parts computed by these
// rules and removes a row by recomputing them, so a change of the rules must come with a
// new Version and a schema migration that rebuilds the index.
const Version = 1

// maxWordRunes bounds the identifiers split: a longer run of letters and digits (a hash, a
// base64 blob) is no name.
const maxWordRunes = 64

// tokenRune is what unicode61 keeps inside a token: letters and numbers.
func tokenRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// Split returns the parts of one token (a run of letters and digits) when it has more
// than one: a lower-to-upper case change (onLoad → on Load), the end of an upper-case run
// before a capitalised word (HTTPServer → HTTP Server) and a letter-digit boundary
// (http2 → http 2). A token with one part, or none, gives nil.
func Split(token string) []string {
	rs := []rune(token)
	if len(rs) < 2 || len(rs) > maxWordRunes {
		return nil
	}
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		cut := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			cut = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			cut = true
		case unicode.IsLetter(prev) && unicode.IsDigit(cur), unicode.IsDigit(prev) && unicode.IsLetter(cur):
			cut = true
		}
		if cut {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	if start == 0 {
		return nil
	}
	return append(parts, string(rs[start:]))
}

// Joined returns a snake_case or kebab-case name with its separators dropped
// (parse_timeout → parsetimeout, max-age → maxage), "" for a word without one. unicode61
// splits such a name into its words, so the index could not tell parse_timeout from
// "parse the timeout" prose; the joined form, indexed beside the text and asked for by a
// query naming it, lets the exact name rank first.
func Joined(word string) string {
	word = strings.TrimFunc(word, func(r rune) bool { return !tokenRune(r) })
	if !strings.ContainsAny(word, "_-") || utf8.RuneCountInString(word) > maxWordRunes {
		return ""
	}
	var b strings.Builder
	for _, r := range word {
		switch {
		case tokenRune(r):
			b.WriteRune(r)
		case r != '_' && r != '-':
			return "" // a path or a sentence, not one name
		}
	}
	return b.String()
}

// wordRune is what a name is made of: letters, digits, '_' and '-'.
func wordRune(r rune) bool { return tokenRune(r) || r == '_' || r == '-' }

// Parts returns, space-separated, what the index keeps beside a text: for each distinct
// name in it, its joined form when it has one (Joined) and the parts of each of its
// tokens that Split splits, in order of first appearance.
//
// The replica's full-text trigger calls it for every observation stored, so it skips
// what adds nothing without allocating: a plain word (most of prose) has no joined form
// and no part, and a word without '_' or '-' is its one token. Only words that add parts
// are remembered, to add them once (a snapshot install of 100k observations spent 2.9 of
// its 23 s of CPU here, mostly in the set of every word seen).
func Parts(text string) string {
	var b strings.Builder
	add := func(p string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	var seen map[string]bool
	for text != "" {
		i := strings.IndexFunc(text, wordRune)
		if i < 0 {
			break
		}
		text = text[i:]
		j := strings.IndexFunc(text, func(r rune) bool { return !wordRune(r) })
		if j < 0 {
			j = len(text)
		}
		word := text[:j]
		text = text[j:]
		if plainWord(word) || seen[word] {
			continue
		}
		if !strings.ContainsAny(word, "_-") {
			parts := Split(word) // the word is its one token, and has no joined form
			if parts == nil {
				continue
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[word] = true
			for _, p := range parts {
				add(p)
			}
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[word] = true
		if jw := Joined(word); jw != "" {
			add(jw)
		}
		for _, tok := range strings.FieldsFunc(word, func(r rune) bool { return !tokenRune(r) }) {
			for _, p := range Split(tok) {
				add(p)
			}
		}
	}
	return b.String()
}

// plainWord reports whether a word (a run of wordRunes) is ASCII digits only, or ASCII
// lower-case letters after at most one capital: it has no '_' or '-' (no joined form) and
// no case change, letter-digit boundary or run of capitals for Split to cut at.
func plainWord(w string) bool {
	digits := w[0] >= '0' && w[0] <= '9'
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case digits:
			if c < '0' || c > '9' {
				return false
			}
		case c >= 'a' && c <= 'z':
		case i == 0 && c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

// SplitWord returns the parts of the camelCase and letter-digit tokens of one typed word,
// space-separated, with its other tokens as they are (getUser_byID → "get User by ID"),
// or "" when no token splits: the phrase a query adds for a name.
func SplitWord(word string) string {
	toks := strings.FieldsFunc(word, func(r rune) bool { return !tokenRune(r) })
	var out []string
	split := false
	for _, tok := range toks {
		if p := Split(tok); p != nil {
			out = append(out, p...)
			split = true
		} else {
			out = append(out, tok)
		}
	}
	if !split {
		return ""
	}
	return strings.Join(out, " ")
}
