package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memnode/memnode/privacy"
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
	// The searchable rows are not signed (any member with write access could write one):
	// each hit is shown as the signed op that created its record says, and one whose op
	// does not verify, or whose author was no member at its position, is left out.
	q := `SELECT r.id, snippet(team_fts, 1, '', '', '…', 16), bm25(team_fts, 4.0, 1.0),
			o.pos, o.origin, o.tseq, o.project, o.kind, o.record_id, o.hlc, o.payload, o.payload_hash, o.author, o.sig
		FROM team_fts JOIN team_records r ON r.rid = team_fts.rowid
		JOIN team_ops o ON o.record_id = r.id AND o.kind = r.kind AND o.payload IS NOT NULL
		WHERE team_fts MATCH ?`
	args := []any{expr.Match()}
	if project != "" {
		q += ` AND o.project = ?`
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
	log := t.roster(ctx)
	var hits []Hit
	seen := map[string]bool{}
	for _, r := range res[0].Values {
		if len(r) != 14 || seen[strOf(r[0])] {
			continue
		}
		ops, err := decodeOps([][]any{r[3:]})
		if err != nil {
			continue
		}
		op := ops[0]
		d, ok := searchText(op.Kind, op.Payload)
		name, refusal := log.member(op.Origin, op.Pos)
		if !ok || refusal != "" || name != op.Author || verify(op) != nil || checkPayload(op) != "" {
			continue
		}
		seen[op.RecordID] = true
		// Shown as a pull would store it: a member writing rows by hand must not show
		// here what its own hooks would have kept out (a snippet cut inside a secret is
		// not in the cleaned text, so the cleaned first line stands in).
		d.Title, d.Body = privacy.Clean(d.Title), privacy.Clean(d.Body)
		snippet := strOf(r[1])
		if !strings.Contains(d.Title+"\n"+d.Body, strings.Trim(strings.ReplaceAll(snippet, "…", ""), " ")) {
			snippet = firstLine(d.Body) // the index's text is not the signed one
		}
		hits = append(hits, Hit{ID: op.RecordID, Project: op.Project, Kind: op.Kind, Type: d.Type, Title: d.Title,
			Snippet: snippet, Author: op.Author, CreatedAt: d.CreatedAt, Score: -floatOf(r[2])})
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
