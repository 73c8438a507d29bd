package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

const promptColumns = "id, session_id, project, prompt_number, text, created_at, origin, hlc"

// Get returns full records by ID (observations, summaries or prompts), in the order asked.
func (s *Searcher) Get(ctx context.Context, ids []string) (apitype.Records, error) {
	if len(ids) == 0 {
		return apitype.Records{}, fmt.Errorf("%w: at least one ID is required", ErrInvalid)
	}
	if len(ids) > apitype.MaxGet {
		return apitype.Records{}, fmt.Errorf("%w: at most %d IDs per request", ErrInvalid, apitype.MaxGet)
	}
	out := apitype.Records{Items: []apitype.Item{}}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		it, err := s.getOne(ctx, id)
		if err != nil {
			return apitype.Records{}, fmt.Errorf("get %s: %w", id, err)
		}
		if it == nil {
			out.Missing = append(out.Missing, id)
			continue
		}
		out.Items = append(out.Items, *it)
	}
	return out, nil
}

func (s *Searcher) getOne(ctx context.Context, id string) (*apitype.Item, error) {
	o, err := replica.ScanObservation(s.db.QueryRowContext(ctx, "SELECT "+replica.ObservationColumns+" FROM observations WHERE id = ?", id))
	if err == nil {
		return &apitype.Item{Kind: apitype.KindObservation, Observation: &o, Device: s.deviceName(ctx, o.Origin)}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	sm, err := replica.ScanSummary(s.db.QueryRowContext(ctx, "SELECT "+replica.SummaryColumns+" FROM summaries WHERE id = ?", id))
	if err == nil {
		return &apitype.Item{Kind: apitype.KindSummary, Summary: &sm, Device: s.deviceName(ctx, sm.Origin)}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	var p memory.Prompt
	var hlc int64
	err = s.db.QueryRowContext(ctx, "SELECT "+promptColumns+" FROM prompts WHERE id = ?", id).
		Scan(&p.ID, &p.SessionID, &p.Project, &p.PromptNumber, &p.Text, &p.CreatedAt, &p.Origin, &hlc)
	if err == nil {
		p.HLC = uint64(hlc)
		return &apitype.Item{Kind: apitype.KindPrompt, Prompt: &p, Device: s.deviceName(ctx, p.Origin)}, nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return nil, err
}

func (s *Searcher) deviceName(ctx context.Context, origin string) string {
	var name string
	_ = s.db.QueryRowContext(ctx, "SELECT name FROM devices WHERE origin = ?", origin).Scan(&name)
	return name
}
