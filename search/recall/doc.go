// Package recall measures how well search finds the records a question needs: the LoCoMo
// evidence-retrieval protocol, a coding-memory query set over the project's fixtures, the
// developer questions over the shared coding history (caddy and hono commits), and
// the plain baselines (Okapi BM25, FTS5 OR) the figures are compared with.
//
// A run loads a data set, stores every document as one observation in a real replica,
// asks every question through search.Searcher in its project and scores the ranked IDs
// against the question's evidence: recall@5, recall@10 (share of the evidence in the top
// k, averaged over questions) and MRR (reciprocal rank of the first evidence document).
// The baselines index the very same documents in the same run, so a ranking change is
// always measured against a fixed yardstick. See docs/BENCH.md.
package recall
