package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// doc is the searchable text of one shared record on the cluster.
type doc struct {
	Type      string
	Title     string
	Body      string
	CreatedAt int64
}

// searchText builds a record's searchable text from its op payload (prompts, observations,
// summaries; sessions have none).
func searchText(kind string, payload []byte) (doc, bool) {
	var p struct {
		Type         string   `json:"type"`
		Title        string   `json:"title"`
		Subtitle     string   `json:"subtitle"`
		Narrative    string   `json:"narrative"`
		Facts        []string `json:"facts"`
		Concepts     []string `json:"concepts"`
		Text         string   `json:"text"`
		Request      string   `json:"request"`
		Investigated string   `json:"investigated"`
		Learned      string   `json:"learned"`
		Completed    string   `json:"completed"`
		NextSteps    string   `json:"next_steps"`
		Notes        string   `json:"notes"`
		CreatedAt    int64    `json:"created_at"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return doc{}, false
	}
	join := func(parts ...string) string {
		var keep []string
		for _, s := range parts {
			if s = strings.TrimSpace(s); s != "" {
				keep = append(keep, s)
			}
		}
		return strings.Join(keep, "\n")
	}
	switch kind {
	case store.OpObservation:
		return doc{Type: p.Type, Title: p.Title, Body: join(p.Subtitle, p.Narrative, strings.Join(p.Facts, "\n"), strings.Join(p.Concepts, " ")), CreatedAt: p.CreatedAt}, true
	case store.OpPrompt:
		return doc{Type: "prompt", Title: firstLine(p.Text), Body: p.Text, CreatedAt: p.CreatedAt}, true
	case store.OpSummary:
		return doc{Type: "summary", Title: firstLine(p.Request), Body: join(p.Request, p.Investigated, p.Learned, p.Completed, p.NextSteps, p.Notes), CreatedAt: p.CreatedAt}, true
	}
	return doc{}, false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// Hit is one record found on the team cluster.
type Hit struct {
	ID        string  `json:"id"`
	Project   string  `json:"project"`
	Kind      string  `json:"kind"`
	Type      string  `json:"type"`
	Title     string  `json:"title"`
	Snippet   string  `json:"snippet"`
	Author    string  `json:"author"` // "user/device", shown as @user/device
	CreatedAt int64   `json:"created_at"`
	Score     float64 `json:"score"`
}

// Search runs an FTS5 query (any text, made safe by search.Parse) over every record shared
// with the team, pulled here or not; project "" means all projects.
func (t *Team) Search(ctx context.Context, query, project string, limit int) ([]Hit, error) {
	c, err := t.client()
	if err != nil {
		return nil, err
	}
	expr := search.Parse(query)
	if expr.Empty() {
		return nil, nil
	}
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	q := `SELECT r.id, r.project, r.kind, r.type, r.title, snippet(team_fts, 1, '', '', '…', 16), r.author, r.created_at, bm25(team_fts, 4.0, 1.0)
		FROM team_fts JOIN team_records r ON r.rid = team_fts.rowid WHERE team_fts MATCH ?`
	args := []any{expr.Match()}
	if project != "" {
		q += ` AND r.project = ?`
		args = append(args, project)
	}
	q += ` ORDER BY bm25(team_fts, 4.0, 1.0) LIMIT ?`
	args = append(args, limit)
	ctx, cancel := context.WithTimeout(ctx, t.cfg.AnswerWithin) // bounded like status
	defer cancel()
	res, err := c.query(ctx, levelWeak, []stmt{st(q, args...)})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrUnreachable) {
			err = c.unreachable(err)
		}
		return nil, fmt.Errorf("team search: %w", err)
	}
	var hits []Hit
	for _, r := range res[0].Values {
		created, _ := int64Of(r[7])
		score := floatOf(r[8])
		hits = append(hits, Hit{ID: strOf(r[0]), Project: strOf(r[1]), Kind: strOf(r[2]), Type: strOf(r[3]), Title: strOf(r[4]),
			Snippet: strOf(r[5]), Author: strOf(r[6]), CreatedAt: created, Score: -score})
	}
	return hits, nil
}

func floatOf(v any) float64 {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return 0
}
