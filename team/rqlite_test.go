package team

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestQueryRefusesAShortAnswer: a node (or something on its port) that answers a query of
// two statements with one result gets an error naming it, not a panic in the caller that
// reads the second statement's rows.
func TestQueryRefusesAShortAnswer(t *testing.T) {
	// httptest listens on 127.0.0.1 only; Close waits for its handlers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results":[{"columns":["n"],"values":[[7]]}]}`))
	}))
	t.Cleanup(srv.Close)

	c := newRQ([]string{srv.URL}, "alice", testPassword, 5*time.Second)
	ctx := context.Background()
	_, err := c.query(ctx, levelWeak, []stmt{st(`SELECT 1`), st(`SELECT 2`)})
	if err == nil || !strings.Contains(err.Error(), "1 results for 2 statements") {
		t.Fatalf("short answer: err = %v, want one naming 1 result for 2 statements", err)
	}
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT 1`)})
	if err != nil || len(res) != 1 || len(res[0].Values) != 1 {
		t.Fatalf("full answer: %+v, %v", res, err)
	}
}

// TestScalarRefusesAnEmptyRow: a COUNT or MAX answered with no row is an error, not a zero
// (a zero MAX(tseq) would make a device reuse its own sequence numbers).
func TestScalarRefusesAnEmptyRow(t *testing.T) {
	for _, r := range []queryResult{{}, {Values: [][]any{{}}}} {
		if _, err := r.scalar(); err == nil {
			t.Errorf("scalar of %+v: no error", r)
		}
	}
	n, err := queryResult{Values: [][]any{{json.Number("42")}}}.scalar()
	if err != nil || n != 42 {
		t.Errorf("scalar of 42 = %d, %v", n, err)
	}
}
