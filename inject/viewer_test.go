package inject

import (
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// TestRenderNamesTheViewerOnlyWhenAsked: the viewer's address is in the context only with
// the setting (the node sets ViewerURL), and never a login code.
func TestRenderNamesTheViewerOnlyWhenAsked(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	in := Input{Project: "p", Now: now, Location: time.UTC, Observations: []memory.Observation{
		{ID: "o1", Type: "decision", Title: "Use FTS5", CreatedAt: now.Add(-time.Hour).UnixMilli()}}}
	lim := Limits{Observations: 10, Full: 10, Sessions: 5}
	if got := Render(in, lim); strings.Contains(got, "viewer") {
		t.Fatalf("viewer named without the setting:\n%s", got)
	}
	in.ViewerURL = "http://127.0.0.1:38800/"
	got := Render(in, lim)
	if !strings.Contains(got, "memnode viewer at http://127.0.0.1:38800/") || !strings.Contains(got, "memnode viewer --open") {
		t.Fatalf("viewer line missing:\n%s", got)
	}
	if i, j := strings.Index(got, "memnode viewer at"), strings.Index(got, "</"); i < 0 || i > j {
		t.Fatalf("viewer line outside the context block:\n%s", got)
	}
}
