package search

import (
	"context"
	"fmt"

	"github.com/memnode/memnode/api/apitype"
)

// Get returns full records by ID (observations, summaries or prompts), in the order asked.
func (v *Service) Get(ctx context.Context, ids []string) (apitype.Records, error) {
	if len(ids) == 0 {
		return apitype.Records{}, fmt.Errorf("%w: at least one ID is required", ErrInvalid)
	}
	if len(ids) > apitype.MaxGet {
		return apitype.Records{}, fmt.Errorf("%w: at most %d IDs per request", ErrInvalid, apitype.MaxGet)
	}
	out := apitype.Records{Items: []apitype.Item{}}
	seen := map[string]bool{}
	for _, ref := range ids {
		id, err := v.resolveRef(ctx, ref)
		if err != nil {
			return apitype.Records{}, fmt.Errorf("get %s: %w", ref, err)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		rec, ok, err := v.store.Lookup(ctx, id)
		if err != nil {
			return apitype.Records{}, fmt.Errorf("get %s: %w", id, err)
		}
		if !ok {
			out.Missing = append(out.Missing, ref)
			continue
		}
		out.Items = append(out.Items, apitype.Item{Kind: rec.Kind, Device: rec.Device, Observation: rec.Observation,
			Summary: rec.Summary, Prompt: rec.Prompt})
	}
	var obs []string
	for _, it := range out.Items {
		if it.Observation != nil {
			obs = append(obs, it.Observation.ID)
		}
	}
	links, err := v.links(ctx, obs)
	if err != nil {
		return apitype.Records{}, fmt.Errorf("get: %w", err)
	}
	for i, it := range out.Items {
		if it.Observation != nil {
			out.Items[i].Links = links[it.Observation.ID]
		}
	}
	if err := v.decorateItems(ctx, out.Items); err != nil {
		return apitype.Records{}, fmt.Errorf("get: %w", err)
	}
	return out, nil
}

// decorateItems sets what a hit carries beyond its row on full records too: the short ID
// (the form the index, the context and the viewer show) and the coding agent of the
// record's session.
func (v *Service) decorateItems(ctx context.Context, items []apitype.Item) error {
	ids := make([]string, 0, len(items))
	sessions := make([]string, 0, len(items))
	for _, it := range items {
		id, session := it.IDs()
		ids, sessions = append(ids, id), append(sessions, session)
	}
	short, err := v.store.ShortIDs(ctx, ids)
	if err != nil {
		return err
	}
	platforms, err := v.store.SessionPlatforms(ctx, sessions)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Short, items[i].Platform = short[ids[i]], platforms[sessions[i]]
	}
	return nil
}
