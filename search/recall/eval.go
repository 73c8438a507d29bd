package recall

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// Engine ranks the documents of one project for a question.
type Engine interface {
	// Search returns up to k document IDs of project, best first.
	Search(ctx context.Context, project, question string, k int) ([]string, error)
}

// Depth is how many documents each question asks for: enough for recall@10 and MRR@10.
const Depth = 10

// Score is the average over a group of questions.
type Score struct {
	Questions int
	Recall5   float64 // share of the evidence in the top 5
	Recall10  float64
	MRR       float64 // reciprocal rank of the first evidence document in the top 10
}

// Report is one engine's figures over a set: overall and per question category.
type Report struct {
	Engine     string
	All        Score
	ByCategory map[int]Score
}

type tally struct{ n, r5, r10, mrr float64 }

func (t *tally) add(ranked, evidence []string) {
	t.n++
	t.r5 += recallAt(ranked, evidence, 5)
	t.r10 += recallAt(ranked, evidence, 10)
	for i, id := range ranked[:min(len(ranked), Depth)] {
		if slices.Contains(evidence, id) {
			t.mrr += 1 / float64(i+1)
			break
		}
	}
}

func (t tally) score() Score {
	if t.n == 0 {
		return Score{}
	}
	return Score{Questions: int(t.n), Recall5: t.r5 / t.n, Recall10: t.r10 / t.n, MRR: t.mrr / t.n}
}

// recallAt is |evidence ∩ top k| / |evidence|.
func recallAt(ranked, evidence []string, k int) float64 {
	if len(evidence) == 0 {
		return 0
	}
	hit := 0
	for _, id := range ranked[:min(len(ranked), k)] {
		if slices.Contains(evidence, id) {
			hit++
		}
	}
	return float64(hit) / float64(len(evidence))
}

// Evaluate asks every question of set through e and scores the answers.
func Evaluate(ctx context.Context, name string, set *Set, e Engine) (Report, error) {
	var all tally
	cats := map[int]*tally{}
	for _, q := range set.Questions {
		ranked, err := e.Search(ctx, q.Project, q.Text, Depth)
		if err != nil {
			return Report{}, fmt.Errorf("evaluate %s on %q: %w", name, q.Text, err)
		}
		all.add(ranked, q.Evidence)
		if cats[q.Category] == nil {
			cats[q.Category] = &tally{}
		}
		cats[q.Category].add(ranked, q.Evidence)
	}
	r := Report{Engine: name, All: all.score(), ByCategory: map[int]Score{}}
	for c, t := range cats {
		r.ByCategory[c] = t.score()
	}
	return r, nil
}

// Failures lists the questions whose evidence e misses entirely in the top k, for
// looking at what a ranking gets wrong.
func Failures(ctx context.Context, set *Set, e Engine, k int) ([]Question, error) {
	var out []Question
	for _, q := range set.Questions {
		ranked, err := e.Search(ctx, q.Project, q.Text, k)
		if err != nil {
			return nil, err
		}
		if recallAt(ranked, q.Evidence, k) == 0 {
			out = append(out, q)
		}
	}
	return out, nil
}

// categories returns the categories present in any report, in order (0, no category, is
// left out).
func categories(reports []Report) []int {
	seen := map[int]bool{}
	var out []int
	for _, r := range reports {
		for c := range r.ByCategory {
			if c != 0 && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out
}
