package search

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/memnode/memnode/api/apitype"
)

// Ranking by relevance (see doc.go): the informative terms of the text are OR-ed and every
// record matching one of them is weighed by bm25, so a rare word outweighs common ones and
// a record need not hold every word; then a record gains a share of its session
// neighbours' relevance, and time breaks ties.
const (
	// rankDepth is how many best bm25 matches per kind are re-ranked with their context.
	rankDepth = 100
	// identWeight is how many times an identifier term counts in bm25 (a query-term
	// frequency): an error code, a function name or a path outweighs the prose around it.
	identWeight = 3
	// synonymWeight is the weight of a developer-vocabulary equivalent (vocabulary.go)
	// against the query's own words, which then count twice: "upstream" asked, "backend"
	// found at half the weight.
	synonymWeight = 0.5
	// contextWeight is the share of the best neighbour's relevance a record gains: the
	// record before or after it in its session often holds the question while it holds
	// the answer ("What did you research?" / "Adoption agencies."). Only observations
	// have sessions of many records; summaries and prompts gain nothing in practice.
	contextWeight = 0.3
)

// ranked prepares e for ranking: the OR of its informative terms.
func ranked(e Expr, counts map[string]int) *ftsQuery {
	terms := e.Informative()
	fq := &ftsQuery{match: strings.Join(terms, " OR "), terms: terms, words: e.words, any: true,
		lastBoth: e.lastBoth, lastPlain: e.lastPlain, counts: counts, syn: e.syn}
	for _, t := range terms {
		if e.Identifier(t) {
			if fq.ident == nil {
				fq.ident = map[string]bool{}
			}
			fq.ident[t] = true
			if t == e.lastBoth {
				fq.ident[e.lastPlain] = true
			}
		}
	}
	return fq
}

// weight is how many times t counts in the bm25 OR: identWeight for an identifier, and
// when the query has vocabulary equivalents, its own words count 1/synonymWeight times as
// much as an equivalent.
func (fq *ftsQuery) weight(t string) int {
	w := 1
	if fq.ident[t] {
		w = identWeight
	}
	if len(fq.syn) > 0 {
		if fq.syn[t] {
			return 1
		}
		w *= int(1 / synonymWeight)
	}
	return w
}

// collectRanked ranks every kind q asks for and merges the hits by score.
func (s *Searcher) collectRanked(ctx context.Context, q *Query, fq *ftsQuery, n int) ([]apitype.Hit, error) {
	var all []apitype.Hit
	for _, k := range q.kinds() {
		hits, err := s.rankKind(ctx, k, q, fq, n)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", k, err)
		}
		all = append(all, hits...)
	}
	sortHits(all, OrderRelevance, true)
	if len(q.kinds()) > 1 {
		all = observationsFirst(all)
	}
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

// summaryEvery is how many ranked places one summary or prompt may take at most: none of
// the first five, one in each later block of five (see observationsFirst).
const summaryEvery = 5

// observationsFirst keeps summaries and prompts from crowding the observations out of an
// all-kinds ranking (the default of `memnode search` and of MCP's search): a session's
// summary repeats what its observations say in other words, so on a coding history bm25
// put it above them in most top fives. A summary or prompt whose session has an
// observation among the hits moves behind every observation (the observation is the
// record to read; the summary is one timeline away); the others take no place in the top
// summaryEvery and at most one in each later block of summaryEvery; what is held back
// follows, in score order. When observations run short, summaries and prompts fill in.
func observationsFirst(hits []apitype.Hit) []apitype.Hit {
	covered := map[string]bool{}
	for _, h := range hits {
		if h.Kind == apitype.KindObservation && h.SessionID != "" {
			covered[h.SessionID] = true
		}
	}
	out := make([]apitype.Hit, 0, len(hits))
	var held []apitype.Hit
	others := 0
	for _, h := range hits {
		switch {
		case h.Kind == apitype.KindObservation:
			out = append(out, h)
		case !covered[h.SessionID] && others < len(out)/summaryEvery:
			out = append(out, h)
			others++
		default:
			held = append(held, h)
		}
	}
	return append(out, held...)
}

// rankKind returns the n most relevant records of one kind.
func (s *Searcher) rankKind(ctx context.Context, kind string, q *Query, fq *ftsQuery, n int) ([]apitype.Hit, error) {
	terms, _, err := s.typedTerms(ctx, kind, fq)
	if err != nil {
		return nil, err
	}
	// A term found in more than rareLimit rows carries almost no information (its IDF is
	// near zero) yet would make bm25 weigh its whole doclist: it is left out of the OR
	// when a rarer term is there, and alone it only selects the newest matches.
	var found, rare []string
	for _, t := range terms {
		c, err := s.count(ctx, kind, fq, t)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			continue
		}
		found = append(found, t)
		if c <= s.rareLimit {
			for range fq.weight(t) {
				rare = append(rare, t)
			}
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	if len(rare) == 0 {
		return s.recent(ctx, kind, q, strings.Join(found, " OR "), fq.words, max(s.window, n), n)
	}
	best, err := s.idx.BestMatches(ctx, kind, strings.Join(rare, " OR "), filter(q), max(n, rankDepth))
	if err != nil {
		return nil, err
	}
	var out []apitype.Hit
	var rids []int64
	rel := map[int64]float64{} // arrival position → relevance (bm25 negated: higher is better)
	session := map[int64]string{}
	for _, b := range best {
		h := hit(kind, b)
		rel[b.Pos], session[b.Pos] = -h.Score, h.SessionID
		out, rids = append(out, h), append(rids, b.Pos)
	}
	// Session context among the candidates: the neighbours are the records stored just
	// before and after (rowid ± 1) in the same session — a session's records arrive in
	// order, so this finds them without a lookup; a neighbour that is not a candidate
	// matched little or nothing and adds nothing.
	for i, rid := range rids {
		lift := 0.0
		for _, n := range []int64{rid - 1, rid + 1} {
			if r, ok := rel[n]; ok && session[n] == session[rid] {
				lift = max(lift, r)
			}
		}
		out[i].Score = -(rel[rid] + contextWeight*lift)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		if a.Time != b.Time {
			return a.Time > b.Time
		}
		return a.ID > b.ID
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
