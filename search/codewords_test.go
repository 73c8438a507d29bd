package search_test

import (
	"context"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
)

// Code-aware tokens: the parts of an identifier match the words a developer asks with,
// and the exact identifier, error code or path still ranks its own record first.
func TestSplitIdentifiersMatchTheirWords(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	ids := commitTexts(t, r,
		"Call OnLoad and OnUnload callbacks of every module",                 // 0
		"the token expired error is shown when a session is old",             // 1
		"return ErrTokenExpired from the verifier",                           // 2
		"parse timeout values of the config",                                 // 3
		"parse_timeout is read from settings.json",                           // 4
		"retry with HTTP2 when the server offers it",                         // 5
		"fix ERR_CONN_RESET_4471 in internal/auth/middleware.go",             // 6
		"modules get loaded and unloaded by the admin API without callbacks", // 7: the words, no names
		"rename parseJSONBody",                                               // 8
		"unrelated note about dark mode",                                     // 9
	)
	s := search.New(r, search.Config{})
	ctx := context.Background()
	first := func(q string) string {
		t.Helper()
		res, err := s.Search(ctx, search.Query{Text: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			return ""
		}
		return res.Hits[0].ID
	}
	in := func(q, id string, k int) bool {
		t.Helper()
		res, err := s.Search(ctx, search.Query{Text: q, Limit: k})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.ID == id {
				return true
			}
		}
		return false
	}
	// The parts: "unload" reaches OnUnload (the index holds "On Unload" beside the text).
	if !in("module unload callback", ids[0], 2) {
		t.Error("'module unload callback' does not reach the OnUnload record in the top 2")
	}
	if !in("http 2 server", ids[5], 1) {
		t.Error("'http 2 server' does not reach the HTTP2 record first")
	}
	if !in("parse json body", ids[8], 1) {
		t.Error("'parse json body' does not reach parseJSONBody first")
	}
	// The query side: a camelCase name also finds the record that spells it out.
	if !in("parseTimeout", ids[3], 2) {
		t.Error("parseTimeout does not reach 'parse timeout values' in the top 2")
	}
	// Exact names still rank first.
	for q, want := range map[string]string{
		"ErrTokenExpired":             ids[2],
		"parse_timeout":               ids[4],
		"ERR_CONN_RESET_4471":         ids[6],
		"internal/auth/middleware.go": ids[6],
		"OnUnload":                    ids[0],
		"parseJSONBody":               ids[8],
	} {
		if got := first(q); got != want {
			t.Errorf("%s: first hit %s, want %s", q, got, want)
		}
	}
}
