package search_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

func TestInformativeTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"What kind of car does Evan drive?", []string{`"kind"`, `"of"`, `"car"`, `"Evan"`, `"drive?"`}},
		// A developer's stop list: articles, auxiliaries, pronouns and question words go;
		// words that mean something in code (after, at, all, only, not, or) stay.
		{"how do I read c.res after awaiting next", []string{`"read"`, `"c.res"`, `"after"`, `"awaiting"`, `"next"`}},
		{"are all matchers only at the top", []string{`"all"`, `"matchers"`, `"only"`, `"at"`, `"top"`}},
		{"What is Caroline's identity?", []string{`"Caroline"`, `"identity?"`}},
		{"what is it", []string{`"what"`, `"is"`, `"it"`}}, // nothing else: every word stays
		{`"what is" it`, []string{`"what is"`}},            // a phrase is never a stop word
	}
	for _, c := range cases {
		if got := search.Parse(c.in).Informative(); !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q).Informative() = %v, want %v", c.in, got, c.want)
		}
	}
	e := search.Parse("fix ERR_CONN_RESET_4471 in parseHookPayload for internal/auth/middleware.go now")
	for term, want := range map[string]bool{`"ERR_CONN_RESET_4471"`: true, `"parseHookPayload"`: true,
		`"internal/auth/middleware.go"`: true, `"fix"`: false, `"now"`: false} {
		if e.Identifier(term) != want {
			t.Errorf("Identifier(%s) = %v, want %v", term, !want, want)
		}
	}
}

// commitTexts stores one observation per text in session s of project p, a minute apart,
// and returns their IDs.
func commitTexts(t *testing.T, r *replica.Replica, texts ...string) []string {
	t.Helper()
	b := &store.Batch{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i, x := range texts {
		b.Observations = append(b.Observations, memory.Observation{SessionID: "s", Project: "p", Type: "note",
			Title: x, Narrative: x, CreatedAt: base + int64(i)*60_000})
	}
	res, err := r.Commit(context.Background(), b)
	if err != nil || len(res.Observations) != len(texts) {
		t.Fatalf("commit: %v", err)
	}
	var ids []string
	for _, o := range res.Observations {
		ids = append(ids, o.ID)
	}
	return ids
}

// The example: the question words ("what", "kind", "does") found in many records
// must not outrank the one record about the car.
func TestRareWordOutranksQuestionWords(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	ids := commitTexts(t, r,
		"Evan: what kind of day does it feel like to you",
		"Sam: does it matter what kind of music we play",
		"Evan: my new car is a Prius, I drive it to work",
		"Evan: what kind of person does that",
		"Sam: what does Evan think about it",
	)
	s := search.New(r, search.Config{})
	res, err := s.Search(context.Background(), search.Query{Text: "What kind of car does Evan drive?", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].ID != ids[2] || res.Mode != "any" {
		t.Fatalf("want the car turn first (mode any), got %s %+v", res.Mode, res.Hits)
	}
}

// A record whose session neighbour matches the question is lifted above an equal match
// that stands alone; a record matching nothing is not brought in.
func TestSessionNeighbourLiftsAnAnswer(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	ids := commitTexts(t, r,
		"what did you research last month about adoption",
		"agencies in town were many",
		"unrelated chatter about the weather",
		"agencies in town were few", // the same match, newer: without the lift it comes first
		"more unrelated chatter",
	)
	s := search.New(r, search.Config{})
	res, err := s.Search(context.Background(), search.Query{Text: "adoption agencies research", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	if len(got) != 3 || got[0] != ids[0] || got[1] != ids[1] || got[2] != ids[3] {
		t.Fatalf("want [question, its answer, the lone match], got %v (ids %v)", got, ids)
	}
}
