package search

import (
	"context"
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
		b, err := s.around(ctx, k, &q, tl.AnchorTime, tl.AnchorID, true, tq.Before)
		if err != nil {
			return apitype.Timeline{}, err
		}
		a, err := s.around(ctx, k, &q, tl.AnchorTime, tl.AnchorID, false, tq.After)
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
func (s *Searcher) around(ctx context.Context, kind string, q *Query, at int64, id string, before bool, n int) ([]apitype.Hit, error) {
	if n == 0 {
		return nil, nil
	}
	f := filter(q)
	f.Current = false // a timeline shows what happened, superseded records included
	found, err := s.idx.RecordsAround(ctx, kind, f, at, id, before, n)
	if err != nil {
		return nil, fmt.Errorf("timeline %s: %w", kind, err)
	}
	return toHits(kind, found), nil
}

// resolveAnchor finds the record (or the time) an anchor names.
func (s *Searcher) resolveAnchor(ctx context.Context, a string) (*apitype.Hit, int64, error) {
	for _, k := range []string{apitype.KindObservation, apitype.KindSummary, apitype.KindPrompt} {
		h, ok, err := s.idx.HitByID(ctx, k, a)
		if err != nil {
			return nil, 0, fmt.Errorf("timeline anchor: %w", err)
		}
		if ok {
			anchor := hit(k, h)
			return &anchor, anchor.Time, nil
		}
	}
	if sid, ok := strings.CutPrefix(a, "S"); ok && sid != "" {
		// A session: its newest summary is the anchor, else the moment it started.
		h, ok, err := s.idx.LatestSummaryHit(ctx, sid)
		if err != nil {
			return nil, 0, fmt.Errorf("timeline anchor: %w", err)
		}
		if ok {
			anchor := hit(apitype.KindSummary, h)
			return &anchor, anchor.Time, nil
		}
		started, ok, err := s.idx.SessionStart(ctx, sid)
		if err != nil {
			return nil, 0, fmt.Errorf("timeline anchor: %w", err)
		}
		if ok {
			return nil, started, nil
		}
	}
	if t, ok := apitype.ParseTime(a); ok {
		return nil, t, nil
	}
	return nil, 0, fmt.Errorf("timeline anchor %q (want a record ID, S<session id> or an ISO time): %w", a, ErrNotFound)
}
