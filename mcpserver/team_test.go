package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/mcpserver"
)

// teamMemory is the local memory plus a team searcher that records what it was asked.
type teamMemory struct {
	mcpserver.Memory
	asked []string
	cut   bool // the cluster does not answer
}

var _ mcpserver.TeamSearcher = (*teamMemory)(nil)

func (m *teamMemory) TeamSearch(_ context.Context, query, project string, limit int) (apitype.TeamSearchReply, error) {
	m.asked = append(m.asked, query+"|"+project)
	if m.cut {
		return apitype.TeamSearchReply{Unreachable: "cluster unreachable (last contact 3m ago)",
			Local: []apitype.Hit{{ID: "01LOCALHIT000000000000000", Kind: "observation", Project: "billing-api", Title: "retry invoices locally"}}}, nil
	}
	return apitype.TeamSearchReply{Hits: []apitype.TeamHit{{ID: "01TEAMHIT0000000000000000", Project: "billing-api", Type: "decision",
		Title: "retry invoices with idempotency keys", Author: "alice/laptop", CreatedAt: 1790000000000}}}, nil
}

// TestSearchTeamFlagAsksTheTeamCluster: search(team=true) goes to the team searcher and shows
// each hit's author; without team it stays local; a server without team memory says so.
func TestSearchTeamFlagAsksTheTeamCluster(t *testing.T) {
	tm := &teamMemory{}
	cs := sessionWith(t, func(m mcpserver.Memory) mcpserver.Memory { tm.Memory = m; return tm })
	out, isErr := call(t, cs, "search", map[string]any{"query": "idempotency", "project": "billing-api", "team": true})
	if isErr || !strings.Contains(out, "@alice/laptop") || !strings.Contains(out, "01TEAMHIT0000000000000000") {
		t.Fatalf("team search: %v %q", isErr, out)
	}
	if len(tm.asked) != 1 || tm.asked[0] != "idempotency|billing-api" {
		t.Fatalf("team searcher asked %v", tm.asked)
	}
	if out, _ := call(t, cs, "search", map[string]any{"query": "idempotency"}); strings.Contains(out, "@alice/laptop") || len(tm.asked) != 1 {
		t.Fatalf("search without team reached the team cluster: %q", out)
	}
	// Cut off from the cluster: the agent hears why, and gets this device's results, not a
	// "no matching records" that reads as the team having none.
	tm.cut = true
	out, isErr = call(t, cs, "search", map[string]any{"query": "invoices", "team": true})
	if isErr || !strings.Contains(out, "cluster unreachable (last contact 3m ago)") || !strings.Contains(out, "retry invoices locally") ||
		strings.Contains(out, "No matching records on the team cluster") {
		t.Fatalf("team search cut off: %v %q", isErr, out)
	}
	plain := session(t)
	if out, isErr := call(t, plain, "search", map[string]any{"query": "x", "team": true}); !isErr || !strings.Contains(out, "team memory is not available") {
		t.Fatalf("no team memory: %v %q", isErr, out)
	}
}
