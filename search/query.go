package search

import (
	"strings"
	"unicode"

	"github.com/memnode/memnode/internal/codewords"
)

// Limits on what one query may ask of FTS5, so a pasted essay stays cheap.
const (
	maxQueryBytes = 2000
	maxTerms      = 24
	// minPrefixRunes is the shortest last word that is also matched as a prefix: a shorter
	// one would expand to a large part of the vocabulary.
	minPrefixRunes = 3
)

// Expr is a parsed query: an OR of clauses, each an AND of FTS5 terms.
type Expr struct {
	clauses [][]string
	terms   []string // every distinct term, in order
	words   []string // the plain words, lower-cased, for the title bonus
	// stop holds the terms that are a plain stop or question word ("what", "does").
	stop map[string]bool
	// ident holds the terms that look like identifiers (see identifier).
	ident map[string]bool
	// syn holds the terms added from the developer vocabulary (vocabulary.go): they rank at
	// synonymWeight and are never required.
	syn map[string]bool
	// lastBoth is the as-you-type form of the last word, lastPlain the word alone: a
	// frequent word is complete, and its prefix expansion only costs time.
	lastBoth, lastPlain string
}

// Empty reports whether the text held nothing searchable (only punctuation, emoji, …).
func (e Expr) Empty() bool { return len(e.terms) == 0 }

// Terms is the number of distinct terms.
func (e Expr) Terms() int { return len(e.terms) }

// Match is the FTS5 expression: clauses joined by OR, terms within a clause by AND.
func (e Expr) Match() string {
	parts := make([]string, 0, len(e.clauses))
	for _, c := range e.clauses {
		if len(c) == 1 {
			parts = append(parts, c[0])
			continue
		}
		parts = append(parts, "("+strings.Join(c, " AND ")+")")
	}
	return strings.Join(parts, " OR ")
}

// Any is the fallback expression: any of the terms.
func (e Expr) Any() string { return strings.Join(e.terms, " OR ") }

// Informative is the terms without the stop and question words, or every term when the
// text is made of nothing else ("what is it"): such words are in most records, so they
// would rank a record by how much it talks rather than by what it is about.
func (e Expr) Informative() []string {
	var out []string
	for _, t := range e.terms {
		if !e.stop[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return e.terms
	}
	return out
}

// Parse turns arbitrary user text into an Expr. Words are separated by spaces; "quoted
// text" is a phrase; word* is a prefix; an upper-case OR between words is the OR operator
// and an upper-case AND is ignored (AND is the default). Everything else, including FTS5
// syntax, is searched for as text. Words match words: an agent's or a CLI query is
// complete (ParseTyping is for a box someone is typing into).
func Parse(text string) Expr { return parse(text, false) }

// ParseTyping is Parse for text someone is still typing (the viewer's search box): the
// last plain word also matches as a prefix, with exact matches ranked first.
func ParseTyping(text string) Expr { return parse(text, true) }

func parse(text string, typing bool) Expr {
	if len(text) > maxQueryBytes {
		text = text[:maxQueryBytes]
	}
	// FTS5 reads its expression as a C string: a NUL would cut it mid-quote. Control
	// characters and invalid UTF-8 carry no tokens anyway.
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, " "))
	var (
		e        Expr
		cur      []string
		seen     = map[string]bool{}
		lastBare = -1 // index in cur of the last plain word
		lastWord string
	)
	add := func(term string) bool {
		if !seen[term] {
			if len(seen) >= maxTerms {
				return false
			}
			seen[term] = true
			e.terms = append(e.terms, term)
		}
		cur = append(cur, term)
		return true
	}
	endClause := func() {
		if len(cur) > 0 {
			e.clauses = append(e.clauses, cur)
		}
		cur = nil
		lastBare = -1
	}
	rest := text
	for rest != "" {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		if rest[0] == '"' {
			body, after, closed := strings.Cut(rest[1:], `"`)
			if !closed {
				after = ""
			}
			prefix := false
			if strings.HasPrefix(after, "*") {
				prefix = true
				after = strings.TrimLeft(after, "*")
			}
			rest = after
			if searchable(body) && add(quote(body, prefix)) {
				lastBare = -1
			}
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(rest)
		}
		word := rest[:end]
		rest = rest[end:]
		switch word {
		case "OR":
			endClause()
			continue
		case "AND":
			continue
		}
		prefix := strings.HasSuffix(word, "*")
		word = trimPossessive(strings.TrimRight(word, "*"))
		if !searchable(word) {
			continue
		}
		if !add(quote(word, prefix)) {
			continue
		}
		lw := strings.ToLower(strings.Trim(word, "-_.,;:!?()[]{}'`"))
		e.words = append(e.words, lw)
		if !prefix && stopWord(lw) {
			if e.stop == nil {
				e.stop = map[string]bool{}
			}
			e.stop[quote(word, false)] = true
		}
		if identifier(word) {
			if e.ident == nil {
				e.ident = map[string]bool{}
			}
			e.ident[quote(word, prefix)] = true
		}
		// A name also ranks by what the index keeps beside each record (codewords.Parts):
		// a snake_case or kebab-case name by its joined form, at identWeight, so the exact
		// parse_timeout ranks above prose saying "parse timeout"; a camelCase one by the
		// phrase of its words (parseJSONBody → "parse JSON Body") at a plain word's weight,
		// which finds the records that spell it out while the whole name keeps identWeight.
		if !prefix {
			if j := codewords.Joined(word); j != "" {
				if t := quote(j, false); !seen[t] && len(seen) < maxTerms {
					seen[t] = true
					e.terms = append(e.terms, t)
					if e.ident == nil {
						e.ident = map[string]bool{}
					}
					e.ident[t] = true
				}
			}
			if parts := codewords.SplitWord(word); parts != "" {
				if t := quote(parts, false); !seen[t] && len(seen) < maxTerms {
					seen[t] = true
					e.terms = append(e.terms, t)
				}
			}
		}
		if prefix {
			lastBare = -1
		} else {
			lastBare, lastWord = len(cur)-1, word
		}
	}
	// As-you-type: the final plain word also matches longer words. Both forms stay in the
	// expression so bm25 scores an exact hit above a prefix-only one.
	if typing && lastBare >= 0 && rest == "" && !strings.HasSuffix(text, " ") && lastTokenRunes(lastWord) >= minPrefixRunes {
		plain := cur[lastBare]
		both := "(" + plain + " OR " + quote(lastWord, true) + ")"
		cur[lastBare] = both
		e.lastBoth, e.lastPlain = both, plain
		// The prefix form matches a superset of the plain one, so it replaces it in the
		// term list (used for the any-term fallback and for selectivity).
		for i, t := range e.terms {
			if t == plain {
				e.terms[i] = both
			}
		}
		if e.stop[plain] {
			e.stop[both] = true
		}
		if e.ident[plain] {
			e.ident[both] = true
		}
	}
	endClause()
	e.addEquivalents(seen)
	return e
}

// addEquivalents adds the developer-vocabulary forms of the query's words (and of each
// pair of consecutive words) to the terms, marked as synonyms.
func (e *Expr) addEquivalents(seen map[string]bool) {
	var vocab [][]string
	for i, w := range e.words {
		if stopWord(w) {
			continue
		}
		if vocab == nil {
			vocab = vocabulary()
		}
		forms := equivalents(vocab, w)
		if i+1 < len(e.words) {
			forms = append(forms, equivalents(vocab, w+" "+e.words[i+1])...)
		}
		for _, f := range forms {
			t := quote(f, false)
			if seen[t] || len(seen) >= maxTerms {
				continue
			}
			seen[t] = true
			e.terms = append(e.terms, t)
			if e.syn == nil {
				e.syn = map[string]bool{}
			}
			e.syn[t] = true
		}
	}
}

// quote makes s one FTS5 string: inside quotes only '"' is special (doubled), and the
// table's tokenizer splits the content into a phrase, so "webhook/handler.go" matches the
// adjacent tokens webhook, handler, go.
func quote(s string, prefix bool) string {
	q := `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	if prefix {
		q += "*"
	}
	return q
}

// searchable reports whether s holds at least one token character for SQLite's
// unicode61 tokenizer (letters, numbers, private use).
func searchable(s string) bool {
	return strings.IndexFunc(s, tokenRune) >= 0
}

func tokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// lastTokenRunes is the length of the last token of a word ("handler.go" → 2).
func lastTokenRunes(w string) int {
	n := 0
	for _, r := range w {
		if tokenRune(r) {
			n++
		} else {
			n = 0
		}
	}
	return n
}

// Identifier reports whether term (one of e's terms) is an identifier.
func (e Expr) Identifier(term string) bool { return e.ident[term] }

// identifier reports whether a typed word looks like a name from code or a log rather
// than prose: it holds a digit, an underscore, a lower-to-upper case change (camelCase)
// or punctuation between letters (a path, a package.Func, an e-mail). Such a word names
// one thing; the records that hold it are what the query is after.
func identifier(w string) bool {
	w = strings.TrimFunc(w, func(r rune) bool { return !tokenRune(r) })
	var prev rune
	for i, r := range w {
		switch {
		case unicode.IsDigit(r), r == '_':
			return true
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			return true
		case i > 0 && !tokenRune(r) && !unicode.IsSpace(r) && r != '\'' && r != '’':
			return true
		}
		prev = r
	}
	return false
}

// stopWord reports whether w (lower case) is a word that says nothing about what a record
// is about: an article, an auxiliary verb, a pronoun or a question word. "What kind of car
// does Evan drive?" is about "kind", "car", "Evan" and "drive". Prepositions, conjunctions and
// quantifiers stay: in code they carry meaning (`after` a hook, `at` a time, `all`/`only`
// matchers, `or`/`not` operators, `on` events), and bm25 already weighs a word found in
// most records near zero.
func stopWord(w string) bool {
	switch w {
	case "a", "an", "the",
		"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "have", "has",
		"had", "having", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
		"i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "he", "him", "his", "himself",
		"she", "her", "hers", "herself", "it", "its", "itself", "we", "us", "our", "ours", "they", "them",
		"their", "theirs", "this", "that", "these", "those",
		"what", "which", "who", "whom", "whose", "when", "where", "why", "how":
		return true
	}
	return false
}

// trimPossessive drops a possessive ending ("Caroline's?" → "Caroline"): kept, it would
// make the word the phrase "caroline s", which a record saying "Caroline" does not match.
func trimPossessive(w string) string {
	core := strings.TrimRightFunc(w, func(r rune) bool { return unicode.IsPunct(r) && r != '\'' && r != '’' })
	for _, suf := range []string{"'s", "’s", "'S", "’S"} {
		if base, ok := strings.CutSuffix(core, suf); ok && searchable(base) {
			return base
		}
	}
	return w
}
