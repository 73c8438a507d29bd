package search

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/store"
)

// resolveRef turns a record reference a caller gave into the ID it names. A number is
// claude-mem's ID of an observation, "S<number>" claude-mem's ID of a session summary
// (agents with claude-mem habits use both; the import kept the map); 4–12 base32
// characters are a short ID (a unique prefix; a shared one is an ErrInvalid error naming
// the candidates). Anything else, and a reference that names nothing, is returned
// unchanged.
func (v *Service) resolveRef(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	kind, digits := store.OpObservation, ref
	if rest, ok := strings.CutPrefix(ref, "S"); ok {
		kind, digits = store.OpSummary, rest
	}
	if num, err := strconv.ParseInt(digits, 10, 64); err == nil && num > 0 && digits[0] != '+' {
		id, ok, err := v.store.ClaudeMemRecord(ctx, kind, num)
		if err != nil {
			return ref, err
		}
		if ok {
			return id, nil
		}
	}
	if !store.IsShortIDForm(ref) {
		return ref, nil
	}
	id, ok, err := v.store.ResolveShortID(ctx, ref)
	if errors.Is(err, store.ErrAmbiguous) {
		return ref, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil || !ok {
		return ref, err
	}
	return id, nil
}

// decorate sets what the index shows of a hit beyond its row: its short ID and the coding
// agent that recorded it.
func (v *Service) decorate(ctx context.Context, hits []apitype.Hit) error {
	if err := v.withShortIDs(ctx, hits); err != nil {
		return err
	}
	sessions := make([]string, len(hits))
	for i, h := range hits {
		sessions[i] = h.SessionID
	}
	platforms, err := v.store.SessionPlatforms(ctx, sessions)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Platform = platforms[hits[i].SessionID]
	}
	var obs []string
	for _, h := range hits {
		if h.Kind == apitype.KindObservation {
			obs = append(obs, h.ID)
		}
	}
	links, err := v.links(ctx, obs)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Links = links[hits[i].ID]
	}
	return nil
}

// withShortIDs sets Short on every hit: the form the index and timeline show.
func (v *Service) withShortIDs(ctx context.Context, hits []apitype.Hit) error {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	short, err := v.store.ShortIDs(ctx, ids)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Short = short[hits[i].ID]
	}
	return nil
}
