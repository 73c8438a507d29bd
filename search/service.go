package search

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// Store is what the service needs of the memory store besides full-text queries: record
// lookup, notes, forget, import and export.
type Store interface {
	Lookup(ctx context.Context, id string) (store.Record, bool, error)
	HasSession(ctx context.Context, id string) (bool, error)
	Commit(ctx context.Context, b *store.Batch) (store.CommitResult, error)
	Forget(ctx context.Context, ids []string) (int, error)
	Import(ctx context.Context, b *store.ImportBatch) (store.ImportResult, error)
	ClaudeMemRecord(ctx context.Context, kind string, num int64) (string, bool, error)
	ShortIDs(ctx context.Context, ids []string) (map[string]string, error)
	SessionPlatforms(ctx context.Context, sessionIDs []string) (map[string]string, error)
	ResolveShortID(ctx context.Context, prefix string) (string, bool, error)
	Supersede(ctx context.Context, old, by string) error
	Correct(ctx context.Context, old string, c memory.Observation) (memory.Observation, error)
	Supersessions(ctx context.Context, ids []string) ([]store.Supersession, error)
	Pin(ctx context.Context, id string, pinned bool) (memory.Observation, error)
	importer.ExportReader
}

// Backend is the store a Service runs over: its own reads and writes, and the index reads
// of its Searcher (the node's replica).
type Backend interface {
	Store
	Index
}

// Service is everything the node's search, memory and import/export routes do, over one
// replica: the api.SearchBackend of a node.
type Service struct {
	store Store
	s     *Searcher
	now   func() time.Time
}

// NewService returns a Service over rep.
func NewService(rep Backend, cfg Config) *Service {
	return &Service{store: rep, s: New(rep, cfg), now: time.Now}
}

// Searcher returns the underlying Searcher.
func (v *Service) Searcher() *Searcher { return v.s }

// Search runs a query.
func (v *Service) Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error) {
	res, err := v.s.Search(ctx, Query(q))
	if err != nil {
		return res, err
	}
	return res, v.decorate(ctx, res.Hits)
}

// Timeline returns the records around an anchor.
func (v *Service) Timeline(ctx context.Context, q apitype.TimelineQuery) (apitype.Timeline, error) {
	if q.Anchor != "" {
		a, err := v.resolveRef(ctx, q.Anchor)
		if err != nil {
			return apitype.Timeline{}, err
		}
		q.Anchor = a
	}
	tl, err := v.s.Timeline(ctx, q)
	if err != nil {
		return tl, err
	}
	return tl, v.decorate(ctx, tl.Items)
}

// Forget tombstones records (or whole sessions) and purges their content everywhere.
func (v *Service) Forget(ctx context.Context, ids []string) (apitype.ForgetResult, error) {
	clean := make([]string, 0, len(ids))
	var missing []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		asGiven := id
		// "S<session id>" names a session, as in timeline anchors; otherwise a short ID or
		// a claude-mem number names the record it resolves to (never a guess: an
		// ambiguous short ID is an error).
		known := false
		if sid, ok := strings.CutPrefix(id, "S"); ok && sid != "" {
			var err error
			if known, err = v.store.HasSession(ctx, sid); err != nil {
				return apitype.ForgetResult{}, fmt.Errorf("forget: %w", err)
			}
			if known {
				id = sid
			}
		}
		if !known {
			rid, err := v.resolveRef(ctx, id)
			if err != nil {
				return apitype.ForgetResult{}, fmt.Errorf("forget: %w", err)
			}
			id = rid
			// Unknown IDs are tombstoned too (a record may still arrive from a device), but
			// the user is told which of them named nothing here.
			if _, found, err := v.store.Lookup(ctx, id); err != nil {
				return apitype.ForgetResult{}, fmt.Errorf("forget: %w", err)
			} else if !found {
				missing = append(missing, asGiven)
			}
		}
		clean = append(clean, id)
	}
	if len(clean) == 0 {
		return apitype.ForgetResult{}, fmt.Errorf("%w: at least one ID is required", ErrInvalid)
	}
	if len(clean) > apitype.MaxGet {
		return apitype.ForgetResult{}, fmt.Errorf("%w: at most %d IDs per request", ErrInvalid, apitype.MaxGet)
	}
	n, err := v.store.Forget(ctx, clean)
	if err != nil {
		return apitype.ForgetResult{}, fmt.Errorf("forget: %w", err)
	}
	return apitype.ForgetResult{Requested: len(clean), Found: n, Missing: missing}, nil
}

// SaveNote stores a note as an observation. Private parts and secrets are removed first.
func (v *Service) SaveNote(ctx context.Context, n apitype.Note) (apitype.SaveResult, error) {
	// Every field, not only the text: project and type are stored and synced too.
	text, title := strings.TrimSpace(privacy.Clean(n.Text)), strings.TrimSpace(privacy.Clean(n.Title))
	n.Project = strings.TrimSpace(privacy.Clean(n.Project))
	n.Type = privacy.Clean(n.Type)
	switch n.Scope {
	case "", apitype.ScopeProject:
	case apitype.ScopeGlobal:
		n.Project = memory.GlobalProject
	default:
		return apitype.SaveResult{}, fmt.Errorf("%w: scope is %q or %q, not %q", ErrInvalid, apitype.ScopeProject, apitype.ScopeGlobal, n.Scope)
	}
	if text == "" {
		return apitype.SaveResult{}, fmt.Errorf("%w: the note is empty (after removing private parts)", ErrInvalid)
	}
	if len(text) > memory.MaxNoteBytes {
		return apitype.SaveResult{}, fmt.Errorf("%w: the note is %d KiB; a note holds at most %d KiB (save the gist, or several notes)",
			ErrInvalid, (len(text)+1023)>>10, memory.MaxNoteBytes>>10)
	}
	if len(title) > memory.MaxTitleBytes {
		return apitype.SaveResult{}, fmt.Errorf("%w: the title is %d bytes; at most %d", ErrInvalid, len(title), memory.MaxTitleBytes)
	}
	if n.Project == "" {
		return apitype.SaveResult{}, fmt.Errorf("%w: project is required", ErrInvalid)
	}
	if title == "" {
		title = apitype.Clip(oneLine(text), 80)
	}
	typ := strings.TrimSpace(n.Type)
	if typ == "" {
		typ = "note"
	}
	res, err := v.store.Commit(ctx, &store.Batch{Observations: []memory.Observation{{
		SessionID: memory.ManualSession(n.Project), Project: n.Project, Type: typ, Title: title, Narrative: text,
		ToolName: "save_memory", CreatedAt: v.now().UnixMilli(),
	}}})
	if err != nil {
		return apitype.SaveResult{}, fmt.Errorf("save note: %w", err)
	}
	if len(res.Observations) == 0 {
		return apitype.SaveResult{Duplicate: true}, nil
	}
	id := res.Observations[0].ID
	if n.Pin {
		if _, err := v.store.Pin(ctx, id, true); err != nil {
			return apitype.SaveResult{ID: id}, fmt.Errorf("pin note %s: %w", id, err)
		}
	}
	return apitype.SaveResult{ID: id}, nil
}

// Pin pins or unpins an observation on every device: a pinned one heads every
// session-start context of its project.
func (v *Service) Pin(ctx context.Context, req apitype.Pin) (apitype.PinResult, error) {
	ref, err := v.observationRef(ctx, req.ID)
	if err != nil {
		return apitype.PinResult{}, err
	}
	o, err := v.store.Pin(ctx, ref.ID, req.Pinned)
	if err != nil {
		return apitype.PinResult{}, supersedeError(err)
	}
	short, err := v.store.ShortIDs(ctx, []string{o.ID})
	if err != nil {
		return apitype.PinResult{}, fmt.Errorf("pin: %w", err)
	}
	return apitype.PinResult{ID: o.ID, Short: short[o.ID], Project: o.Project, Title: o.Title, Pinned: req.Pinned}, nil
}

// Export writes the replica (or one project) as memnode JSONL.
func (v *Service) Export(ctx context.Context, w io.Writer, project string) (int, error) {
	return importer.Export(ctx, v.store, w, project, v.now())
}

// Import stores records (from an export or a claude-mem conversion) idempotently.
func (v *Service) Import(ctx context.Context, recs []importer.Record) (apitype.ImportResult, error) {
	res, err := v.store.Import(ctx, importer.Batch(recs))
	return apitype.ImportResult(res), err
}
