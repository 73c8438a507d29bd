package mcpserver_test

import (
	"slices"
	"strings"
	"testing"
)

// TestClaudeMemArgumentsGiveTheSameHits: claude-mem's argument names and forms (dateStart,
// dateEnd, orderBy, type=<observation type>, numeric IDs) and its tool name
// important_workflow answer exactly what memnode's own names do.
func TestClaudeMemArgumentsGiveTheSameHits(t *testing.T) {
	cs := session(t)
	if txt, isErr := call(t, cs, "important_workflow", map[string]any{}); isErr || !strings.Contains(txt, "3-LAYER WORKFLOW") {
		t.Fatalf("important_workflow: %v %s", isErr, txt)
	}
	pairs := []struct {
		name            string
		memnode, cmem   map[string]any
		wantIn, wantOut string
	}{
		{"type names observation types",
			map[string]any{"query": "VAT OR export", "type": "observations", "obs_type": "bugfix"},
			map[string]any{"query": "VAT OR export", "type": "bugfix"},
			"VAT applied twice", "reverse-charge"},
		{"several types",
			map[string]any{"type": "observations", "obs_type": "bugfix,decision", "project": "billing-api"},
			map[string]any{"type": "bugfix,decision", "project": "billing-api"},
			"Chose DB unique constraint", "Tax rates"},
		{"dates as ISO strings, oldest first",
			map[string]any{"project": "billing-api", "since": "2026-10-01T12:00:00Z", "until": "2026-10-02T09:00:00Z", "order": "oldest"},
			map[string]any{"project": "billing-api", "dateStart": "2026-10-01T12:00:00Z", "dateEnd": "2026-10-02T09:00:00Z", "orderBy": "date_asc"},
			"Idempotency keys", "VAT applied twice"},
		{"dates as epoch ms numbers, newest first",
			map[string]any{"query": "billing OR invoice OR VAT OR export", "since": "1790845560000", "until": "1790953980000", "order": "newest"},
			map[string]any{"query": "billing OR invoice OR VAT OR export", "dateStart": 1790845560000, "dateEnd": 1790953980000, "orderBy": "date_desc"},
			"Invoice export timed out", "Export streams CSV"},
		{"platform",
			map[string]any{"query": "idempotency", "platform": "claude-code"},
			map[string]any{"query": "idempotency", "platformSource": "claude-code"},
			"Stripe webhook", "Android"},
		{"claude-mem's platformSource for Claude Code",
			map[string]any{"query": "idempotency", "platform": "claude-code"},
			map[string]any{"query": "idempotency", "platformSource": "claude"},
			"Stripe webhook", "Android"},
		{"relevance",
			map[string]any{"query": "idempotency", "order": "relevance"},
			map[string]any{"query": "idempotency", "orderBy": "relevance"},
			"Stripe webhook", "Android"},
	}
	for _, p := range pairs {
		own, isErr := call(t, cs, "search", p.memnode)
		if isErr {
			t.Fatalf("%s: memnode names: %s", p.name, own)
		}
		alias, isErr := call(t, cs, "search", p.cmem)
		if isErr {
			t.Fatalf("%s: claude-mem names: %s", p.name, alias)
		}
		if own != alias {
			t.Errorf("%s: claude-mem names answer differently.\nmemnode:\n%s\nclaude-mem:\n%s", p.name, own, alias)
		}
		if !strings.Contains(own, p.wantIn) || strings.Contains(own, p.wantOut) {
			t.Errorf("%s: want %q and not %q in:\n%s", p.name, p.wantIn, p.wantOut, own)
		}
	}

	// Numeric IDs: claude-mem observation #4 is the Stripe webhook observation.
	idx, _ := call(t, cs, "search", map[string]any{"query": "Stripe webhook idempotency keys", "limit": 1})
	m := idRE.FindStringSubmatch(idx)
	if m == nil || !strings.Contains(idx, "Idempotency keys") {
		t.Fatalf("no ID for observation 4:\n%s", idx)
	}
	byID, _ := call(t, cs, "get_observations", map[string]any{"ids": []any{m[1]}})
	byNum, isErr := call(t, cs, "get_observations", map[string]any{"ids": []any{4}})
	if isErr || byNum != byID || !strings.Contains(byNum, "Idempotency keys for Stripe webhook") {
		t.Errorf("get_observations ids=[4]:\n%s\nwant the same as by ID:\n%s", byNum, byID)
	}
	if txt, _ := call(t, cs, "get_observations", map[string]any{"ids": []any{"4"}}); txt != byID {
		t.Errorf("get_observations ids=[\"4\"]:\n%s", txt)
	}
	tlID, _ := call(t, cs, "timeline", map[string]any{"anchor": m[1], "depth_before": 1, "depth_after": 1})
	tlNum, isErr := call(t, cs, "timeline", map[string]any{"anchor": 4, "depth_before": 1, "depth_after": 1})
	if isErr || tlNum != tlID {
		t.Errorf("timeline anchor=4:\n%s\nwant the same as by ID:\n%s", tlNum, tlID)
	}
	// type=<observation type> filters the timeline as it filters search.
	all, _ := call(t, cs, "timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20})
	own, isErr := call(t, cs, "timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20, "type": "observations", "obs_type": "bugfix"})
	alias, isAliasErr := call(t, cs, "timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20, "type": "bugfix"})
	if isErr || isAliasErr || own != alias {
		t.Errorf("timeline type=bugfix:\n%s\nwant the same as type=observations obs_type=bugfix:\n%s", alias, own)
	}
	checkTimelineTypes(t, own, all, "bugfix")
	// Several observation types, and memnode's own record kinds.
	two, _ := call(t, cs, "timeline", map[string]any{"anchor": 4, "depth_before": 20, "depth_after": 20, "type": "bugfix,decision"})
	checkTimelineTypes(t, two, all, "bugfix", "decision")
	if !strings.Contains(two, "decision") {
		t.Errorf("timeline type=bugfix,decision has no decision:\n%s", two)
	}

	// S<n> is claude-mem's session-summary anchor.
	if tl, isErr := call(t, cs, "timeline", map[string]any{"anchor": "S2", "depth_before": 0, "depth_after": 0}); isErr || !strings.Contains(tl, "> ") {
		t.Errorf("timeline anchor=S2: %s", tl)
	}
	if out, _ := call(t, cs, "get_observations", map[string]any{"ids": []any{999}}); !strings.Contains(out, "None of these IDs") {
		t.Errorf("an unknown number: %s", out)
	}
}

func TestClaudeMemArgumentErrors(t *testing.T) {
	cs := session(t)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"orderBy": "sideways"}, "orderBy"},
		{"search", map[string]any{"order": "newest", "orderBy": "date_asc"}, "disagree"},
		{"search", map[string]any{"dateStart": "last week"}, "dateStart"},
		{"search", map[string]any{"dateEnd": 1.5}, "dateEnd"},
		{"search", map[string]any{"dateStart": true}, "dateStart"},
		{"search", map[string]any{"since": "2026-10-01", "dateStart": "2026-10-02"}, "disagree"},
		{"search", map[string]any{"type": "bugfix,files"}, "type"},
		{"get_observations", map[string]any{"ids": []any{1.5}}, "ids"},
		{"get_observations", map[string]any{"ids": []any{true}}, "ids"},
		{"timeline", map[string]any{"anchor": -3}, "anchor"},
	}
	for _, c := range cases {
		txt, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(txt, c.want) {
			t.Errorf("%s %v: want a tool error mentioning %q, got isError=%v %q", c.tool, c.args, c.want, isErr, txt)
		}
	}
}

// checkTimelineTypes asserts that every row of a filtered timeline but the anchor ("> ") is
// an observation of one of types, that the anchor row is there, and that the unfiltered
// timeline had rows the filter dropped.
func checkTimelineTypes(t *testing.T, filtered, all string, types ...string) {
	t.Helper()
	rows, anchor := 0, false
	for _, line := range strings.Split(strings.TrimSpace(filtered), "\n")[1:] {
		if strings.HasPrefix(line, "> ") {
			anchor = true
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 || !slices.Contains(types, f[3]) {
			t.Errorf("timeline filtered to %v has the row %q:\n%s", types, line, filtered)
		}
		rows++
	}
	if !anchor || rows == 0 || strings.Count(all, "\n") <= rows+2 {
		t.Errorf("timeline filtered to %v: anchor %v, %d rows, from:\n%s\nfiltered:\n%s", types, anchor, rows, all, filtered)
	}
}
