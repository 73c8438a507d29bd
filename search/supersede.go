package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// Correct stores what is true about a wrong or outdated observation as a new observation
// (type "correction", in the old one's project, naming the same files) that supersedes
// it. Private parts and secrets are removed from the text first.
func (v *Service) Correct(ctx context.Context, c apitype.Correction) (apitype.SupersedeResult, error) {
	text := strings.TrimSpace(privacy.Clean(c.Text))
	if text == "" {
		return apitype.SupersedeResult{}, fmt.Errorf("%w: the correction is empty (after removing private parts): say what is true", ErrInvalid)
	}
	if len(text) > memory.MaxNoteBytes {
		return apitype.SupersedeResult{}, fmt.Errorf("%w: the correction is %d KiB; at most %d KiB", ErrInvalid, (len(text)+1023)>>10, memory.MaxNoteBytes>>10)
	}
	old, err := v.observationRef(ctx, c.ID)
	if err != nil {
		return apitype.SupersedeResult{}, err
	}
	n, err := v.store.Correct(ctx, old.ID, memory.Observation{SessionID: memory.ManualSession(old.Project), Project: old.Project,
		Type: memory.TypeCorrection, Title: apitype.Clip(oneLine(text), 80), Narrative: text,
		FilesRead: old.FilesRead, FilesModified: old.FilesModified, ToolName: "correct_memory", CreatedAt: v.now().UnixMilli()})
	if err != nil {
		return apitype.SupersedeResult{}, supersedeError(err)
	}
	return v.supersedeResult(ctx, old.ID, n.ID)
}

// Supersede marks an observation as replaced by another stored one.
func (v *Service) Supersede(ctx context.Context, req apitype.Supersede) (apitype.SupersedeResult, error) {
	old, err := v.observationRef(ctx, req.Old)
	if err != nil {
		return apitype.SupersedeResult{}, err
	}
	by, err := v.observationRef(ctx, req.New)
	if err != nil {
		return apitype.SupersedeResult{}, err
	}
	if err := v.store.Supersede(ctx, old.ID, by.ID); err != nil {
		return apitype.SupersedeResult{}, supersedeError(err)
	}
	return v.supersedeResult(ctx, old.ID, by.ID)
}

// observationRef resolves ref (an ID, short ID or claude-mem number) to a stored
// observation: ErrInvalid for none given or another kind, ErrNotFound for an unknown or
// forgotten one.
func (v *Service) observationRef(ctx context.Context, ref string) (memory.Observation, error) {
	if strings.TrimSpace(ref) == "" {
		return memory.Observation{}, fmt.Errorf("%w: an observation ID is required", ErrInvalid)
	}
	id, err := v.resolveRef(ctx, ref)
	if err != nil {
		return memory.Observation{}, err
	}
	rec, ok, err := v.store.Lookup(ctx, id)
	if err != nil {
		return memory.Observation{}, err
	}
	if !ok {
		return memory.Observation{}, fmt.Errorf("%w: no observation %s (never stored, or forgotten)", ErrNotFound, strings.TrimSpace(ref))
	}
	if rec.Observation == nil {
		return memory.Observation{}, fmt.Errorf("%w: %s is a %s; only observations can be corrected", ErrInvalid, strings.TrimSpace(ref), rec.Kind)
	}
	return *rec.Observation, nil
}

// supersedeError maps the replica's refusals to the service's sentinels.
func supersedeError(err error) error {
	switch {
	case errors.Is(err, store.ErrUnknownRecord), errors.Is(err, store.ErrForgotten):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, store.ErrSelfSupersede), errors.Is(err, store.ErrSupersededReplacement):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return fmt.Errorf("supersede: %w", err)
}

func (v *Service) supersedeResult(ctx context.Context, old, by string) (apitype.SupersedeResult, error) {
	short, err := v.store.ShortIDs(ctx, []string{old, by})
	if err != nil {
		return apitype.SupersedeResult{}, err
	}
	return apitype.SupersedeResult{Old: old, New: by, OldShort: short[old], NewShort: short[by]}, nil
}

// links returns the corrections of each of ids, as short IDs.
func (v *Service) links(ctx context.Context, ids []string) (map[string]apitype.Links, error) {
	ss, err := v.store.Supersessions(ctx, ids)
	if err != nil || len(ss) == 0 {
		return nil, err
	}
	named := make([]string, 0, 2*len(ss))
	for _, s := range ss {
		named = append(named, s.Old, s.New)
	}
	short, err := v.store.ShortIDs(ctx, named)
	if err != nil {
		return nil, err
	}
	shortOf := func(id string) string {
		if s := short[id]; s != "" {
			return s
		}
		return id
	}
	out := map[string]apitype.Links{}
	for _, s := range ss {
		if slices.Contains(ids, s.Old) {
			l := out[s.Old]
			l.SupersededBy = append(l.SupersededBy, shortOf(s.New))
			out[s.Old] = l
		}
		if slices.Contains(ids, s.New) {
			l := out[s.New]
			l.Corrects = append(l.Corrects, shortOf(s.Old))
			out[s.New] = l
		}
	}
	return out, nil
}
