package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

// coreStub is the minimum core backend: always ready, no ingestion.
type coreStub struct{}

func (coreStub) Ready() bool { return true }
func (coreStub) Ingest(context.Context, apitype.Event) (apitype.EventReply, error) {
	return apitype.EventReply{}, errors.New("not in this test")
}
func (coreStub) Context(context.Context, string, string) (apitype.Context, error) {
	return apitype.Context{}, nil
}
func (coreStub) ObservationsByFile(context.Context, string, []string, int) ([]apitype.FileObservation, error) {
	return nil, nil
}
func (coreStub) Status(context.Context) (apitype.Status, error) { return apitype.Status{}, nil }

// searchNode serves the search routes over a real replica on httptest.
func searchNode(t *testing.T) (*replica.Replica, *client.Client, string) {
	t.Helper()
	testkit.LeakCheck(t) // first: its check runs after the server and the replica closed
	rep := testkit.OpenReplica(t, "dev-a")
	srv, err := api.New(api.Config{Token: "tok", Backend: coreStub{}, Search: search.NewService(rep, search.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return rep, client.New(ts.URL, "tok"), ts.URL
}

// sampleRecords is the claude-mem sample as an import body (JSONL).
func sampleRecords(t *testing.T) io.Reader {
	t.Helper()
	ctx := context.Background()
	cm, err := importer.OpenClaudeMem(ctx, "../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db")
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	var buf bytes.Buffer
	w := importer.NewWriter(&buf)
	if err := cm.Each(ctx, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func TestSearchRoutesEndToEnd(t *testing.T) {
	ctx := context.Background()
	_, c, _ := searchNode(t)
	res, err := c.Import(ctx, sampleRecords(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Observations != 9 || res.Summaries != 4 || res.Prompts != 4 || res.Sessions != 4 {
		t.Fatalf("import %+v", res)
	}
	again, err := c.Import(ctx, sampleRecords(t))
	if err != nil || again.Observations+again.Prompts+again.Summaries+again.Sessions != 0 {
		t.Fatalf("second import not a no-op: %+v %v", again, err)
	}

	hits, err := c.Search(ctx, apitype.SearchQuery{Text: "idempotency", Project: "billing-api", Limit: 5})
	if err != nil || len(hits.Hits) < 2 {
		t.Fatalf("search: %v %+v", err, hits)
	}
	// prefix=1 (the viewer's as-you-type box) matches the last word's start; without it
	// a query matches words.
	typed, err := c.Search(ctx, apitype.SearchQuery{Text: "webho", Project: "billing-api", Prefix: true})
	if err != nil || len(typed.Hits) < 2 {
		t.Fatalf("prefix search: %v %+v", err, typed)
	}
	words, err := c.Search(ctx, apitype.SearchQuery{Text: "webho", Project: "billing-api"})
	if err != nil || len(words.Hits) != 0 {
		t.Fatalf("a word search matched a prefix: %v %+v", err, words)
	}
	tl, err := c.Timeline(ctx, apitype.TimelineQuery{Anchor: hits.Hits[0].ID, Before: 2, After: 2})
	if err != nil || tl.AnchorID != hits.Hits[0].ID || len(tl.Items) == 0 {
		t.Fatalf("timeline: %v %+v", err, tl)
	}
	recs, err := c.Get(ctx, []string{hits.Hits[0].ID})
	if err != nil || len(recs.Items) != 1 || recs.Items[0].Observation == nil {
		t.Fatalf("get: %v %+v", err, recs)
	}

	saved, err := c.SaveNote(ctx, apitype.Note{Project: "billing-api", Text: "Webhook secrets rotate monthly <private>hunter2</private>"})
	if err != nil || saved.ID == "" {
		t.Fatalf("save: %v %+v", err, saved)
	}
	note, err := c.Get(ctx, []string{saved.ID})
	if err != nil || len(note.Items) != 1 || strings.Contains(note.Items[0].Observation.Narrative, "hunter2") {
		t.Fatalf("note: %v %+v", err, note)
	}

	fr, err := c.Forget(ctx, []string{saved.ID})
	if err != nil || fr.Found != 1 {
		t.Fatalf("forget: %v %+v", err, fr)
	}
	gone, err := c.Search(ctx, apitype.SearchQuery{Text: "webhook secrets rotate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range gone.Hits {
		if h.ID == saved.ID {
			t.Fatalf("forgotten note still found: %+v", h)
		}
	}

	var buf bytes.Buffer
	n, err := c.Export(ctx, "", &buf)
	if err != nil {
		t.Fatal(err)
	}
	// header + 4 sessions + 4 prompts + 9 observations + 4 summaries + 1 tombstone
	if n != 23 || strings.Count(buf.String(), "\n") != 23 {
		t.Fatalf("export wrote %d records:\n%s", n, buf.String())
	}
}

func TestSearchRoutesErrors(t *testing.T) {
	ctx := context.Background()
	_, c, url := searchNode(t)
	for name, call := range map[string]func() error{
		"bad type":  func() error { _, err := c.Search(ctx, apitype.SearchQuery{Type: "files"}); return err },
		"bad limit": func() error { _, err := c.Search(ctx, apitype.SearchQuery{Limit: -3}); return err },
		"no anchor": func() error { _, err := c.Timeline(ctx, apitype.TimelineQuery{}); return err },
		"no ids":    func() error { _, err := c.Get(ctx, nil); return err },
		"empty note": func() error {
			_, err := c.SaveNote(ctx, apitype.Note{Project: "p", Text: "<private>x</private>"})
			return err
		},
		"bad import rec": func() error { _, err := c.Import(ctx, strings.NewReader(`{"kind":"observation"}`+"\n")); return err },
	} {
		if err := call(); !errors.Is(err, client.ErrRejected) {
			t.Errorf("%s: want ErrRejected, got %v", name, err)
		}
	}
	if _, err := c.Timeline(ctx, apitype.TimelineQuery{Anchor: "no-such-thing"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown anchor: want ErrNotFound, got %v", err)
	}
	resp, err := http.Get(url + "/api/search?query=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d", resp.StatusCode)
	}
	bad := client.New(url, "wrong")
	if _, err := bad.Search(ctx, apitype.SearchQuery{Text: "x"}); !errors.Is(err, client.ErrRejected) {
		t.Errorf("wrong token: %v", err)
	}
}
