package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
)

// idsBody is a valid {"ids": [...]} body of at least n bytes.
func idsBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"ids":[`)
	for b.Len() < n {
		b.WriteString(`"01JAAAAAAAAAAAAAAAAAAAAAAA",`)
	}
	b.WriteString(`"x"]}`)
	return b.Bytes()
}

func TestEveryRouteBoundsItsBody(t *testing.T) {
	_, _, url := searchNode(t)
	note, _ := json.Marshal(apitype.Note{Text: strings.Repeat("word ", 300<<10), Project: "p"})
	ids := idsBody(1<<20 + 1)
	cases := []struct {
		path string
		body []byte
	}{
		{"/api/records/batch", ids},
		{"/api/forget", ids},
		{"/api/memories", note},
		{"/api/peers/join", ids},
		{"/api/status", ids}, // a GET route: a body is bounded there too
	}
	for _, c := range cases {
		for _, declared := range []bool{true, false} {
			var body io.Reader = bytes.NewReader(c.body)
			if !declared {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, url+c.path, body)
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.path == "/api/status" || c.path == "/api/peers/join" {
				// No POST handler there (405/404) or no sync (503): a 4xx/5xx without reading it all.
				if resp.StatusCode < 400 {
					t.Errorf("%s (declared=%v): status %d", c.path, declared, resp.StatusCode)
				}
				continue
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "at most 1 MiB") {
				t.Errorf("%s (declared=%v, %d bytes): %d %s, want 413 naming the 1 MiB limit", c.path, declared, len(c.body), resp.StatusCode, msg)
			}
		}
	}
}

func TestNoteLengthIsCapped(t *testing.T) {
	_, cl, _ := searchNode(t)
	ctx := context.Background()
	_, err := cl.SaveNote(ctx, apitype.Note{Text: strings.Repeat("a", memory.MaxNoteBytes+1), Project: "p"})
	if err == nil || !strings.Contains(err.Error(), "at most 64 KiB") {
		t.Fatalf("oversized note: err = %v, want one naming the 64 KiB cap", err)
	}
	_, err = cl.SaveNote(ctx, apitype.Note{Text: "fine", Title: strings.Repeat("t", memory.MaxTitleBytes+1), Project: "p"})
	if err == nil || !strings.Contains(err.Error(), "title") {
		t.Fatalf("oversized title: err = %v", err)
	}
	res, err := cl.SaveNote(ctx, apitype.Note{Text: strings.Repeat("b", memory.MaxNoteBytes), Project: "p"})
	if err != nil || res.ID == "" {
		t.Fatalf("a note at the cap: %+v %v", res, err)
	}
}

func TestIDRoutesNameTheBodyTheyWant(t *testing.T) {
	_, _, url := searchNode(t)
	for _, path := range []string{"/api/records/batch", "/api/forget"} {
		req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(`{"ids": "not a list"}`))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), `{\"ids\"`) {
			t.Errorf("%s: %d %s, want 400 naming the {\"ids\": …} body", path, resp.StatusCode, msg)
		}
	}
}
