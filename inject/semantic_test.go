package inject

import (
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
)

func TestSemanticBudget(t *testing.T) {
	long := strings.Repeat("überlong title word ", 200)
	obs := []memory.Observation{
		{ID: "a", Type: "bugfix", Title: "login  bug\nfixed", Subtitle: "cookie", Facts: []string{"expired early"}},
		{ID: "b", Type: "discovery", Title: "worker stuck"},
	}
	cases := []struct {
		name    string
		obs     []memory.Observation
		budget  int
		want    []string
		notWant []string
	}{
		{"all fit", obs, 600, []string{"- a bugfix: login bug fixed — cookie (expired early)\n", "- b discovery: worker stuck\n"}, nil},
		{"second cut", obs, 50, []string{"- a bugfix:"}, []string{"- b "}},
		{"first clipped", []memory.Observation{{ID: "c", Type: "change", Title: long}, obs[1]}, 100, []string{"- c change: überlong", "…\n"}, []string{"- b "}},
		{"budget below the frame", obs[:1], 1, []string{"…\n"}, []string{"- a"}},
		{"none", nil, 600, nil, []string{"- "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Semantic(tc.obs, tc.budget)
			if !strings.HasPrefix(got, "<memnode-context>\n") || !strings.HasSuffix(got, "</memnode-context>") {
				t.Fatalf("not wrapped in the context tag: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in %q", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in %q", w, got)
				}
			}
			if tc.budget >= 100 && memory.EstimateTokens(got) > tc.budget+1 {
				t.Errorf("%d tokens over a budget of %d", memory.EstimateTokens(got), tc.budget)
			}
		})
	}
}
