package replica

import (
	"context"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestForgetStatementsUseIndexes: every statement a forget runs finds its rows through an
// index — EXPLAIN QUERY PLAN shows no SCAN of a table — so a forget costs what it removes,
// not what the database holds (a full scan of observations or ops is O(n)).
func TestForgetStatementsUseIndexes(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	res, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 1}},
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "p", PromptNumber: 1, Text: "hi", CreatedAt: 1}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "p", Type: "change", Title: "t", CreatedAt: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	queries := append([]string{recordsOfQuery, turnRecordsQuery, recordExistsQuery}, forgetStmts...)
	for _, q := range queries {
		for _, arg := range []string{res.Prompts[0].ID, "s1"} {
			rows, err := r.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, arg)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			for _, d := range plan {
				// The one-row subqueries (a prompt's session, the next prompt's time) and a
				// constant row are scanned; a table never.
				if strings.HasPrefix(d, "SCAN ") && d != "SCAN p" && d != "SCAN nxt" && d != "SCAN CONSTANT ROW" {
					t.Errorf("%s\nscans: %s", q, strings.Join(plan, "; "))
				}
			}
		}
	}
}
