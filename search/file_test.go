package search_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// fileFixture stores observations with file lists and returns their IDs by key.
func fileFixture(t *testing.T) (*search.Searcher, map[string]string) {
	t.Helper()
	r := testkit.OpenReplica(t, "a")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	obs := []struct {
		key           string
		read, written []string
	}{
		{"relative", nil, []string{"internal/auth/middleware.go"}},
		{"absolute", []string{"/home/dev/billing/internal/auth/middleware.go"}, nil},
		{"other-dir", []string{"web/middleware.go"}, nil},
		{"decoy-name", []string{"internal/auth/authmiddleware.go", "internal/auth/middleware.go.bak"}, nil},
		{"none", nil, nil},
	}
	b := &store.Batch{}
	for i, o := range obs {
		b.Observations = append(b.Observations, memory.Observation{SessionID: "s", Project: "billing", Type: "change",
			Title: "change " + o.key, Narrative: "touched the auth layer", FilesRead: o.read, FilesModified: o.written,
			CreatedAt: base + int64(i)*1000})
	}
	res, err := r.Commit(context.Background(), b)
	if err != nil || len(res.Observations) != len(obs) {
		t.Fatalf("commit: %v", err)
	}
	ids := map[string]string{}
	for i, o := range obs {
		ids[o.key] = res.Observations[i].ID
	}
	return search.New(r, search.Config{}), ids
}

func hitKeys(t *testing.T, s *search.Searcher, q search.Query, ids map[string]string) []string {
	t.Helper()
	res, err := s.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		for k, id := range ids {
			if id == h.ID {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestSearchByFileFilter(t *testing.T) {
	s, ids := fileFixture(t)
	cases := []struct {
		file string
		want []string
	}{
		{"internal/auth/middleware.go", []string{"absolute", "relative"}},
		{"./internal/auth/middleware.go", []string{"absolute", "relative"}},
		{"/home/dev/billing/internal/auth/middleware.go", []string{"absolute"}},
		{"middleware.go", []string{"absolute", "other-dir", "relative"}},
		{"auth/middleware.go", []string{"absolute", "relative"}},
		{"ware.go", nil}, // a path ends at a '/': no partial names
		{"authmiddleware.go", []string{"decoy-name"}},
	}
	for _, c := range cases {
		for _, text := range []string{"", "auth"} { // with and without text; the text matches every record
			if got := hitKeys(t, s, search.Query{File: c.file, Text: text}, ids); !slices.Equal(got, c.want) {
				t.Errorf("file %q text %q: got %v, want %v", c.file, text, got, c.want)
			}
		}
	}
	if _, err := s.Search(context.Background(), search.Query{File: "internal/auth/"}); err == nil {
		t.Error("a directory as file: no error")
	}
}

// Paths are in the full-text index: a file name as the query finds the records that read
// or modified it, first.
func TestSearchFindsFileNames(t *testing.T) {
	s, ids := fileFixture(t)
	res, err := s.Search(context.Background(), search.Query{Text: "middleware.go"})
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, h := range res.Hits[:min(3, len(res.Hits))] {
		top[h.ID] = true
	}
	for _, k := range []string{"relative", "absolute", "other-dir"} {
		if !top[ids[k]] {
			t.Errorf("%s not in the top 3 for middleware.go: %+v", k, res.Hits)
		}
	}
	if got := hitKeys(t, s, search.Query{Text: "internal/auth/middleware.go"}, ids); !slices.Contains(got, "relative") || slices.Contains(got, "none") {
		t.Errorf("full path: got %v", got)
	}
}
