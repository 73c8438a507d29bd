package search_test

import (
	"context"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
)

func TestParse(t *testing.T) {
	cases := []struct{ in, match, any string }{
		{"idempotency", `("idempotency" OR "idempotency"*)`, `("idempotency" OR "idempotency"*)`},
		{"stripe webhook", `("stripe" AND ("webhook" OR "webhook"*))`, `"stripe" OR ("webhook" OR "webhook"*)`},
		{"stripe webhook ", `("stripe" AND "webhook")`, `"stripe" OR "webhook"`},
		{`"reverse charge" vat`, `("reverse charge" AND ("vat" OR "vat"*))`, ``},
		{"idem*", `"idem"*`, `"idem"*`},
		{"redis OR postgres", `"redis" OR ("postgres" OR "postgres"*)`, ``},
		{"redis AND go", `("redis" AND "go")`, ``},
		{`foo"bar`, `("foo" AND "bar")`, ``},
		{"NEAR(a b) NOT c -d", `("NEAR(a" AND "b)" AND "NOT" AND "c" AND "-d")`, ``},
		{"🙂 --- ***", ``, ``},
		{`"unterminated phrase`, `"unterminated phrase"`, ``},
	}
	for _, c := range cases {
		e := search.ParseTyping(c.in)
		if got := e.Match(); got != c.match {
			t.Errorf("ParseTyping(%q).Match() = %s, want %s", c.in, got, c.match)
		}
		if c.any != "" && e.Any() != c.any {
			t.Errorf("ParseTyping(%q).Any() = %s, want %s", c.in, e.Any(), c.any)
		}
	}
	// An agent's or a CLI query is complete: its last word matches the word, never a prefix
	// (bm25 would count it twice and let longer words in).
	words := []struct{ in, match string }{
		{"idempotency", `"idempotency"`},
		{"stripe webhook", `("stripe" AND "webhook")`},
		{"redis OR postgres", `"redis" OR "postgres"`},
		{"idem*", `"idem"*`}, // a prefix asked for is a prefix
	}
	for _, c := range words {
		if got := search.Parse(c.in).Match(); got != c.match {
			t.Errorf("Parse(%q).Match() = %s, want %s", c.in, got, c.match)
		}
	}
	if !search.Parse("🙂 -- !!").Empty() {
		t.Error("punctuation-only text must parse to nothing")
	}
}

// TestHostileQueries runs text that is FTS5 syntax, or breaks naive quoting, against a
// real index: none may fail.
func TestHostileQueries(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	for _, q := range []string{`"`, `""`, `"""`, `*`, `a*b*`, `-`, `--verbose`, `AND`, `OR`, `NOT`, `a OR`, `OR a`, `OR OR`,
		`NEAR(a b, 3)`, `col:value`, `title:idempotency`, `^start`, `(a`, `a)`, `{a b}`, `a + b`, `'single'`, `\"`, "a\x00b",
		"😀 emoji 🚀", "日本語のテキスト", "Ünïcödé", "e-mail", "x*", `"a" "b`, "\u200b", "ǅ", "٣٤٥", "\xff\xfe"} {
		if _, err := s.Search(context.Background(), search.Query{Text: q}); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
}

func FuzzSearch(f *testing.F) {
	for _, s := range []string{"idempotency", `"reverse charge"`, "idem*", "a OR b", "NEAR(x y)", `"`, "-", "😀", "title:x", "a AND OR NOT b"} {
		f.Add(s)
	}
	r := testkit.OpenReplica(f, "a")
	importSample(f, r)
	s := search.New(r, search.Config{})
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := s.Search(context.Background(), search.Query{Text: q}); err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		if _, err := s.Search(context.Background(), search.Query{Text: q, Type: "observations", Order: "oldest"}); err != nil {
			t.Fatalf("query %q (oldest): %v", q, err)
		}
	})
}
