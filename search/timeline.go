package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Timeline defaults and bounds.
const (
	DefaultDepth = 10
	MaxDepth     = 100
)

// ErrNotFound reports an anchor that names nothing.
var ErrNotFound = errors.New("not found")

// TimelineQuery asks for the records around an anchor: a record ID, "S<session id>", an
// RFC 3339 / ISO date(-time), or, when Anchor is empty, the top hit of Query.
type TimelineQuery struct {
	Anchor  string `json:"anchor,omitempty"`
	Query   string `json:"query,omitempty"`
	Before  int    `json:"before,omitempty"`
	After   int    `json:"after,omitempty"`
	Project string `json:"project,omitempty"`
	Device  string `json:"device,omitempty"`
}

// Timeline is observations, prompts and summaries interleaved in time order.
type Timeline struct {
	// AnchorID is the anchor record ("" for a time anchor); AnchorTime its time.
	AnchorID   string `json:"anchor_id,omitempty"`
	AnchorTime int64  `json:"anchor_time"`
	Items      []Hit  `json:"items"`
}

// Timeline returns the records around an anchor.
func (s *Searcher) Timeline(ctx context.Context, tq TimelineQuery) (Timeline, error) {
	if tq.Before == 0 && tq.After == 0 {
		tq.Before, tq.After = DefaultDepth, DefaultDepth
	}
	if tq.Before < 0 || tq.After < 0 || tq.Before > MaxDepth || tq.After > MaxDepth {
		return Timeline{}, fmt.Errorf("%w: before and after must be 0..%d", ErrInvalid, MaxDepth)
	}
	tq.Anchor = strings.TrimSpace(tq.Anchor)
	var anchor *Hit
	var at int64
	switch {
	case tq.Anchor == "" && strings.TrimSpace(tq.Query) == "":
		return Timeline{}, fmt.Errorf("%w: an anchor or a query is required", ErrInvalid)
	case tq.Anchor == "":
		res, err := s.Search(ctx, Query{Text: tq.Query, Project: tq.Project, Device: tq.Device, Limit: 1})
		if err != nil {
			return Timeline{}, err
		}
		if len(res.Hits) == 0 {
			return Timeline{}, fmt.Errorf("timeline: no record matches %q: %w", tq.Query, ErrNotFound)
		}
		anchor = &res.Hits[0]
	default:
		h, t, err := s.resolveAnchor(ctx, tq.Anchor)
		if err != nil {
			return Timeline{}, err
		}
		anchor, at = h, t
	}
	tl := Timeline{AnchorTime: at}
	q := Query{Project: tq.Project, Device: tq.Device}
	if anchor != nil {
		tl.AnchorID, tl.AnchorTime = anchor.ID, anchor.Time
		a := *anchor
		a.Score, a.Anchor = 0, true
		tl.Items = append(tl.Items, a)
	}
	var before, after []Hit
	for _, k := range []string{KindObservation, KindSummary, KindPrompt} {
		b, err := s.around(ctx, kinds[k], &q, tl.AnchorTime, tl.AnchorID, true, tq.Before)
		if err != nil {
			return Timeline{}, err
		}
		a, err := s.around(ctx, kinds[k], &q, tl.AnchorTime, tl.AnchorID, false, tq.After)
		if err != nil {
			return Timeline{}, err
		}
		before, after = append(before, b...), append(after, a...)
	}
	sortHits(before, OrderNewest, false)
	sortHits(after, OrderOldest, false)
	if len(before) > tq.Before {
		before = before[:tq.Before]
	}
	if len(after) > tq.After {
		after = after[:tq.After]
	}
	tl.Items = append(append(before, tl.Items...), after...)
	sortHits(tl.Items, OrderOldest, false)
	return tl, nil
}

// around returns up to n records of one kind strictly before (or after) the point
// (at, id): records order by (time, id), and a time anchor (id "") sits before every
// record of its millisecond.
func (s *Searcher) around(ctx context.Context, k kindSpec, q *Query, at int64, id string, before bool, n int) ([]Hit, error) {
	if n == 0 {
		return nil, nil
	}
	where, args := filters(k, q)
	var cond, order string
	if before {
		cond, order = "(t.created_at < ? OR (t.created_at = ? AND t.id < ?))", "DESC"
	} else {
		cond, order = "(t.created_at > ? OR (t.created_at = ? AND t.id > ?))", "ASC"
	}
	args = append([]any{at, at, id}, args...)
	args = append(args, n)
	query := "SELECT " + k.hitCols() + ", 0 FROM " + k.table + " t LEFT JOIN devices d ON d.origin = t.origin WHERE " + cond + where +
		" ORDER BY t.created_at " + order + ", t.id " + order + " LIMIT ?"
	hits, err := s.scanHits(ctx, k, query, args)
	if err != nil {
		return nil, fmt.Errorf("timeline %s: %w", k.table, err)
	}
	return hits, nil
}

// resolveAnchor finds the record (or the time) an anchor names.
func (s *Searcher) resolveAnchor(ctx context.Context, a string) (*Hit, int64, error) {
	for _, k := range []string{KindObservation, KindSummary, KindPrompt} {
		h, err := s.hitByID(ctx, kinds[k], "t.id = ?", a)
		if err != nil {
			return nil, 0, err
		}
		if h != nil {
			return h, h.Time, nil
		}
	}
	if sid, ok := strings.CutPrefix(a, "S"); ok && sid != "" {
		// A session: its newest summary is the anchor, else the moment it started.
		h, err := s.hitByID(ctx, kinds[KindSummary], "t.session_id = ? ORDER BY t.created_at DESC LIMIT 1", sid)
		if err != nil {
			return nil, 0, err
		}
		if h != nil {
			return h, h.Time, nil
		}
		var started int64
		err = s.db.QueryRowContext(ctx, "SELECT started_at FROM sessions WHERE id = ?", sid).Scan(&started)
		if err == nil {
			return nil, started, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, 0, fmt.Errorf("timeline anchor: %w", err)
		}
	}
	if t, ok := ParseTime(a); ok {
		return nil, t, nil
	}
	return nil, 0, fmt.Errorf("timeline anchor %q (want a record ID, S<session id> or an ISO time): %w", a, ErrNotFound)
}

func (s *Searcher) hitByID(ctx context.Context, k kindSpec, cond string, arg any) (*Hit, error) {
	h := Hit{Kind: k.kind}
	err := s.queryRow(ctx, "SELECT "+k.hitCols()+" FROM "+
		k.table+" t LEFT JOIN devices d ON d.origin = t.origin WHERE "+cond, arg).
		Scan(&h.ID, &h.Time, &h.Type, &h.Title, &h.Project, &h.SessionID, &h.Origin, &h.Device)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("timeline anchor: %w", err)
	}
	h.Title = oneLine(h.Title)
	return &h, nil
}

// timeLayouts are the ISO forms accepted for anchors and --since/--until.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// ParseTimeFilter parses a --since/--until value: epoch milliseconds or what ParseTime takes.
func ParseTimeFilter(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	return ParseTime(s)
}

// ParseTime parses an ISO date or date-time (UTC unless it carries a zone) into epoch ms.
func ParseTime(s string) (int64, bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}
