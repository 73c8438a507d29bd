package recall

import (
	"context"
	"fmt"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// importChunk is how many observations one replica import transaction carries.
const importChunk = 2000

// DocObservation is how a document is stored: one observation of the document's
// project whose narrative is the text; its title is the text's start, as for a note
// saved without a title (memnode save).
func DocObservation(set string, d Doc) memory.Observation {
	return memory.Observation{
		ID:        store.ImportID(d.Time, set+":"+d.Project+":"+d.ID),
		SessionID: set + ":" + d.Project,
		Project:   d.Project,
		Type:      "note",
		Title:     apitype.Clip(d.Text, 80),
		Narrative: d.Text,
		ToolName:  "recall",
		CreatedAt: d.Time,
	}
}

// Importer is the store ImportDocs writes to (the replica).
type Importer interface {
	Import(ctx context.Context, b *store.ImportBatch) (store.ImportResult, error)
}

// ImportDocs stores every document of set in rep as one observation (DocObservation) and
// returns the map from observation ID to document ID.
func ImportDocs(ctx context.Context, rep Importer, set *Set) (map[string]string, error) {
	ids := make(map[string]string, len(set.Docs))
	if set.Records != nil {
		for _, d := range set.Docs {
			ids[d.ID] = d.ID
		}
		if _, err := rep.Import(ctx, importer.Batch(set.Records)); err != nil {
			return nil, fmt.Errorf("import %s: %w", set.Name, err)
		}
		return ids, nil
	}
	obs := make([]memory.Observation, 0, len(set.Docs))
	for _, d := range set.Docs {
		o := DocObservation(set.Name, d)
		ids[o.ID] = d.ID
		obs = append(obs, o)
	}
	for i := 0; i < len(obs); i += importChunk {
		if _, err := rep.Import(ctx, &store.ImportBatch{Observations: obs[i:min(i+importChunk, len(obs))]}); err != nil {
			return nil, fmt.Errorf("import %s: %w", set.Name, err)
		}
	}
	return ids, nil
}

// Memnode asks memnode's own search, as `memnode search --type observations --limit k
// --project P [--mode M]` does.
type Memnode struct {
	s    *search.Searcher
	mode string
	typ  string // search.TypeObservations unless WithType says otherwise
	// ids maps observation IDs to document IDs; nil means they are the same.
	ids map[string]string
}

// NewMemnode returns an Engine over s in ranking mode (search.ModeFTS, ModeVector or
// ModeHybrid).
func NewMemnode(s *search.Searcher, mode string, ids map[string]string) *Memnode {
	return &Memnode{s: s, mode: mode, typ: search.TypeObservations, ids: ids}
}

// WithType makes m search the records of type t (search.TypeAll is what `memnode search`
// and MCP's search ask by default): a hit on a summary or prompt is no evidence, so it
// takes a place in the ranking and scores nothing.
func (m *Memnode) WithType(t string) *Memnode {
	c := *m
	c.typ = t
	return &c
}

// Search implements Engine.
func (m *Memnode) Search(ctx context.Context, project, question string, k int) ([]string, error) {
	res, err := m.s.Search(ctx, search.Query{Text: question, Project: project, Type: m.typ, Limit: k, Mode: m.mode})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		id := h.ID
		if doc, ok := m.ids[h.ID]; ok {
			id = doc
		}
		out = append(out, id)
	}
	return out, nil
}

// Vectors is an in-memory vector side for search.Searcher: every observation of a set
// embedded once by an embed.Embedder.
type Vectors struct {
	emb embed.Embedder
	idx *embed.Index
}

var _ search.Vectors = (*Vectors)(nil)

// embedChunk is how many texts one Embed call carries.
const embedChunk = 64

// EmbedDocs embeds every document of set (keyed by its observation ID, as ImportDocs
// stores it) with emb.
func EmbedDocs(ctx context.Context, emb embed.Embedder, set *Set) (*Vectors, error) {
	v := &Vectors{emb: emb, idx: embed.NewIndex(emb.Dim())}
	for i := 0; i < len(set.Docs); i += embedChunk {
		docs := set.Docs[i:min(i+embedChunk, len(set.Docs))]
		texts := make([]string, len(docs))
		for j, d := range docs {
			texts[j] = d.Text
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embed %s: %w", set.Name, err)
		}
		for j, d := range docs {
			if err := v.idx.Add(set.observationID(d), vecs[j]); err != nil {
				return nil, fmt.Errorf("embed %s: %w", set.Name, err)
			}
		}
	}
	return v, nil
}

// observationID is the ID of the observation ImportDocs stores for d.
func (s *Set) observationID(d Doc) string {
	if s.Records != nil {
		return d.ID
	}
	return DocObservation(s.Name, d).ID
}

// Nearest implements search.Vectors.
func (v *Vectors) Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error) {
	q, err := v.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v.idx.Search(q[0], k), nil
}

// Len implements search.Vectors.
func (v *Vectors) Len() int { return v.idx.Len() }
