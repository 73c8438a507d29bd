package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

// semanticStub is a core backend that also serves semantic inject.
type semanticStub struct {
	coreStub
	mu  sync.Mutex
	got []string
}

func (s *semanticStub) SemanticContext(_ context.Context, project, prompt string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, project+"|"+prompt)
	return "<memnode-context>\nrelated\n</memnode-context>", nil
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/api/context/semantic", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSemanticContextRoute(t *testing.T) {
	stub := &semanticStub{}
	srv, err := api.New(api.Config{Token: "tok", Backend: stub})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	code, body := post(t, ts.URL, `{"prompt":"why does the login cookie expire early?","project":"demo"}`)
	if code != 200 || !strings.Contains(body, "related") {
		t.Fatalf("semantic = %d %q", code, body)
	}
	if len(stub.got) != 1 || stub.got[0] != "demo|why does the login cookie expire early?" {
		t.Fatalf("backend got %q", stub.got)
	}
	if code, _ := post(t, ts.URL, `{"prompt":"x"}`); code != http.StatusBadRequest {
		t.Fatalf("missing project = %d, want 400", code)
	}

	// A backend without semantic inject has no such route.
	plain, _ := api.New(api.Config{Token: "tok", Backend: coreStub{}})
	ts2 := httptest.NewServer(plain.Handler())
	defer ts2.Close()
	if code, _ := post(t, ts2.URL, `{"prompt":"why does the login cookie expire early?","project":"demo"}`); code != http.StatusNotFound {
		t.Fatalf("route on a plain backend = %d, want 404", code)
	}
}

// TestSearchModeParam: ?mode= reaches the search service through the client.
func TestSearchModeParam(t *testing.T) {
	ctx := context.Background()
	rep, err := replica.Open(ctx, replica.Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	svc := search.NewService(rep, search.Config{})
	if _, err := svc.SaveNote(ctx, apitype.Note{Text: "background worker stuck on a closed channel", Project: "p"}); err != nil {
		t.Fatal(err)
	}
	srv, _ := api.New(api.Config{Token: "tok", Backend: coreStub{}, Search: svc})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	c := client.New(ts.URL, "tok")
	if _, err := c.Search(ctx, apitype.SearchQuery{Text: "stalled daemon", Mode: "vector"}); err == nil || !strings.Contains(err.Error(), "embedding model") {
		t.Fatalf("vector mode without vectors: %v, want a 400 naming the missing model", err)
	}
	emb := embed.NewHashing(64, map[string]string{"stalled": "stuck", "daemon": "worker"})
	idx := embed.NewIndex(emb.Dim())
	miss, _ := rep.MissingVectors(ctx, emb.ModelID(), 10)
	for _, m := range miss {
		v, _ := emb.Embed(ctx, []string{m.Text})
		idx.Add(m.ID, v[0])
	}
	svc.SetVectors(vectors{emb, idx})
	res, err := c.Search(ctx, apitype.SearchQuery{Text: "stalled daemon", Mode: "vector"})
	if err != nil || res.Ranking != "vector" || len(res.Hits) != 1 {
		t.Fatalf("vector mode: %+v %v", res, err)
	}
	res, err = c.Search(ctx, apitype.SearchQuery{Text: "stalled daemon", Mode: "fts"})
	if err != nil || res.Ranking != "fts" || len(res.Hits) != 0 {
		t.Fatalf("fts mode: %+v %v", res, err)
	}
}

type vectors struct {
	e   embed.Embedder
	idx *embed.Index
}

func (v vectors) Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error) {
	q, err := v.e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v.idx.Search(q[0], k), nil
}

func (v vectors) Len() int { return v.idx.Len() }
