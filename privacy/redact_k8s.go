package privacy

import (
	"slices"
	"strings"
)

// A Kubernetes Secret carries its secrets as the values of its data and stringData maps,
// under any key names ("username: YWRtaW4=", "tls.key: LS0t…"): `kubectl get secret -o
// yaml` (or -o json) and a Secret manifest show them with nothing else that says secret. In
// a YAML document (between "---" lines) or a JSON text that declares kind Secret, every
// value of every data and stringData map is redacted; a ConfigMap's data in the same
// document goes with it (more hidden rather than less).

const kindK8sSecret = "kubernetes-secret"

// k8sSecretKindAt reports whether the ':' at s[i] ends a "kind" key whose value is Secret:
// `kind: Secret` (YAML, quoted or not) or `"kind": "Secret"` (JSON).
func k8sSecretKindAt(s string, i int) bool {
	j := i
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	if j < 4 || s[j-4:j] != "kind" || j > 4 && wordByte[s[j-5]] {
		return false
	}
	p := i + 1
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		p++
	}
	if !strings.HasPrefix(s[p:], "Secret") {
		return false
	}
	p += len("Secret")
	return p == len(s) || !wordByte[s[p]]
}

// A span is a range of s to redact.
type span struct{ start, end int }

// redactK8sSecrets redacts the data values of every YAML document and JSON text of s that
// declares kind Secret.
func redactK8sSecrets(s string) string {
	var spans []span
	for start := 0; start < len(s); {
		end := yamlDocEnd(s, start)
		if hasK8sSecretKind(s[start:end]) {
			spans = yamlDataValues(spans, s, start, end)
			spans = jsonDataValues(spans, s, start, end)
		}
		start = end
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	sp := splice{s: s}
	for _, r := range spans {
		if r.start >= sp.last && r.end > r.start && !strings.HasPrefix(s[r.start:], markerPrefix) {
			sp.replace(r.start, r.end, kindK8sSecret)
		}
	}
	return sp.String()
}

// yamlDocEnd returns the end of the YAML document starting at s[start]: the start of the
// next "---" line after it, or len(s).
func yamlDocEnd(s string, start int) int {
	for i := start; ; {
		k := strings.Index(s[i:], "\n---")
		if k < 0 {
			return len(s)
		}
		e := i + k + 1
		if after := e + 3; after == len(s) || s[after] == '\n' || s[after] == '\r' || s[after] == ' ' {
			return e
		}
		i = e
	}
}

func hasK8sSecretKind(doc string) bool {
	for i := 0; ; {
		k := strings.Index(doc[i:], "kind")
		if k < 0 {
			return false
		}
		p := i + k + 4
		if p < len(doc) && (doc[p] == '"' || doc[p] == '\'') {
			p++
		}
		if p < len(doc) && doc[p] == ':' && k8sSecretKindAt(doc, p) {
			return true
		}
		i = i + k + 1
	}
}

// yamlDataValues adds, in the lines of s[start:end], the entries of every "data:" and
// "stringData:" block: the value after "key:" on each line indented deeper than the block's
// key (inside its quotes), and the lines of a block scalar ("key: |") indented deeper than
// the entry.
func yamlDataValues(spans []span, s string, start, end int) []span {
	for i := start; i < end; {
		lineEnd := lineEndAt(s, i, end)
		ind, key, rest := yamlLine(s[i:lineEnd])
		i = nextLine(s, lineEnd, end)
		if (key != "data" && key != "stringData") || strings.TrimSpace(rest) != "" {
			continue
		}
		for i < end { // the block's entries: lines indented deeper than ind
			le := lineEndAt(s, i, end)
			line := s[i:le]
			if strings.TrimSpace(line) == "" {
				i = nextLine(s, le, end)
				continue
			}
			eind, ekey, erest := yamlLine(line)
			if eind <= ind {
				break
			}
			next := nextLine(s, le, end)
			v := strings.TrimSpace(erest)
			switch {
			case ekey == "" || v == "":
			case v[0] == '|' || v[0] == '>':
				// A block scalar: the lines indented deeper than this entry.
				be, ce := next, next
				for be < end {
					ble := lineEndAt(s, be, end)
					if l := s[be:ble]; strings.TrimSpace(l) != "" {
						if leadingBlanks(l) <= eind {
							break
						}
						ce = ble
					}
					be = nextLine(s, ble, end)
				}
				if ce > next {
					spans = append(spans, span{next + leadingBlanks(s[next:ce]), ce})
				}
				next = be
			default:
				vs := le - len(strings.TrimLeft(erest, " \t"))
				ve := vs + len(strings.TrimRight(s[vs:le], " \t\r"))
				if q := s[vs]; (q == '"' || q == '\'') && ve-vs >= 2 && s[ve-1] == q {
					vs, ve = vs+1, ve-1
				}
				spans = append(spans, span{vs, ve})
			}
			i = next
		}
	}
	return spans
}

// yamlLine splits a YAML line into its indentation (a "- " list marker counts as
// indentation), its key when it is "key:" followed by a blank or its end, and the rest
// after the colon.
func yamlLine(line string) (ind int, key, rest string) {
	ind = leadingBlanks(line)
	body := line[ind:]
	for strings.HasPrefix(body, "- ") {
		ind += 2
		body = body[2:]
	}
	k := 0
	for k < len(body) && (isKeyByte(body[k]) || body[k] == '/') {
		k++
	}
	if k > 0 && k < len(body) && (body[k] == '"' || body[k] == '\'') {
		k++ // a quoted key's closing quote
	}
	if k == 0 || k >= len(body) || body[k] != ':' || k+1 < len(body) && body[k+1] != ' ' && body[k+1] != '\t' && body[k+1] != '\r' {
		return ind, "", ""
	}
	return ind, strings.Trim(body[:k], `"'`), body[k+1:]
}

func leadingBlanks(line string) int {
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	return n
}

// lineEndAt is the end of the line starting at s[i], before its "\n", at most end.
func lineEndAt(s string, i, end int) int {
	if k := strings.IndexByte(s[i:end], '\n'); k >= 0 {
		return i + k
	}
	return end
}

func nextLine(s string, lineEnd, end int) int {
	if lineEnd < end {
		return lineEnd + 1
	}
	return end
}

// jsonDataValues adds the string values of every "data" and "stringData" object in
// s[start:end] (kubectl's -o json).
func jsonDataValues(spans []span, s string, start, end int) []span {
	for _, name := range []string{`"data"`, `"stringData"`} {
		for i := start; ; {
			k := strings.Index(s[i:end], name)
			if k < 0 {
				break
			}
			p := skipJSONBlanks(s, i+k+len(name), end)
			i += k + len(name)
			if p >= end || s[p] != ':' {
				continue
			}
			if p = skipJSONBlanks(s, p+1, end); p >= end || s[p] != '{' {
				continue
			}
			for p++; ; p++ { // members, "key": "value", up to '}'
				if p = skipJSONBlanks(s, p, end); p >= end || s[p] != '"' {
					break
				}
				if p = skipJSONBlanks(s, jsonStringEnd(s, p, end), end); p >= end || s[p] != ':' {
					break
				}
				if p = skipJSONBlanks(s, p+1, end); p >= end || s[p] != '"' {
					break
				}
				ve := jsonStringEnd(s, p, end)
				if ve-1 > p+1 && s[ve-1] == '"' {
					spans = append(spans, span{p + 1, ve - 1})
				}
				if p = skipJSONBlanks(s, ve, end); p >= end || s[p] != ',' {
					break
				}
			}
		}
	}
	return spans
}

func skipJSONBlanks(s string, p, end int) int {
	for p < end && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r') {
		p++
	}
	return p
}

// jsonStringEnd returns the offset after the JSON string starting at s[p] ('"'), or end.
func jsonStringEnd(s string, p, end int) int {
	for q := p + 1; q < end; q++ {
		switch s[q] {
		case '\\':
			q++
		case '"':
			return q + 1
		case '\n':
			return q
		}
	}
	return end
}
