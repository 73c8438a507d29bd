package search

import (
	"slices"
	"strings"
)

// Developer vocabulary: words and abbreviations developers use for the same thing
// (backend/upstream, regexp/regular expression, wasm/WebAssembly, config/configuration,
// auth/authentication, k8s/kubernetes, db/database, …). A query word found here also
// ranks by its equivalents, OR-ed at half the word's own weight (synonymWeight), so a
// record in the other words is found and one in the asker's words still comes first. A
// small hand-made table, no model; plurals are looked up by their singular, and a pair of
// words ("regular expression") by the pair.

// vocabulary is the table: each group's words are equivalent (a word in several groups,
// like auth, has the equivalents of all of them).
func vocabulary() [][]string {
	return [][]string{
		{"backend", "upstream"}, {"regexp", "regex", "regular expression"},
		{"wasm", "webassembly", "web assembly"}, {"config", "configuration", "conf"},
		{"auth", "authentication"}, {"auth", "authorization"}, {"k8s", "kubernetes"}, {"db", "database"},
		{"repo", "repository"}, {"dir", "directory", "folder"}, {"env", "environment"},
		{"var", "variable"}, {"func", "function"}, {"arg", "argument"}, {"param", "parameter"},
		{"msg", "message"}, {"err", "error"}, {"impl", "implementation"}, {"dep", "dependency"},
		{"js", "javascript"}, {"ts", "typescript"}, {"perf", "performance"}, {"req", "request"},
		{"res", "resp", "response"}, {"ws", "websocket"}, {"cert", "certificate"},
		{"doc", "documentation"}, {"init", "initialize", "initialization"}, {"max", "maximum"},
		{"min", "minimum"}, {"tmp", "temp", "temporary"}, {"pkg", "package"}, {"lib", "library"},
		{"ci", "continuous integration"}, {"cli", "command line"}, {"symlink", "symbolic link"},
		{"jwt", "json web token"}, {"gc", "garbage collection"}, {"i18n", "internationalization"},
		{"ssl", "tls"}, {"prod", "production"}, {"app", "application"}, {"spec", "specification"},
		{"async", "asynchronous"}, {"redirect", "redir"}, {"e2e", "end to end"},
		{"ui", "user interface"}, {"os", "operating system"}, {"vm", "virtual machine"},
		{"mem", "memory"},
	}
}

// equivalents returns the other forms of w (lower case, one word or two) in vocab (the
// table, built once per query), nil for none.
func equivalents(vocab [][]string, w string) []string {
	if s, ok := strings.CutSuffix(w, "s"); ok && len(s) >= 3 && !strings.HasSuffix(s, "s") && !inVocabulary(vocab, w) {
		w = s
	}
	var out []string
	for _, g := range vocab {
		if !slices.Contains(g, w) {
			continue
		}
		for _, o := range g {
			if o != w && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

func inVocabulary(vocab [][]string, w string) bool {
	return slices.ContainsFunc(vocab, func(g []string) bool { return slices.Contains(g, w) })
}
