package api_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
)

// capturingSearch is a search backend that keeps the query it was asked.
type capturingSearch struct {
	api.SearchBackend // nil: only Search is called
	got               chan apitype.SearchQuery
}

func (c capturingSearch) Search(_ context.Context, q apitype.SearchQuery) (apitype.Results, error) {
	c.got <- q
	return apitype.Results{}, nil
}

// A search query crosses the client, HTTP and the route whole: both ends use apitype's one
// codec, and a field one end forgot would arrive zero here.
func TestSearchQueryCrossesTheWireWhole(t *testing.T) {
	want := apitype.SearchQuery{Text: "webhook retries & 100%", Project: "billing api", Type: "observations",
		ObsTypes: []string{"bugfix", "decision"}, Device: "laptop", File: "internal/auth/middleware.go",
		Platform: "codex", Since: 1_780_000_000_000, Until: 1_790_000_000_000, Limit: 7, Offset: 3,
		Order: "oldest", Mode: "fts", Prefix: true}
	for i, v := 0, reflect.ValueOf(want); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("set SearchQuery.%s in this test: every field must cross the wire", v.Type().Field(i).Name)
		}
	}
	be := capturingSearch{got: make(chan apitype.SearchQuery, 1)}
	srv, err := api.New(api.Config{Token: "tok", Backend: coreStub{}, Search: be})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	if _, err := client.New(ts.URL, "tok").Search(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if got := <-be.got; !reflect.DeepEqual(got, want) {
		t.Errorf("the route got\n%+v\nthe client sent\n%+v", got, want)
	}
}
