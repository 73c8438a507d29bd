package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/memnode/memnode/api/apitype"
)

// Timeline defaults and bounds.
const MaxDepth = 100

// ErrNotFound reports an anchor that names nothing.
var ErrNotFound = errors.New("not found")

// Timeline returns the records around an anchor.
func (s *Searcher) Timeline(ctx context.Context, tq apitype.TimelineQuery) (apitype.Timeline, error) {
	if tq.Before == 0 && tq.After == 0 {
		tq.Before, tq.After = apitype.DefaultDepth, apitype.DefaultDepth
	}
	if tq.Before < 0 || tq.After < 0 || tq.Before > MaxDepth || tq.After > MaxDepth {
		return apitype.Timeline{}, fmt.Errorf("%w: before and after must be 0..%d", ErrInvalid, MaxDepth)
	}
	tq.Anchor = strings.TrimSpace(tq.Anchor)
	// The kind and observation-type filters are search's: one Normalize validates both.
	q := Query{Project: tq.Project, Device: tq.Device, Platform: tq.Platform, Type: tq.Type, ObsTypes: tq.ObsTypes}
	if err := q.Normalize(); err != nil {
		return apitype.Timeline{}, err
	}
	var anchor *apitype.Hit
	var at int64
	switch {
	case tq.Anchor == "" && strings.TrimSpace(tq.Query) == "":
		return apitype.Timeline{}, fmt.Errorf("%w: an anchor or a query is required", ErrInvalid)
	case tq.Anchor == "":
		res, err := s.Search(ctx, Query{Text: tq.Query, Project: tq.Project, Device: tq.Device, Platform: tq.Platform,
			Type: q.Type, ObsTypes: q.ObsTypes, Limit: 1})
		if err != nil {
			return apitype.Timeline{}, err
		}
		if len(res.Hits) == 0 {
			return apitype.Timeline{}, fmt.Errorf("timeline: no record matches %q: %w", tq.Query, ErrNotFound)
		}
		anchor = &res.Hits[0]
	default:
		h, t, err := s.resolveAnchor(ctx, tq.Anchor)
		if err != nil {
			return apitype.Timeline{}, err
		}
		anchor, at = h, t
	}
	tl := apitype.Timeline{AnchorTime: at}
	if anchor != nil {
		tl.AnchorID, tl.AnchorTime = anchor.ID, anchor.Time
		a := *anchor
		a.Score, a.Anchor = 0, true
		tl.Items = append(tl.Items, a)
	}
	var before, after []apitype.Hit
	for _, k := range q.kinds() {
		b, err := s.around(ctx, kinds[k], &q, tl.AnchorTime, tl.AnchorID, true, tq.Before)
		if err != nil {
			return apitype.Timeline{}, err
		}
		a, err := s.around(ctx, kinds[k], &q, tl.AnchorTime, tl.AnchorID, false, tq.After)
		if err != nil {
			return apitype.Timeline{}, err
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
func (s *Searcher) around(ctx context.Context, k kindSpec, q *Query, at int64, id string, before bool, n int) ([]apitype.Hit, error) {
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
func (s *Searcher) resolveAnchor(ctx context.Context, a string) (*apitype.Hit, int64, error) {
	for _, k := range []string{apitype.KindObservation, apitype.KindSummary, apitype.KindPrompt} {
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
		h, err := s.hitByID(ctx, kinds[apitype.KindSummary], "t.session_id = ? ORDER BY t.created_at DESC LIMIT 1", sid)
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
	if t, ok := apitype.ParseTime(a); ok {
		return nil, t, nil
	}
	return nil, 0, fmt.Errorf("timeline anchor %q (want a record ID, S<session id> or an ISO time): %w", a, ErrNotFound)
}

func (s *Searcher) hitByID(ctx context.Context, k kindSpec, cond string, arg any) (*apitype.Hit, error) {
	h := apitype.Hit{Kind: k.kind}
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
