package embed

import "sort"

// DefaultRRFK is the rank offset from the original RRF paper (Cormack et al., 2009); it
// damps the influence of the very top ranks so one list cannot dominate.
const DefaultRRFK = 60

// FuseRRF merges ranked ID lists (best first) by reciprocal rank fusion: each ID scores
// the sum over lists of 1/(k+rank), rank starting at 1. k <= 0 means DefaultRRFK. A
// duplicate ID within one list counts only at its best rank. The result is sorted by
// score, ties broken by ID.
func FuseRRF(lists [][]string, k int) []Scored {
	if k <= 0 {
		k = DefaultRRFK
	}
	scores := make(map[string]float64)
	for _, list := range lists {
		seen := make(map[string]bool, len(list))
		for rank, id := range list {
			if seen[id] {
				continue
			}
			seen[id] = true
			scores[id] += 1 / float64(k+rank+1)
		}
	}
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	// Sort on the float64 sums so float32 rounding cannot reorder near-ties.
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return ids[i] < ids[j]
	})
	out := make([]Scored, len(ids))
	for i, id := range ids {
		out[i] = Scored{ID: id, Score: float32(scores[id])}
	}
	return out
}
