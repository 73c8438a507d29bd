package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memnode/memnode/store"
)

// entry is one record as the index reads see it.
type entry struct {
	hit   store.IndexHit
	pos   int64
	words []string // every indexed field's tokens, in order
	files []string // observations only
}

// entries returns the stored records of kind; an unknown kind is an error.
func (s *Store) entries(kind string) ([]entry, error) {
	var out []entry
	add := func(h store.IndexHit, pos int64, files []string, fields ...string) {
		h.Device = s.devices[h.Origin].Name
		out = append(out, entry{hit: h, pos: pos, words: tokens(strings.Join(fields, "\n")), files: files})
	}
	switch kind {
	case store.OpObservation:
		for _, r := range s.obs {
			o := r.rec
			add(store.IndexHit{ID: o.ID, Time: o.CreatedAt, Type: o.Type, Title: o.Title, Project: o.Project, SessionID: o.SessionID, Origin: o.Origin},
				r.pos, append(slices.Clone(o.FilesRead), o.FilesModified...),
				o.Title, o.Subtitle, o.Narrative, strings.Join(o.Facts, "\n"), strings.Join(o.Concepts, "\n"),
				strings.Join(o.FilesRead, "\n"), strings.Join(o.FilesModified, "\n"))
		}
	case store.OpSummary:
		for _, r := range s.sums {
			m := r.rec
			title := m.Request
			if title == "" {
				title = m.Completed
			}
			if title == "" {
				title = clip(m.Learned, 120)
			}
			add(store.IndexHit{ID: m.ID, Time: m.CreatedAt, Type: "session", Title: title, Project: m.Project, SessionID: m.SessionID, Origin: m.Origin},
				r.pos, nil, m.Request, m.Investigated, m.Learned, m.Completed, m.NextSteps, m.Notes)
		}
	case store.OpPrompt:
		for _, r := range s.prompts {
			p := r.rec
			add(store.IndexHit{ID: p.ID, Time: p.CreatedAt, Type: "prompt", Title: clip(p.Text, 120), Project: p.Project, SessionID: p.SessionID, Origin: p.Origin},
				r.pos, nil, p.Text)
		}
	default:
		return nil, fmt.Errorf("index read: unknown record kind %q", kind)
	}
	return out, nil
}

func clip(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}

// passes reports whether e passes every set field of f (Current is not modelled: this
// store keeps no supersede links).
func (s *Store) passes(kind string, e entry, f store.SearchFilter) bool {
	h := e.hit
	switch {
	case f.Project != "" && h.Project != f.Project,
		f.Since != 0 && h.Time < f.Since,
		f.Until != 0 && h.Time >= f.Until,
		f.Device != "" && h.Origin != f.Device && h.Device != f.Device,
		f.Platform != "" && s.sessions[h.SessionID].Platform != f.Platform:
		return false
	}
	if kind == store.OpObservation && len(f.Types) > 0 && !slices.Contains(f.Types, h.Type) {
		return false
	}
	if f.File != "" {
		want := strings.TrimPrefix(f.File, "./")
		return slices.ContainsFunc(e.files, func(p string) bool { return p == want || strings.HasSuffix(p, "/"+want) })
	}
	return true
}

// term is one query term: a phrase of words, the last a prefix when it ended in *.
type term struct {
	words  []string
	prefix bool
}

// query is an FTS5 expression as this store understands it: groups joined by OR, each an
// AND of terms.
type query [][]term

func parse(expr string) query {
	var q query
	var group []term
	rest := strings.TrimSpace(expr)
	for rest != "" {
		var raw string
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				end = len(rest) - 1
			}
			raw, rest = rest[1:1+end], rest[min(len(rest), 2+end):]
		} else {
			end := strings.IndexAny(rest, " \t\"")
			if end < 0 {
				end = len(rest)
			}
			raw, rest = rest[:end], rest[end:]
			if raw == "OR" {
				if len(group) > 0 {
					q = append(q, group)
				}
				group, rest = nil, strings.TrimSpace(rest)
				continue
			}
			if raw == "AND" {
				rest = strings.TrimSpace(rest)
				continue
			}
		}
		t := term{words: tokens(raw)}
		if strings.HasPrefix(rest, "*") {
			t.prefix, rest = true, rest[1:]
		}
		if len(t.words) > 0 {
			group = append(group, t)
		}
		rest = strings.TrimSpace(rest)
	}
	if len(group) > 0 {
		q = append(q, group)
	}
	return q
}

// count is how often t occurs in words.
func (t term) count(words []string) int {
	n := 0
	for i := 0; i+len(t.words) <= len(words); i++ {
		ok := true
		for j, w := range t.words {
			last := j == len(t.words)-1
			if words[i+j] != w && !(last && t.prefix && strings.HasPrefix(words[i+j], w)) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// score is 0 when words do not match q, else negative: lower is better.
func (q query) score(words []string) float64 {
	best := 0.0
	for _, group := range q {
		sum := 0.0
		for _, t := range group {
			n := t.count(words)
			if n == 0 {
				sum = 0
				break
			}
			sum -= float64(n) / float64(n+1) / (1 + float64(len(words))/100)
		}
		best = min(best, sum)
	}
	return best
}

// matches returns the entries of kind matching match (and also, when set) that pass f,
// scored.
func (s *Store) matches(kind, match, also string, f store.SearchFilter) ([]entry, error) {
	all, err := s.entries(kind)
	if err != nil {
		return nil, err
	}
	q, qa := parse(match), parse(also)
	var out []entry
	for _, e := range all {
		sc := q.score(e.words)
		if sc == 0 || (also != "" && qa.score(e.words) == 0) || !s.passes(kind, e, f) {
			continue
		}
		e.hit.Score = sc
		out = append(out, e)
	}
	return out, nil
}

func hits(es []entry, limit int) []store.IndexHit {
	out := make([]store.IndexHit, 0, min(len(es), max(limit, 0)))
	for _, e := range es[:min(len(es), max(limit, 0))] {
		out = append(out, e.hit)
	}
	return out
}

func byArrival(newest bool) func(a, b entry) int {
	return func(a, b entry) int {
		if newest {
			return int(b.pos - a.pos)
		}
		return int(a.pos - b.pos)
	}
}

func byTime(newest bool) func(a, b entry) int {
	return func(a, b entry) int {
		c := a.hit.Time - b.hit.Time
		if c == 0 {
			c = int64(strings.Compare(a.hit.ID, b.hit.ID))
		}
		if newest {
			c = -c
		}
		return int(max(-1, min(1, c)))
	}
}

// CountMatches counts the records of kind that match, at most max.
func (s *Store) CountMatches(_ context.Context, kind, match string, max int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, err := s.matches(kind, match, "", store.SearchFilter{})
	return min(len(es), max), err
}

// ListRecords lists the records of kind that pass f by creation time.
func (s *Store) ListRecords(_ context.Context, kind string, f store.SearchFilter, oldest bool, limit int) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.entries(kind)
	if err != nil {
		return nil, err
	}
	es := slices.DeleteFunc(all, func(e entry) bool { return !s.passes(kind, e, f) })
	slices.SortFunc(es, byTime(!oldest))
	return hits(es, limit), nil
}

// window returns the q.Window newest (oldest with Order Oldest) matches by arrival.
func (s *Store) window(kind string, q store.WindowQuery) ([]entry, error) {
	es, err := s.matches(kind, q.Match, q.Also, q.Filter)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(es, byArrival(q.Order != store.Oldest))
	return es[:min(len(es), q.Window)], nil
}

// order sorts es best score first (when byScore), then by arrival, newest first unless
// oldest.
func order(es []entry, byScore, oldest bool) {
	slices.SortStableFunc(es, func(a, b entry) int {
		if byScore && a.hit.Score != b.hit.Score {
			if a.hit.Score < b.hit.Score {
				return -1
			}
			return 1
		}
		return byArrival(!oldest)(a, b)
	})
}

// WindowMatches scores and orders a window of the matches.
func (s *Store) WindowMatches(_ context.Context, kind string, q store.WindowQuery) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, err := s.window(kind, q)
	if err != nil {
		return nil, err
	}
	order(es, q.Order == store.ByScore, q.Order == store.Oldest)
	return hits(es, q.Limit), nil
}

// WindowTitles scores a window of the matches by their titles only: -bonus for a title
// holding one of words, 0 otherwise.
func (s *Store) WindowTitles(_ context.Context, kind string, q store.WindowQuery, words []string, bonus float64) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, err := s.window(kind, q)
	if err != nil {
		return nil, err
	}
	for i := range es {
		es[i].hit.Score = 0
		title := tokens(es[i].hit.Title)
		if slices.ContainsFunc(words, func(w string) bool { return slices.Contains(title, strings.ToLower(w)) }) {
			es[i].hit.Score = -bonus
		}
	}
	order(es, true, q.Order == store.Oldest)
	return hits(es, q.Limit), nil
}

// BestMatches returns the best-scored matches with their arrival positions.
func (s *Store) BestMatches(_ context.Context, kind, match string, f store.SearchFilter, limit int) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, err := s.matches(kind, match, "", f)
	if err != nil {
		return nil, err
	}
	order(es, true, false)
	for i := range es {
		es[i].hit.Pos = es[i].pos
	}
	return hits(es, limit), nil
}

// HitsByID returns the records of kind among ids that pass f.
func (s *Store) HitsByID(_ context.Context, kind string, ids []string, f store.SearchFilter) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.entries(kind)
	if err != nil {
		return nil, err
	}
	es := slices.DeleteFunc(all, func(e entry) bool { return !slices.Contains(ids, e.hit.ID) || !s.passes(kind, e, f) })
	slices.SortFunc(es, byTime(true))
	return hits(es, len(es)), nil
}

// RecordsAround returns up to n records of kind that pass f before (or after) the time at
// (and, with id set, the record id at that time), nearest first.
func (s *Store) RecordsAround(_ context.Context, kind string, f store.SearchFilter, at int64, id string, before bool, n int) ([]store.IndexHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.entries(kind)
	if err != nil {
		return nil, err
	}
	es := slices.DeleteFunc(all, func(e entry) bool {
		t, eid := e.hit.Time, e.hit.ID
		var side bool
		if before {
			side = t < at || (t == at && id != "" && eid < id)
		} else {
			side = t > at || (t == at && (id == "" || eid > id))
		}
		return !side || !s.passes(kind, e, f)
	})
	slices.SortFunc(es, byTime(before))
	return hits(es, n), nil
}

// HitByID returns the record of kind whose ID is id.
func (s *Store) HitByID(_ context.Context, kind, id string) (store.IndexHit, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.entries(kind)
	if err != nil {
		return store.IndexHit{}, false, err
	}
	for _, e := range all {
		if e.hit.ID == id {
			return e.hit, true, nil
		}
	}
	return store.IndexHit{}, false, nil
}

// LatestSummaryHit returns the newest summary of a session.
func (s *Store) LatestSummaryHit(_ context.Context, sessionID string) (store.IndexHit, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, _ := s.entries(store.OpSummary)
	es := slices.DeleteFunc(all, func(e entry) bool { return e.hit.SessionID != sessionID })
	if len(es) == 0 {
		return store.IndexHit{}, false, nil
	}
	slices.SortFunc(es, byTime(true))
	return es[0].hit, true, nil
}

// SessionStart returns when a session started.
func (s *Store) SessionStart(_ context.Context, id string) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.sessions[id]
	return x.StartedAt, ok, nil
}
