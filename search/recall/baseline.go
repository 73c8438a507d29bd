package recall

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"unicode"

	_ "github.com/mattn/go-sqlite3" // the plain FTS5 baseline's own database

	"github.com/memnode/memnode/internal/sqliteuri"
)

// Words splits text into lower-case word tokens (runs of letters and digits), the
// tokenisation of the Okapi BM25 baseline: no stemming, no stop words.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

// BM25 is the Okapi BM25 baseline (k1 1.2, b 0.75, Lucene's non-negative IDF) over each
// project's documents, held in memory.
type BM25 struct {
	projects map[string]*bm25Index
}

type bm25Index struct {
	ids    []string
	tf     []map[string]int
	length []int
	avgLen float64
	df     map[string]int
}

// NewBM25 indexes set's documents.
func NewBM25(set *Set) *BM25 {
	b := &BM25{projects: map[string]*bm25Index{}}
	for _, d := range set.Docs {
		x := b.projects[d.Project]
		if x == nil {
			x = &bm25Index{df: map[string]int{}}
			b.projects[d.Project] = x
		}
		tf := map[string]int{}
		words := Words(d.Text)
		for _, w := range words {
			if tf[w] == 0 {
				x.df[w]++
			}
			tf[w]++
		}
		x.ids = append(x.ids, d.ID)
		x.tf = append(x.tf, tf)
		x.length = append(x.length, len(words))
	}
	for _, x := range b.projects {
		total := 0
		for _, l := range x.length {
			total += l
		}
		x.avgLen = float64(total) / float64(max(1, len(x.length)))
	}
	return b
}

// Search implements Engine. Ties keep document order.
func (b *BM25) Search(_ context.Context, project, question string, k int) ([]string, error) {
	const k1, bb = 1.2, 0.75
	x := b.projects[project]
	if x == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	var terms []string
	for _, w := range Words(question) {
		if !seen[w] {
			seen[w] = true
			terms = append(terms, w)
		}
	}
	n := float64(len(x.ids))
	type scored struct {
		i int
		s float64
	}
	var hits []scored
	for i, tf := range x.tf {
		s := 0.0
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log((n-df+0.5)/(df+0.5) + 1)
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*float64(x.length[i])/x.avgLen))
		}
		if s > 0 {
			hits = append(hits, scored{i, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].s > hits[j].s })
	out := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, x.ids[h.i])
	}
	return out, nil
}

// FTS5 is the plain SQLite FTS5 baseline: one table with the porter tokenizer, the
// question's words OR-ed, ranked by bm25().
type FTS5 struct {
	db *sql.DB
}

// NewFTS5 indexes set's documents in a new SQLite database at path.
func NewFTS5(ctx context.Context, path string, set *Set) (*FTS5, error) {
	db, err := sql.Open("sqlite3", sqliteuri.File(path, url.Values{"_journal_mode": {"OFF"}, "_synchronous": {"OFF"}}))
	if err != nil {
		return nil, fmt.Errorf("open fts5 baseline: %w", err)
	}
	db.SetMaxOpenConns(1)
	f := &FTS5{db: db}
	if err := f.load(ctx, set); err != nil {
		db.Close()
		return nil, fmt.Errorf("load fts5 baseline: %w", err)
	}
	return f, nil
}

func (f *FTS5) load(ctx context.Context, set *Set) error {
	if _, err := f.db.ExecContext(ctx, "CREATE VIRTUAL TABLE docs USING fts5(text, project UNINDEXED, id UNINDEXED, tokenize='porter')"); err != nil {
		return err
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, d := range set.Docs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO docs(text, project, id) VALUES (?, ?, ?)", d.Text, d.Project, d.ID); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Search implements Engine.
func (f *FTS5) Search(ctx context.Context, project, question string, k int) ([]string, error) {
	var terms []string
	seen := map[string]bool{}
	for _, w := range Words(question) {
		if !seen[w] {
			seen[w] = true
			terms = append(terms, `"`+w+`"`)
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	rows, err := f.db.QueryContext(ctx, "SELECT id FROM docs WHERE docs MATCH ? AND project = ? ORDER BY bm25(docs) LIMIT ?",
		strings.Join(terms, " OR "), project, k)
	if err != nil {
		return nil, fmt.Errorf("fts5 baseline: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Close closes the baseline's database.
func (f *FTS5) Close() error { return f.db.Close() }
