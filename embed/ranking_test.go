package embed

import (
	"context"
	"math"
	"sort"
	"testing"
)

// The ranking test pairs the deterministic hashing embedder (standing in for a
// semantic model) with a small in-test BM25 keyword ranker standing in for SQLite FTS5:
// the embed package owns no SQLite, and the lead wires real FTS5 bm25() into the fusion
// later. Queries come in two kinds built to break one side each:
//   - synonym queries use only words absent from the corpus; the synonym table maps
//     them onto the relevant document's words, so only the vector side can find it;
//   - identifier queries name a rare identifier next to a common word; the common word
//     dominates the vector similarity of many short documents (as an opaque identifier
//     barely moves a real sentence embedding), while BM25's IDF puts the rare
//     identifier first.

var rankingSynonyms = map[string]string{
	"authentication": "login", "signin": "login",
	"defect": "bug", "glitch": "bug",
	"datastore": "database", "sluggish": "latency",
	"purge": "delete", "preferences": "config",
	"daemon": "worker", "stalled": "stuck",
}

var rankingCorpus = map[string]string{
	"obs-01": "fixed login bug where the session cookie expired early",
	"obs-02": "added dark mode toggle to the web viewer",
	"obs-03": "database latency spikes during nightly vacuum",
	"obs-04": "delete stale config entries at startup",
	"obs-05": "background worker stuck on a closed channel",
	"obs-06": "error when hook exits non zero",
	"obs-07": "error in sync handshake",
	"obs-08": "error parsing transcript line",
	"obs-09": "error writing the pid file",
	"obs-10": "error loading the settings file",
	"obs-11": "error from provider on large prompts",
	"obs-12": "the replica refused peers after ERR_CONN_RESET_4471 appeared in the libp2p stream logs today",
	"obs-13": "renamed parseHookPayload so stdin decoding lives beside the schema and its tests",
	"obs-14": "memory grows in compression",
	"obs-15": "memory profile shows a leak",
	"obs-16": "memory limit for the worker pool",
	"obs-17": "memory use of the search index",
	"obs-18": "memory pressure slows the replica",
	"obs-19": "memory snapshot saved to disk",
	"obs-20": "the allocator returned region 0x7f3a9c twice which corrupted one cached observation payload",
	"obs-21": "hook timeout raised to sixty seconds",
	"obs-22": "hook output trimmed before storage",
	"obs-23": "hook retries on busy database",
	"obs-24": "hook logs go to stderr only",
	"obs-25": "hook install writes settings json",
	"obs-26": "hook runs in a fresh process",
	"obs-27": "gossip membership converges in three rounds",
	"obs-28": "tags stripped before the summary prompt",
	"obs-29": "vector blobs stored as little endian floats",
	"obs-30": "search results merged by reciprocal rank fusion",
}

type rankingQuery struct {
	kind, text, want string
}

var rankingQueries = []rankingQuery{
	{"synonym", "authentication defect", "obs-01"},
	{"synonym", "sluggish datastore", "obs-03"},
	{"synonym", "purge preferences", "obs-04"},
	{"synonym", "daemon stalled", "obs-05"},
	{"identifier", "ERR_CONN_RESET_4471 error", "obs-12"},
	{"identifier", "parseHookPayload hook", "obs-13"},
	{"identifier", "0x7f3a9c memory", "obs-20"},
}

// bm25 is the FTS stand-in: Okapi BM25 (k1 1.2, b 0.75, FTS5's defaults) over the same
// word split as the hashing embedder, OR semantics, only documents matching a term.
type bm25 struct {
	docs  map[string][]string
	df    map[string]int
	avgdl float64
}

func newBM25(corpus map[string]string) *bm25 {
	b := &bm25{docs: map[string][]string{}, df: map[string]int{}}
	total := 0
	for id, text := range corpus {
		ws := words(text)
		b.docs[id] = ws
		total += len(ws)
		seen := map[string]bool{}
		for _, w := range ws {
			if !seen[w] {
				seen[w] = true
				b.df[w]++
			}
		}
	}
	b.avgdl = float64(total) / float64(len(corpus))
	return b
}

func (b *bm25) search(q string, k int) []string {
	const k1, bb = 1.2, 0.75
	n := float64(len(b.docs))
	scores := map[string]float64{}
	for _, term := range words(q) {
		df := float64(b.df[term])
		if df == 0 {
			continue
		}
		idf := math.Log((n-df+0.5)/(df+0.5) + 1)
		for id, ws := range b.docs {
			tf := 0.0
			for _, w := range ws {
				if w == term {
					tf++
				}
			}
			if tf > 0 {
				scores[id] += idf * tf * (k1 + 1) / (tf + k1*(1-bb+bb*float64(len(ws))/b.avgdl))
			}
		}
	}
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids[:min(k, len(ids))]
}

func rankOf(list []string, id string) int {
	for i, x := range list {
		if x == id {
			return i + 1
		}
	}
	return 0
}

func TestHybridFusionBeatsEachSide(t *testing.T) {
	const depth, cutoff = 20, 5
	ctx := context.Background()
	emb := NewHashing(512, rankingSynonyms)
	idx := NewIndex(emb.Dim())
	for id, text := range rankingCorpus {
		v, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(id, v[0]); err != nil {
			t.Fatal(err)
		}
	}
	kw := newBM25(rankingCorpus)

	type metrics struct{ hits, rr float64 }
	var keyword, vector, fused metrics
	score := func(m *metrics, rank int) {
		if rank > 0 && rank <= cutoff {
			m.hits++
		}
		if rank > 0 {
			m.rr += 1 / float64(rank)
		}
	}
	for _, q := range rankingQueries {
		kl := kw.search(q.text, depth)
		qv, err := emb.Embed(ctx, []string{q.text})
		if err != nil {
			t.Fatal(err)
		}
		var vl []string
		for _, s := range idx.Search(qv[0], depth) {
			if s.Score > 0 { // a kNN list only holds vectors that share something
				vl = append(vl, s.ID)
			}
		}
		var fl []string
		for _, s := range FuseRRF([][]string{kl, vl}, DefaultRRFK) {
			fl = append(fl, s.ID)
		}
		rk, rv, rf := rankOf(kl, q.want), rankOf(vl, q.want), rankOf(fl, q.want)
		t.Logf("%-10s %-28q keyword %2d vector %2d fused %2d", q.kind, q.text, rk, rv, rf)

		// The premise of each query kind, so a corpus edit cannot silently void the test.
		switch q.kind {
		case "synonym":
			if rk != 0 {
				t.Errorf("%q: keyword side found the synonym target at %d", q.text, rk)
			}
		case "identifier":
			if rv >= 1 && rv <= cutoff {
				t.Errorf("%q: vector side found the identifier target at %d", q.text, rv)
			}
		}
		if rf < 1 || rf > cutoff {
			t.Errorf("%q: fused rank %d, want within top %d", q.text, rf, cutoff)
		}
		score(&keyword, rk)
		score(&vector, rv)
		score(&fused, rf)
	}
	n := float64(len(rankingQueries))
	t.Logf("recall@%d keyword %.2f vector %.2f fused %.2f", cutoff, keyword.hits/n, vector.hits/n, fused.hits/n)
	t.Logf("MRR keyword %.3f vector %.3f fused %.3f", keyword.rr/n, vector.rr/n, fused.rr/n)
	if !(fused.hits > keyword.hits && fused.hits > vector.hits) {
		t.Errorf("recall@%d: fused %.0f not above keyword %.0f and vector %.0f", cutoff, fused.hits, keyword.hits, vector.hits)
	}
	// Fused MRR wins by less than recall: RRF with k=60 lets documents found by both
	// sides (the short "error" notes) outrank one that tops only the keyword list.
	if !(fused.rr > keyword.rr && fused.rr > vector.rr) {
		t.Errorf("MRR: fused %.3f not above keyword %.3f and vector %.3f", fused.rr/n, keyword.rr/n, vector.rr/n)
	}
}
