package replica

import (
	"context"
	"github.com/memnode/memnode/store"
	"maps"
	"slices"
	"testing"

	"github.com/memnode/memnode/memory"
)

// TestSessionPlatforms: each session asked for once, however many hits name it; a session
// that names no agent, and one not held, are left out.
func TestSessionPlatforms(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	if _, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "cc", Project: "p", Platform: "claude-code", StartedAt: 1},
		{ID: "none", Project: "p", StartedAt: 1}}}); err != nil {
		t.Fatal(err)
	}
	asked := append(slices.Repeat([]string{"none", "cc"}, 20), "", "unknown")
	got, err := r.SessionPlatforms(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"cc": "claude-code"}; !maps.Equal(got, want) {
		t.Fatalf("platforms %v, want %v", got, want)
	}
}
